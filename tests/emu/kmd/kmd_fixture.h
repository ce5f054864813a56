// Helpers for the kmd tests: a Kmd with one open file, typed wrappers that return errno
// (0 on success), BO mapping, command-buffer upload and deadline helpers. No test sleeps:
// every wait is a WAIT ioctl with an absolute deadline.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <time.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "npu/emu/kmd.h"
#include "npu/isa/builder.h"
#include "npu_accel.h"

namespace npu::emu::test {

inline int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

/// Absolute CLOCK_MONOTONIC deadline `ms` milliseconds from now.
inline int64_t deadline_ms(int64_t ms) {
  return now_ns() + ms * 1'000'000;
}

struct BoHandle {
  uint32_t handle = 0;
  uint64_t va = 0;
  uint64_t size = 0;
  uint64_t mmap_offset = 0;
};

/// Wraps one open file of a Kmd.
class Client {
 public:
  Client(Kmd& kmd) : kmd_(kmd), fd_(kmd.open()) {}
  /// A file opened for `who` (the driver's priority policy: Kmd::Opener).
  Client(Kmd& kmd, const Kmd::Opener& who) : kmd_(kmd), fd_(kmd.open(who)) {}
  ~Client() {
    for (auto& [p, len] : maps_) kmd_.munmap(p, len);
    if (fd_ >= 0) kmd_.close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  int fd() const { return fd_; }
  Kmd& kmd() { return kmd_; }

  /// ioctl returning errno (0 on success).
  int io(unsigned long request, void* arg) {
    return kmd_.ioctl(fd_, request, arg) == 0 ? 0 : errno;
  }

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

  BoHandle bo(uint64_t size, uint32_t flags = 0) {
    drm_npu_bo_create c{};
    c.size = size;
    c.flags = flags;
    EXPECT_EQ(io(DRM_IOCTL_NPU_BO_CREATE, &c), 0);
    drm_npu_bo_info i{};
    i.handle = c.handle;
    EXPECT_EQ(io(DRM_IOCTL_NPU_BO_INFO, &i), 0);
    return {c.handle, c.device_addr, i.size, i.mmap_offset};
  }

  /// Maps a BO (unmapped when the client goes away).
  std::byte* map(const BoHandle& b) {
    void* p = kmd_.mmap(nullptr, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                        static_cast<off_t>(b.mmap_offset));
    EXPECT_NE(p, MAP_FAILED) << std::strerror(errno);
    if (p == MAP_FAILED) return nullptr;
    {
      std::lock_guard lk(maps_mu_);  // the stress tests map from several threads on one client
      maps_.push_back({p, b.size});
    }
    return static_cast<std::byte*>(p);
  }

  /// A BO holding `bytes` at offset 0.
  BoHandle upload(std::span<const std::byte> bytes) {
    BoHandle b = bo(bytes.size());
    std::memcpy(map(b), bytes.data(), bytes.size());
    return b;
  }

  /// SUBMIT; returns errno, sets *seqno on success.
  int submit(uint32_t ctx, const BoHandle& cmd, uint64_t cmd_size, std::vector<drm_npu_bo_ref> refs,
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

  /// WAIT with an absolute deadline; returns errno and fills *out.
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
  Kmd& kmd_;
  int fd_;
  std::mutex maps_mu_;
  std::vector<std::pair<void*, size_t>> maps_;
};

inline drm_npu_bo_ref ref(const BoHandle& b, uint32_t access) {
  return {b.handle, access};
}
inline constexpr uint32_t kR = DRM_NPU_ACCESS_READ;
inline constexpr uint32_t kW = DRM_NPU_ACCESS_WRITE;
inline constexpr uint32_t kRW = kR | kW;

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
/// validator rejects such a wait (docs/racecheck.md), so hung jobs are submitted with
/// kHangFlags: unvalidated, the device meets the wait and only the watchdog ends the job.
inline constexpr uint32_t kHangFlags = DRM_NPU_SUBMIT_SKIP_VALIDATION;
inline std::vector<std::byte> hung_job() {
  isa::CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  return b.finish();
}

/// A device config with a short watchdog for the tests that need one.
inline isa::DeviceConfig config_with_watchdog(uint32_t ms) {
  isa::DeviceConfig cfg;
  cfg.watchdog_ms = ms;
  return cfg;
}

}  // namespace npu::emu::test
