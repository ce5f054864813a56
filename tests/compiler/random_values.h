// Deterministic test data shared by the compiler's end-to-end tests: uniform float values
// from a seed, and the element count of a shape. Header-only; no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace npu::compiler::testing {

/// n floats uniform in [lo, hi) from `seed` (the same values on every run and machine).
inline std::vector<float> rnd(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

/// The number of elements of a shape.
inline size_t numel(const std::vector<int64_t>& d) {
  size_t n = 1;
  for (int64_t x : d) n *= static_cast<size_t>(x);
  return n;
}

}  // namespace npu::compiler::testing
