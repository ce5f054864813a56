// copy_from_user / copy_to_user for the __u64 user pointers of the ABI (and the ioctl argument
// itself), and the host clock.
//
// Two modes, chosen per Kmd (Kmd::Options::checked_user_access): unchecked, for callers that
// are our own code (libnpu's in-process backend, the daemon, which has already copied every
// user buffer into its own memory): only a null pointer is EFAULT, a wild one crashes as in
// any library. Checked, for programs we did not write (the preload shim puts the driver
// behind their raw ioctl() calls): every bad address is EFAULT, as in the kernel
// (npu/user_memory.h).
#pragma once

#include <time.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "npu/user_memory.h"

namespace npu::emu::kmd {

struct UserAccess {
  bool checked = false;

  /// Copies n bytes from user pointer `src`; 0 or -EFAULT.
  int copy_from(void* dst, uint64_t src, size_t n) const {
    if (n == 0) return 0;
    if (src == 0) return -EFAULT;
    if (checked) return -npu::copy_from_user(dst, src, n);
    std::memcpy(dst, reinterpret_cast<const void*>(static_cast<uintptr_t>(src)), n);
    return 0;
  }

  /// Copies n bytes to user pointer `dst`; 0 or -EFAULT.
  int copy_to(uint64_t dst, const void* src, size_t n) const {
    if (n == 0) return 0;
    if (dst == 0) return -EFAULT;
    if (checked) return -npu::copy_to_user(dst, src, n);
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, n);
    return 0;
  }
};

/// CLOCK_MONOTONIC in nanoseconds (the clock of every ABI timestamp and timeout).
inline uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace npu::emu::kmd
