// copy_from_user / copy_to_user for the __u64 user pointers of the ABI, and the host clock.
// Difference with the kernel: there is no page-fault detection; only a null pointer is
// recognised as invalid (EFAULT). A wild pointer crashes the caller, as it would in any
// in-process library.
#pragma once

#include <time.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace npu::emu::kmd {

/// Copies n bytes from user pointer `src`; 0 or -EFAULT.
inline int copy_from_user(void* dst, uint64_t src, size_t n) {
  if (n == 0) return 0;
  if (src == 0) return -EFAULT;
  std::memcpy(dst, reinterpret_cast<const void*>(static_cast<uintptr_t>(src)), n);
  return 0;
}

/// Copies n bytes to user pointer `dst`; 0 or -EFAULT.
inline int copy_to_user(uint64_t dst, const void* src, size_t n) {
  if (n == 0) return 0;
  if (dst == 0) return -EFAULT;
  std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(dst)), src, n);
  return 0;
}

/// CLOCK_MONOTONIC in nanoseconds (the clock of every ABI timestamp and timeout).
inline uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace npu::emu::kmd
