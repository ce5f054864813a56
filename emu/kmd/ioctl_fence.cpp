// FENCE_WAIT (API 1.3): wait for any or all of a set of fences with one absolute deadline.
// The fences' descriptors are this caller's copies of their user ends, which become readable
// when they signal: the wait is a poll() on them.
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cerrno>

#include "driver.h"
#include "log.h"

namespace npu::emu::kmd {

int ioctl_fence_wait(Driver& drv, File& /*file*/, void* data) {
  auto& w = *static_cast<drm_npu_fence_wait*>(data);
  if (w.count == 0 || w.count > DRM_NPU_MAX_IN_FENCES || (w.flags & ~DRM_NPU_FENCE_WAIT_ALL) != 0 ||
      w.pad != 0 || w.timeout_ns < 0) {
    return -EINVAL;
  }
  std::array<int32_t, DRM_NPU_MAX_IN_FENCES> fds{};
  if (const int r = drv.uaccess.copy_from(fds.data(), w.fences, w.count * 4); r < 0) return r;
  std::array<std::shared_ptr<SyncFence>, DRM_NPU_MAX_IN_FENCES> fences;
  for (uint32_t i = 0; i < w.count; ++i) {
    int err = 0;
    fences[i] = drv.fences.find(fds[i], err);
    if (fences[i] == nullptr) return -err;
  }
  const bool all = (w.flags & DRM_NPU_FENCE_WAIT_ALL) != 0;
  for (;;) {
    uint32_t done = 0;
    int64_t first = -1;
    for (uint32_t i = 0; i < w.count; ++i) {
      if (!fences[i]->signalled.load(std::memory_order_acquire)) continue;
      ++done;
      if (first < 0) first = i;
    }
    w.signalled = done;
    if (first >= 0 && (!all || done == w.count)) {
      // ALL: the index of the last one to be seen signalled is not knowable; report the
      // first, whose status is as good as any (each fence's byte tells its own).
      w.first = static_cast<uint32_t>(first);
      w.status = fences[first]->status.load(std::memory_order_relaxed);
      return 0;
    }
    if (w.timeout_ns == 0) return -EBUSY;
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const int64_t now_ns = int64_t{now.tv_sec} * 1'000'000'000 + now.tv_nsec;
    if (now_ns >= w.timeout_ns) return -ETIMEDOUT;
    const int64_t left = w.timeout_ns - now_ns;
    const timespec wait{left / 1'000'000'000, left % 1'000'000'000};
    std::array<pollfd, DRM_NPU_MAX_IN_FENCES> p{};
    nfds_t n = 0;
    for (uint32_t i = 0; i < w.count; ++i) {
      if (!fences[i]->signalled.load(std::memory_order_acquire)) p[n++] = {fds[i], POLLIN, 0};
    }
    if (::ppoll(p.data(), n, &wait, nullptr) < 0 && errno != EINTR) return -errno;
  }
}

}  // namespace npu::emu::kmd
