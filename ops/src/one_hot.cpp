// OneHot (opsets 9 and 11; npu/ops/operators.def): indices of any numeric type, `depth` (input
// 1) and `values` (input 2, [off_value, on_value]) give an output of the indices' shape with a
// new axis of `depth` elements at `axis` (default -1: last), on_value where the position along
// it equals the index and off_value elsewhere, in `values`' dtype. Non-integer indices and
// depth are cast to int64 first (truncation, as the spec says); a negative index counts from
// the end from opset 11 (-depth .. -1; opset 9 has none); any other index outside
// [0, depth - 1] gives a row of off_values. depth and values are parameter inputs (the Params
// column): constant at compile time in every model the compiler takes. The output is written by
// element bytes, so `values` may be any dtype.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>

#include "attributes.h"
#include "dtype_dispatch.h"
#include "operands.h"
#include "work_limits.h"
#include "work_poll.h"

namespace npu::ops::detail {

namespace {

/// x cast to int64 as the spec says (truncation toward zero); nullopt when it has no int64
/// value (NaN, infinite, out of range).
std::optional<int64_t> as_int64(double x) {
  if (!std::isfinite(x)) return std::nullopt;
  const double t = std::trunc(x);
  // 2^63 is exact in double, INT64_MAX is not.
  constexpr double kLimit = -static_cast<double>(std::numeric_limits<int64_t>::min());
  if (t < -kLimit || t >= kLimit) return std::nullopt;
  return static_cast<int64_t>(t);
}

}  // namespace

HostOutputs one_hot(const OpCall& c) {
  auto indices = input(c, 0);
  if (!indices) return indices.error();
  auto depth_in = input(c, 1);
  if (!depth_in) return depth_in.error();
  auto values = input(c, 2);
  if (!values) return values.error();
  NPU_TRY(need_numeric(c, **depth_in, true, "depth"));
  if ((*depth_in)->num_elements() != 1 || (*depth_in)->shape.size() > 1) {
    return op_error(c, "depth must be a scalar, got shape " + shape_text((*depth_in)->shape));
  }
  const double depth_value = format::number_at(**depth_in, 0);
  const std::optional<int64_t> depth = as_int64(depth_value);
  if (!depth || *depth <= 0) {
    std::ostringstream got;
    got << depth_value;
    return op_error(c, "depth must be positive, got " + got.str());
  }
  if ((*values)->shape.size() != 1 || (*values)->num_elements() != 2) {
    return op_error(
        c, "values must be [off_value, on_value], got shape " + shape_text((*values)->shape));
  }
  auto axis_attr = int_attr(c, "axis", -1);
  if (!axis_attr) return axis_attr.error();
  const Shape& in_shape = (*indices)->shape;
  // The axis counts in the output's rank: [-r-1, r] for indices of rank r.
  auto axis = norm_axis(c, *axis_attr, in_shape.size() + 1);
  if (!axis) return axis.error();

  Shape out_shape = in_shape;
  out_shape.insert(out_shape.begin() + static_cast<std::ptrdiff_t>(*axis), *depth);
  // count() of the output would overflow before alloc_output's size check: check the work.
  NPU_TRY(check_work(c, count(in_shape), *depth, "output elements per index"));
  auto out = alloc_output(c, (*values)->dtype, out_shape);
  if (!out) return out.error();

  const size_t es = format::dtype_size((*values)->dtype);
  const std::byte* off = (*values)->data.data();
  const std::byte* on = off + es;
  // Every element off first, then one on per index in range.
  for (int64_t i = 0, n = count(out_shape); i < n; ++i) {
    std::memcpy(out->data.data() + static_cast<size_t>(i) * es, off, es);
  }
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < *axis; ++d) outer *= in_shape[d];
  for (size_t d = *axis; d < in_shape.size(); ++d) inner *= in_shape[d];
  // Opset 11 counts negative indices from the end; opset 9 leaves them off.
  const int64_t lowest = c.opset >= 11 ? -*depth : 0;
  WorkPoll poll;
  for (int64_t o = 0; o < outer; ++o) {
    if (poll.stop(inner)) return make_error(ETIMEDOUT, c.op + ": stopped: the time limit passed");
    for (int64_t i = 0; i < inner; ++i) {
      const std::optional<int64_t> idx = as_int64(format::number_at(**indices, o * inner + i));
      if (!idx || *idx < lowest || *idx >= *depth) continue;  // a row of off_values
      const int64_t pos = *idx < 0 ? *idx + *depth : *idx;
      const int64_t at = (o * *depth + pos) * inner + i;
      std::memcpy(out->data.data() + static_cast<size_t>(at) * es, on, es);
    }
  }
  return single(std::move(*out));
}

}  // namespace npu::ops::detail
