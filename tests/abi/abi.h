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
#include "npu/test/raw_file.h"
#include "npu_accel.h"
#include "npu_isa.h"

namespace npu::abi {

/// The node under test (npu-abi-test --device).
std::string& device_path();

inline constexpr uint32_t kMaxWatchdogMs = 5000;
// The raw-ioctl helpers, deadlines and shared jobs (npu/test/raw_file.h).
using namespace npu::test;  // NOLINT(google-build-using-namespace)
using Bo = npu::test::RawBo;

/// One open file of the node and typed raw-ioctl helpers that return errno (0 on success).
class File : public npu::test::RawFile<File> {
 public:
  File();
  ~File();
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  int fd() const { return fd_; }
  /// ioctl(2), returning errno (0 on success).
  int io(unsigned long request, void* arg) const;

  uint64_t param(uint32_t p) const;
  /// For RawFile::map: mmap(2) of the node, unmapped with the File.
  void* map_pages(uint64_t size, uint64_t offset);
  /// QUERY LAST_ERROR as a string.
  std::string last_error() const;

 private:
  int fd_ = -1;
  std::vector<std::pair<void*, size_t>> maps_;
};

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
