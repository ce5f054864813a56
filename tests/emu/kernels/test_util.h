// Helpers of the kernel tests: an SRAM buffer with typed put/get, random data, and a guard
// that puts the kernels' ISA level (cpu_isa.h) back to Auto.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "cpu_isa.h"
#include "npu_isa.h"

namespace npu::emu::test {

/// Restores the automatic ISA level when a test that forced levels ends.
struct IsaGuard {
  ~IsaGuard() { kern::set_kernel_isa(kern::Isa::Auto); }
};

class Sram {
 public:
  explicit Sram(size_t size = size_t{8} << 20) : bytes_(size) {}
  std::span<std::byte> span() { return bytes_; }

  template <class T>
  void put(uint32_t addr, const std::vector<T>& v) {
    std::memcpy(bytes_.data() + addr, v.data(), v.size() * sizeof(T));
  }
  template <class T>
  std::vector<T> get(uint32_t addr, size_t n) const {
    std::vector<T> v(n);
    std::memcpy(v.data(), bytes_.data() + addr, n * sizeof(T));
    return v;
  }

 private:
  std::vector<std::byte> bytes_;
};

inline std::mt19937& rng() {
  static std::mt19937 g(12345);
  return g;
}

template <class T>
std::vector<T> random_ints(size_t n, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng()));
  return v;
}

inline std::vector<float> random_floats(size_t n, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng());
  return v;
}

inline npu_cmd zero_cmd(uint8_t opcode, uint8_t engine) {
  npu_cmd c;
  std::memset(&c, 0, sizeof(c));
  c.hdr.opcode = opcode;
  c.hdr.engine = engine;
  return c;
}

}  // namespace npu::emu::test
