// Private: NumPy broadcasting of shapes (the elementwise operators, MatMul's batch dims,
// Where, Expand, ...): the broadcast shape, the strides that read an input as the broadcast
// shape, and a walk over the output with both inputs' element indices. Pure functions.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "op_call.h"

namespace npu::ops::detail {

/// The NumPy broadcast of the shapes, or "<op>: shapes A and B [and C...] do not broadcast".
Expected<Shape> broadcast(const OpCall& c, std::span<const Shape* const> shapes);
inline Expected<Shape> broadcast(const OpCall& c, std::initializer_list<const Shape*> shapes) {
  return broadcast(c, std::span<const Shape* const>(shapes.begin(), shapes.size()));
}
inline Expected<Shape> broadcast(const OpCall& c, const Shape& a, const Shape& b) {
  return broadcast(c, {&a, &b});
}
/// Element strides of `s` seen as `out` (0 along broadcast dims).
std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out);

/// Calls f(out_index, a_index, b_index) for every element of `out`.
template <typename F>
void for_each_broadcast(const Shape& out, const std::vector<int64_t>& sa,
                        const std::vector<int64_t>& sb, F f) {
  const int64_t n = count(out);
  std::vector<int64_t> idx(out.size(), 0);
  int64_t ia = 0, ib = 0;
  for (int64_t o = 0; o < n; ++o) {
    f(o, ia, ib);
    for (size_t d = out.size(); d-- > 0;) {
      if (++idx[d] < out[d]) {
        ia += sa[d];
        ib += sb[d];
        break;
      }
      ia -= sa[d] * (out[d] - 1);
      ib -= sb[d] * (out[d] - 1);
      idx[d] = 0;
    }
  }
}

}  // namespace npu::ops::detail
