// Raw-ioctl helpers shared by every test that speaks uapi/npu_accel.h directly: the kmd tests
// (a file of an in-process Kmd), the daemon tests (a connection through libnpu's UnixKernel)
// and the ABI suite (a device node through open/ioctl/mmap). The ioctls are the same whatever
// the file is; only how a request reaches the driver and how pages are mapped differ, so a
// fixture derives from RawFile<Self> and supplies those two:
//
//   int io(unsigned long request, void* arg);            // errno, 0 on success
//   void* map_pages(uint64_t size, uint64_t mmap_offset); // mmap(2)'s result (MAP_FAILED)
//
// Every wrapper returns errno (0 on success) or records a gtest failure where a test only
// wants the value. Command buffers the tests share (an empty job, a DMA copy, a hung job) are
// built with libnpuisa's builder. Header-only; no state of its own, so a RawFile is as
// thread-safe as its io() and map_pages().
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "npu/isa/builder.h"
#include "npu_accel.h"
#include "npu_isa.h"

namespace npu::test {

inline constexpr uint32_t kR = DRM_NPU_ACCESS_READ;
inline constexpr uint32_t kW = DRM_NPU_ACCESS_WRITE;
inline constexpr uint32_t kRW = kR | kW;

/// CLOCK_MONOTONIC now, the clock of every deadline in the ABI.
inline int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

/// Absolute CLOCK_MONOTONIC deadline `ms` milliseconds from now.
inline int64_t deadline_ms(int64_t ms) {
  return now_ns() + ms * 1'000'000;
}

/// A BO as BO_CREATE and BO_INFO describe it.
struct RawBo {
  uint32_t handle = 0;
  uint64_t va = 0;
  uint64_t size = 0;
  uint64_t mmap_offset = 0;
};

inline drm_npu_bo_ref ref(const RawBo& b, uint32_t access) {
  return {b.handle, access};
}

/// What a SUBMIT with fences handed back: errno (0 on success), the seqno and the out-fence
/// (-1 without DRM_NPU_SUBMIT_FENCE_OUT).
struct Submitted {
  int err = 0;
  uint64_t seqno = 0;
  int fence = -1;
};

/// Whether fence `fd` (a sync_file-like descriptor, API 1.3) is readable — signalled — within
/// `timeout_ms`.
inline bool fence_readable(int fd, int timeout_ms = 0) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN) != 0;
}

/// The job status byte a signalled fence carries (DRM_NPU_JOB_*), or -1 when none is there.
inline int fence_status(int fd) {
  uint8_t b = 0xff;
  return ::recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1 ? b : -1;
}

template <typename Self>
class RawFile {
 public:
  uint32_t ctx(uint32_t priority = DRM_NPU_PRIORITY_NORMAL) {
    drm_npu_ctx_create c{};
    c.priority = priority;
    EXPECT_EQ(io(DRM_IOCTL_NPU_CTX_CREATE, &c), 0);
    return c.ctx_id;
  }

  int destroy_ctx(uint32_t id) {
    drm_npu_ctx_destroy d{};
    d.ctx_id = id;
    return io(DRM_IOCTL_NPU_CTX_DESTROY, &d);
  }

  RawBo bo(uint64_t size, uint32_t flags = 0, uint64_t fixed_va = 0) {
    drm_npu_bo_create c{};
    c.size = size;
    c.flags = flags;
    c.device_addr = fixed_va;
    EXPECT_EQ(io(DRM_IOCTL_NPU_BO_CREATE, &c), 0) << "BO_CREATE of " << size << " bytes";
    drm_npu_bo_info i{};
    i.handle = c.handle;
    EXPECT_EQ(io(DRM_IOCTL_NPU_BO_INFO, &i), 0);
    return {c.handle, c.device_addr, i.size, i.mmap_offset};
  }

  int bo_close(uint32_t handle) {
    drm_npu_bo_close c{};
    c.handle = handle;
    return io(DRM_IOCTL_NPU_BO_CLOSE, &c);
  }

  /// A MAP_SHARED read-write mapping of the whole BO (the fixture unmaps it when it goes).
  std::byte* map(const RawBo& b) {
    void* p = self().map_pages(b.size, b.mmap_offset);
    EXPECT_NE(p, MAP_FAILED) << "mmap of bo " << b.handle << ": " << std::strerror(errno);
    return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
  }

  /// A BO holding `bytes` at offset 0.
  RawBo upload(std::span<const std::byte> bytes) {
    RawBo b = bo(bytes.size());
    if (std::byte* p = map(b)) std::memcpy(p, bytes.data(), bytes.size());
    return b;
  }

