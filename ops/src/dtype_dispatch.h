// Private: typed element access — an implementation written once as a template over the
// element type T runs for the dtype of a tensor (dispatch), and single elements read as int64
// or double. Header only.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "npu/format/array_values.h"
#include "op_call.h"

namespace npu::ops::detail {

/// Element i of an integer or float tensor as int64 (floats truncate) / as double
/// (npu/format/array_values.h).
using format::int_at;
using format::number_at;

/// Runs f(T{}) for the element type T of dtype `t`: any numeric dtype but float16 (float,
/// double, int8..int64, uint8..uint64). bool and float16 give "<op>: dtype X is not
/// supported". Callers narrow the accepted dtypes with need_dtype() first; f must compile for
/// every T and return the same Expected type for each.
template <typename F>
auto dispatch(const OpCall& c, DType t, F&& f) -> decltype(f(float{})) {
  switch (t) {
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat64:
      return f(double{});
    case DType::kInt8:
      return f(int8_t{});
    case DType::kUint8:
      return f(uint8_t{});
    case DType::kInt16:
      return f(int16_t{});
    case DType::kUint16:
      return f(uint16_t{});
    case DType::kInt32:
      return f(int32_t{});
    case DType::kUint32:
      return f(uint32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kUint64:
      return f(uint64_t{});
    default:
      return op_error(c, std::string("dtype ") + format::dtype_name(t) + " is not supported");
  }
}

/// dispatch() on the dtype of `a`.
template <typename F>
auto dispatch(const OpCall& c, const NpyArray& a, F&& f) -> decltype(f(float{})) {
  return dispatch(c, a.dtype, std::forward<F>(f));
}

/// dispatch() that also runs f(bool{}) for bool (only float16 is unsupported).
template <typename F>
auto dispatch_with_bool(const OpCall& c, DType t, F&& f) -> decltype(f(float{})) {
  if (t == DType::kBool) return f(bool{});
  return dispatch(c, t, std::forward<F>(f));
}

}  // namespace npu::ops::detail
