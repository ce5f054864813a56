// Trilu (opset 14; npu/ops/operators.def): the upper (upper = 1) or lower triangle of each
// matrix in the last two dims of x, the other elements 0. Diagonal k (input 1, optional, a
// 0-d or 1-element int64 tensor; default 0) moves the edge: upper keeps x[i][j] with
// j - i >= k, lower keeps j - i <= k. It copies element bytes, so it takes every dtype.
#include <algorithm>
#include <cstring>
#include <string>

#include "attributes.h"
#include "operands.h"
#include "work_limits.h"
#include "work_poll.h"

namespace npu::ops::detail {

HostOutputs trilu(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  const Shape& s = (*x)->shape;
  if (s.size() < 2) return op_error(c, "input must have rank >= 2, got " + shape_text(s));
  int64_t k = 0;
  if (const NpyArray* k_in = optional_input(c, 1)) {
    NPU_TRY(need_dtype(c, *k_in, {DType::kInt64}, "k"));
    if (k_in->num_elements() != 1 || k_in->shape.size() > 1) {
      return op_error(c, "k must be a scalar, got shape " + shape_text(k_in->shape));
    }
    k = k_in->view<int64_t>()[0];
  }
  auto upper = int_attr(c, "upper", 1);
  if (!upper) return upper.error();
  const int64_t rows = s[s.size() - 2], cols = s.back();
  // Beyond +-(rows + cols) every diagonal keeps all or nothing: clamp so i + k cannot overflow.
  k = std::clamp(k, -(rows + cols), rows + cols);
  NPU_TRY(check_work(c, count(s), 1, "element copies"));
  auto out = alloc_output(c, (*x)->dtype, s);
  if (!out) return out.error();
  if (rows == 0 || cols == 0) return single(std::move(*out));
  const int64_t matrices = count(s) / (rows * cols);
  const size_t es = format::dtype_size((*x)->dtype);
  WorkPoll poll;
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      if (poll.stop(cols)) return make_error(ETIMEDOUT, c.op + ": stopped: the time limit passed");
      // The kept columns [begin, end) of row i.
      const int64_t begin = *upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
      const int64_t end = *upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
      if (begin >= end) continue;
      const size_t offset = static_cast<size_t>((m * rows + i) * cols + begin) * es;
      std::memcpy(out->data.data() + offset, (*x)->data.data() + offset,
                  static_cast<size_t>(end - begin) * es);
    }
  }
  return single(std::move(*out));
}

}  // namespace npu::ops::detail