  /// SUBMIT with in-fences `in` (API 1.3) and, with DRM_NPU_SUBMIT_FENCE_OUT in `flags`, an
  /// out-fence; the fence field goes in as garbage, so a driver that leaves it is caught.
  Submitted submit_fenced(uint32_t ctx, const RawBo& cmd, uint64_t cmd_size,
                          std::vector<drm_npu_bo_ref> refs, uint32_t flags,
                          std::vector<int32_t> in = {}) {
    drm_npu_submit s{};
    s.ctx_id = ctx;
    s.flags = flags;
    s.cmd_handle = cmd.handle;
    s.bo_count = static_cast<uint32_t>(refs.size());
    s.cmd_size = cmd_size;
    s.bos = reinterpret_cast<uintptr_t>(refs.data());
    s.in_fences = reinterpret_cast<uintptr_t>(in.data());
    s.in_fence_count = static_cast<uint32_t>(in.size());
    s.fence_fd = 12345;  // overwritten: -1 without FENCE_OUT
    Submitted out;
    out.err = io(DRM_IOCTL_NPU_SUBMIT, &s);
    out.seqno = s.seqno;
    out.fence = s.fence_fd;
    return out;
  }

  /// SUBMIT; sets *seqno on success.
  int submit(uint32_t ctx, const RawBo& cmd, uint64_t cmd_size, std::vector<drm_npu_bo_ref> refs,
             uint32_t flags = 0, uint64_t* seqno = nullptr, uint64_t cmd_offset = 0) {
    drm_npu_submit s{};
    s.ctx_id = ctx;
    s.flags = flags;
    s.cmd_handle = cmd.handle;
    s.bo_count = static_cast<uint32_t>(refs.size());
    s.cmd_offset = cmd_offset;
    s.cmd_size = cmd_size;
    s.bos = reinterpret_cast<uintptr_t>(refs.data());
    const int r = io(DRM_IOCTL_NPU_SUBMIT, &s);
    if (r == 0 && seqno != nullptr) *seqno = s.seqno;
    return r;
  }

  /// WAIT with an absolute deadline; fills *out when given.
  int wait(uint32_t ctx, uint64_t seqno, int64_t deadline, drm_npu_wait* out = nullptr) {
    drm_npu_wait w{};
    w.ctx_id = ctx;
    w.seqno = seqno;
    w.timeout_ns = deadline;
    const int r = io(DRM_IOCTL_NPU_WAIT, &w);
    if (out != nullptr) *out = w;
    return r;
  }

  template <typename T>
  int query(uint32_t type, T* out, uint64_t arg0 = 0, uint64_t arg1 = 0) {
    drm_npu_query q{};
    q.type = type;
    q.size = sizeof(T);
    q.arg0 = arg0;
    q.arg1 = arg1;
    q.data = reinterpret_cast<uintptr_t>(out);
    return io(DRM_IOCTL_NPU_QUERY, &q);
  }

  /// QUERY LAST_ERROR: why the file's last refused call was refused.
  std::string last_error() {
    std::string s(512, '\0');
    drm_npu_query q{};
    q.type = DRM_NPU_QUERY_LAST_ERROR;
    q.size = static_cast<uint32_t>(s.size());
    q.data = reinterpret_cast<uintptr_t>(s.data());
    EXPECT_EQ(io(DRM_IOCTL_NPU_QUERY, &q), 0);
    s.resize(std::strlen(s.c_str()));
    return s;
  }

  drm_npu_context_state ctx_state(uint32_t ctx) {
    drm_npu_context_state s{};
    EXPECT_EQ(query(DRM_NPU_QUERY_CONTEXT_STATE, &s, ctx), 0);
    return s;
  }

 private:
  Self& self() { return static_cast<Self&>(*this); }
  int io(unsigned long request, void* arg) { return self().io(request, arg); }
};

/// A command buffer that only ends.
inline std::vector<std::byte> empty_job() {
  isa::CommandBufferBuilder b;
  return b.finish();
}

/// DRAM src -> SRAM -> DRAM dst, `n` bytes, ordered by semaphore 0 (DMA_IN -> DMA_OUT).
inline std::vector<std::byte> copy_job(uint64_t src, uint64_t dst, uint32_t n) {
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = src, .sram = 0, .elem_size = 1, .size = {n, 1, 1}});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
  b.dma_store({.dram = dst, .sram = 0, .elem_size = 1, .size = {n, 1, 1}});
  return b.finish();
}

/// A job that never ends by itself: DMA_OUT waits on a semaphore nobody signals. The
/// validator rejects such a wait (docs/racecheck.md), so it is submitted with
/// DRM_NPU_SUBMIT_SKIP_VALIDATION: the device meets the wait and only the watchdog ends it.
inline std::vector<std::byte> hung_job() {
  isa::CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  return b.finish();
}

}  // namespace npu::test
