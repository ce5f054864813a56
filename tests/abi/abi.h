// The kernel ABI's conformance suite (npu-abi-test): every ioctl of uapi/npu_accel.h, success
// and error paths, through nothing but open(2), ioctl(2), mmap(2) and close(2) on a device
// node — so it runs against any node that claims the ABI: the emulated one under npu-shim
// (in-process or through npu-daemon), or a real kernel driver. Command buffers are built with
// libnpuisa's builder (bytes only; no libnpu).
//
// Tests that need an ABI version or a capability skip, saying which, on a node without it
// (NPU_ABI_REQUIRE). Tests that need a hung job (the watchdog ending it) skip when the node's
// watchdog is longer than kMaxWatchdogMs or it cannot run unvalidated buffers.
//
// Threading: the fixture and helpers belong to one test thread. Lifetime: each test opens its
// own file on the node and closes it at the end.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "npu/isa/builder.h"
#include "npu_accel.h"
#include "npu_isa.h"

namespace npu::abi {

/// The node under test (npu-abi-test --device).
std::string& device_path();

inline constexpr uint32_t kMaxWatchdogMs = 5000;
inline constexpr uint32_t kR = DRM_NPU_ACCESS_READ;
inline constexpr uint32_t kW = DRM_NPU_ACCESS_WRITE;
inline constexpr uint32_t kRW = kR | kW;

int64_t now_ns();
/// Absolute CLOCK_MONOTONIC deadline `ms` from now.
int64_t deadline_ms(int64_t ms);

struct Bo {
  uint32_t handle = 0;
  uint64_t va = 0;
  uint64_t size = 0;
  uint64_t mmap_offset = 0;
};

/// One open file of the node and typed raw-ioctl helpers that return errno (0 on success).
class File {
 public:
  File();
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  int fd() const { return fd_; }
  /// ioctl(2), returning errno (0 on success).
  int io(unsigned long request, void* arg) const;

  uint64_t param(uint32_t p) const;
  Bo bo(uint64_t size, uint32_t flags = 0, uint64_t fixed_va = 0);
  int bo_close(uint32_t handle) const;
  /// A MAP_SHARED read-write mapping of the whole BO (unmapped with the File).
  std::byte* map(const Bo& b);
  Bo upload(std::span<const std::byte> bytes);
  uint32_t ctx(uint32_t priority = DRM_NPU_PRIORITY_NORMAL);
  int submit(uint32_t ctx, const Bo& cmd, uint64_t cmd_size, std::vector<drm_npu_bo_ref> refs,
             uint32_t flags = 0, uint64_t* seqno = nullptr) const;
  /// WAIT; fills *out when given.
  int wait(uint32_t ctx, uint64_t seqno, int64_t deadline, drm_npu_wait* out = nullptr) const;
  drm_npu_context_state ctx_state(uint32_t ctx) const;
  /// QUERY LAST_ERROR as a string.
  std::string last_error() const;

 private:
  int fd_ = -1;
  std::vector<std::pair<void*, size_t>> maps_;
};

inline drm_npu_bo_ref ref(const Bo& b, uint32_t access) {
  return {b.handle, access};
}

/// A command buffer that only ends.
std::vector<std::byte> empty_job();
/// src -> SRAM -> dst, `n` bytes (DMA_IN signals semaphore 0, DMA_OUT waits on it).
std::vector<std::byte> copy_job(uint64_t src, uint64_t dst, uint32_t n);
/// A job only the watchdog ends: DMA_OUT waits on a semaphore nobody signals (submit it with
/// DRM_NPU_SUBMIT_SKIP_VALIDATION).
std::vector<std::byte> hung_job();

/// The node's API version as (major << 16) | minor, and its capabilities (read once).
uint32_t api_version();
uint64_t capabilities();
uint32_t watchdog_ms();

}  // namespace npu::abi

/// Skips the test unless the node speaks API >= major.minor and has every capability bit.
#define NPU_ABI_REQUIRE(major, minor, caps)                                               \
  do {                                                                                    \
    if (::npu::abi::api_version() < ((major) << 16 | (minor))) {                          \
      GTEST_SKIP() << "needs API " << (major) << "." << (minor) << ", the node has "      \
                   << (::npu::abi::api_version() >> 16) << "."                            \
                   << (::npu::abi::api_version() & 0xffff);                               \
    }                                                                                     \
    if ((::npu::abi::capabilities() & (caps)) != (caps)) {                                \
      GTEST_SKIP() << "needs capability bits " << std::hex << (caps) << ", the node has " \
                   << ::npu::abi::capabilities();                                         \
    }                                                                                     \
  } while (0)

/// Skips the test unless a hung job can be submitted and the watchdog ends it soon.
#define NPU_ABI_REQUIRE_HANG()                                                     \
  do {                                                                             \
    NPU_ABI_REQUIRE(1, 0, DRM_NPU_CAP_SKIP_VALIDATION);                            \
    if (::npu::abi::watchdog_ms() == 0 ||                                          \
        ::npu::abi::watchdog_ms() > ::npu::abi::kMaxWatchdogMs) {                  \
      GTEST_SKIP() << "needs a watchdog of at most " << ::npu::abi::kMaxWatchdogMs \
                   << " ms, the node's is " << ::npu::abi::watchdog_ms() << " ms"; \
    }                                                                              \
  } while (0)
