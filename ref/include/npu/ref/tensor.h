// Tiny typed views over plain spans for the reference operators: 4-D shapes, element strides
// (0 broadcasts) and the size checks every operator runs before its loops, so that a wrong
// shape is an Error rather than an out-of-bounds access.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "npu/expected.h"
#include "npu_isa.h"

namespace npu::ref {

/// Dimensions of a 4-D tensor, outermost first.
using Dims4 = std::array<uint32_t, 4>;
/// Element strides of a 4-D view, outermost first; 0 broadcasts along that dim.
using Strides4 = std::array<uint64_t, 4>;

/// Number of elements of `dims` (products beyond uint64 saturate to UINT64_MAX).
inline uint64_t element_count(const Dims4& dims) {
  uint64_t n = 1;
  for (uint32_t d : dims) {
    if (d == 0) return 0;
    if (n > UINT64_MAX / d) return UINT64_MAX;
    n *= d;
  }
  return n;
}

/// Row-major (contiguous) element strides of `dims`.
inline Strides4 contiguous_strides(const Dims4& dims) {
  Strides4 s{};
  uint64_t acc = 1;
  for (int i = 3; i >= 0; --i) {
    s[static_cast<size_t>(i)] = acc;
    acc *= dims[static_cast<size_t>(i)];
  }
  return s;
}

/// Elements a strided view over `dims` spans: 1 + max offset (0 if the shape is empty), or
/// UINT64_MAX if that overflows.
inline uint64_t strided_extent(const Dims4& dims, const Strides4& strides) {
  if (element_count(dims) == 0) return 0;
  uint64_t last = 0;
  for (size_t i = 0; i < 4; ++i) {
    uint64_t term = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(dims[i] - 1), strides[i], &term) ||
        __builtin_add_overflow(last, term, &last) || last == UINT64_MAX) {
      return UINT64_MAX;
    }
  }
  return last + 1;
}

/// A strided 4-D view: element (i0, i1, i2, i3) is data[i0*s0 + i1*s1 + i2*s2 + i3*s3].
template <typename T>
struct View4 {
  std::span<T> data;
  Strides4 stride{};

  T& at(uint64_t i0, uint64_t i1, uint64_t i2, uint64_t i3) const {
    return data[i0 * stride[0] + i1 * stride[1] + i2 * stride[2] + i3 * stride[3]];
  }
};

/// out[i] = f(in[i]...) for every index i of `dims`, outermost dim first. The views must have
/// been checked (check_view, check_out_view).
template <typename TOut, typename F, typename... TIn>
void map4(const Dims4& dims, const View4<TOut>& out, F&& f, const View4<TIn>&... in) {
  for (uint64_t i0 = 0; i0 < dims[0]; ++i0) {
    for (uint64_t i1 = 0; i1 < dims[1]; ++i1) {
      for (uint64_t i2 = 0; i2 < dims[2]; ++i2) {
        for (uint64_t i3 = 0; i3 < dims[3]; ++i3) {
          out.at(i0, i1, i2, i3) = f(in.at(i0, i1, i2, i3)...);
        }
      }
    }
  }
}

/// NPU_DTYPE_* of an element type (int8_t, uint8_t, int32_t, float).
template <typename T>
constexpr uint8_t dtype_of() {
  if constexpr (std::is_same_v<T, int8_t>) return NPU_DTYPE_INT8;
  if constexpr (std::is_same_v<T, uint8_t>) return NPU_DTYPE_UINT8;
  if constexpr (std::is_same_v<T, int32_t>) return NPU_DTYPE_INT32;
  if constexpr (std::is_same_v<T, float>) return NPU_DTYPE_FP32;
  return 0;
}

/// Error unless `size` >= `needed` elements; `what` names the operand ("conv2d: weights").
inline Expected<void> check_size(const char* what, size_t size, uint64_t needed) {
  if (needed == UINT64_MAX || size < needed) {
    return make_error(EINVAL, std::string(what) + ": expected at least " + std::to_string(needed) +
                                  " elements, got " + std::to_string(size));
  }
  return ok();
}

/// Error unless the strided view over `dims` stays inside its span.
template <typename T>
Expected<void> check_view(const char* what, const View4<T>& v, const Dims4& dims) {
  return check_size(what, v.data.size(), strided_extent(dims, v.stride));
}

/// check_view for an output, which must also not write any element twice: a view with more
/// elements than it spans (a zero or too-small stride on a dim > 1) is an Error. (This also
/// bounds the loops of an operator by the size of its output.)
template <typename T>
Expected<void> check_out_view(const char* what, const View4<T>& v, const Dims4& dims) {
  if (auto r = check_view(what, v, dims); !r) return r;
  if (element_count(dims) > strided_extent(dims, v.stride)) {
    return make_error(EINVAL, std::string(what) + ": view writes some elements twice");
  }
  return ok();
}

}  // namespace npu::ref
