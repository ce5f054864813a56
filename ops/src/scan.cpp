// CumSum (opset 11, 14; npu/ops/operators.def): running sums of x along the axis given by
// input 1 (a 0-d or 1-element int32/int64 tensor, in [-rank, rank)). `exclusive` leaves the
// element itself out of its sum (the first output is 0), `reverse` sums from the end.
// Accumulates in x's type in order, as NumPy's cumsum does (floats round at each step,
// integers wrap); float32, float64, int32, int64, uint32 and uint64 as ONNX lists them.
#include <string>
#include <type_traits>

#include "attributes.h"
#include "dtype_dispatch.h"
#include "operands.h"
#include "work_limits.h"
#include "work_poll.h"

namespace npu::ops::detail {

HostOutputs cumsum(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  NPU_TRY(need_dtype(c, **x,
                     {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64,
                      DType::kUint32, DType::kUint64}));
  auto axis_in = input(c, 1);
  if (!axis_in) return op_error(c, "missing input 1 (axis)");
  NPU_TRY(need_dtype(c, **axis_in, {DType::kInt32, DType::kInt64}, "axis"));
  if ((*axis_in)->num_elements() != 1 || (*axis_in)->shape.size() > 1) {
    return op_error(c, "axis must be a scalar, got shape " + shape_text((*axis_in)->shape));
  }
  const Shape& s = (*x)->shape;
  auto axis = norm_axis(c, format::int_at(**axis_in, 0), s.size());
  if (!axis) return axis.error();
  auto exclusive = int_attr(c, "exclusive", 0);
  if (!exclusive) return exclusive.error();
  auto reverse = int_attr(c, "reverse", 0);
  if (!reverse) return reverse.error();
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    if (d < *axis) outer *= s[d];
    if (d > *axis) inner *= s[d];
  }
  const int64_t dim = s[*axis];
  NPU_TRY(check_work(c, count(s), 1, "additions"));
  auto out = alloc_output(c, (*x)->dtype, s);
  if (!out) return out.error();
  return dispatch(c, **x, [&]<typename T>(T) -> HostOutputs {
    // Integers add through their unsigned type: wrapping, without signed overflow.
    using Acc = typename std::conditional_t<std::is_floating_point_v<T>, std::type_identity<T>,
                                            std::make_unsigned<T>>::type;
    const auto xv = (*x)->view<T>();
    auto ov = out->view<T>();
    std::vector<Acc> acc(static_cast<size_t>(inner));
    WorkPoll poll;
    for (int64_t o = 0; o < outer; ++o) {
      std::fill(acc.begin(), acc.end(), Acc{0});
      for (int64_t step = 0; step < dim; ++step) {
        if (poll.stop(inner)) {
          return make_error(ETIMEDOUT, c.op + ": stopped: the time limit passed");
        }
        const int64_t k = *reverse ? dim - 1 - step : step;
        const size_t base = static_cast<size_t>((o * dim + k) * inner);
        for (size_t i = 0; i < acc.size(); ++i) {
          const auto v = static_cast<Acc>(xv[base + i]);
          if (*exclusive) {
            ov[base + i] = static_cast<T>(acc[i]);
            acc[i] = static_cast<Acc>(acc[i] + v);
          } else {
            acc[i] = static_cast<Acc>(acc[i] + v);
            ov[base + i] = static_cast<T>(acc[i]);
          }
        }
      }
    }
    return single(std::move(*out));
  });
}

}  // namespace npu::ops::detail
