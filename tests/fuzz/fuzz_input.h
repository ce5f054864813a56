// Helpers shared by the libFuzzer targets that read their input as a program of calls
// (fuzz_ioctl, fuzz_device, fuzz_daemon): a Reader that takes values front to back and yields
// zeros past the end, and the monotonic clock WAIT deadlines are built from.
// Header-only; each target uses them on its own thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <vector>

namespace npu::fuzz {

/// Reads the input front to back; past the end it yields zeros.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool done() const { return p_ >= end_; }
  template <typename T>
  T get() {
    T v{};
    const size_t n = std::min(sizeof(T), static_cast<size_t>(end_ - p_));
    if (n > 0) std::memcpy(&v, p_, n);
    p_ += n;
    return v;
  }
  /// Up to `max` bytes (the count is the next 16-bit value modulo max + 1).
  std::vector<std::byte> bytes(size_t max) {
    const size_t n = std::min<size_t>(get<uint16_t>() % (max + 1), static_cast<size_t>(end_ - p_));
    std::vector<std::byte> out(n);
    if (n > 0) std::memcpy(out.data(), p_, n);
    p_ += n;
    return out;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

/// CLOCK_MONOTONIC in nanoseconds (the clock of drm_npu_wait::timeout_ns).
inline int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000ll + ts.tv_nsec;
}

}  // namespace npu::fuzz
