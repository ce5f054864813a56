// Host ops that select elements along an axis by their order (npu/ops/operators.def): ArgMax
// and ArgMin (int64 indices; keepdims; select_last_index from opset 12) and TopK (k attribute
// before opset 10, the K input from 10, largest and sorted from 11; Values and int64
// Indices). Every numeric dtype, float32/float64 only for TopK before opset 11.
//
// Order: NaN counts as larger than every number and equal to another NaN, as NumPy's argmax,
// argmin and sort do (the first NaN is both the ArgMax and the ArgMin). Ties: ArgMax/ArgMin
// take the first index, or the last with select_last_index; TopK puts the lower index first,
// as the ONNX operator's specification says. TopK returns its K elements sorted whatever
// `sorted` says (with sorted = 0 the order is unspecified, so sorted is a valid one).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>

#include "attributes.h"
#include "dtype_dispatch.h"
#include "operands.h"
#include "work_limits.h"
#include "work_poll.h"

namespace npu::ops::detail {
namespace {

/// a < b in the order above (NaN last, NaNs equal).
template <typename T>
bool less_nan_last(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

/// Error unless attribute `name`, when present, is allowed at the call's opset (`since`).
Expected<void> attr_since(const OpCall& c, const char* name, int64_t since) {
  if (c.opset >= since || !c.attrs.contains(name)) return ok();
  return op_error(c, std::string("attribute ") + name + " needs opset " + std::to_string(since) +
                         " (this is opset " + std::to_string(c.opset) + ")");
}

/// The axis and the element counts before it, along it and after it.
struct AxisSplit {
  size_t axis = 0;
  int64_t outer = 1, dim = 1, inner = 1;
};
Expected<AxisSplit> split_at(const OpCall& c, const Shape& s, int64_t axis_attr) {
  auto axis = norm_axis(c, axis_attr, s.size());
  if (!axis) return axis.error();
  AxisSplit a;
  a.axis = *axis;
  a.dim = s[*axis];
  for (size_t d = 0; d < s.size(); ++d) {
    if (d < *axis) a.outer *= s[d];
    if (d > *axis) a.inner *= s[d];
  }
  return a;
}

HostOutputs stopped(const OpCall& c) {
  return make_error(ETIMEDOUT, c.op + ": stopped: the time limit passed");
}

/// ArgMax (`max`) or ArgMin.
HostOutputs arg_extreme(const OpCall& c, bool max) {
  auto x = input(c, 0);
  if (!x) return x.error();
  NPU_TRY(attr_since(c, "select_last_index", 12));
  auto axis_attr = int_attr(c, "axis", 0);
  if (!axis_attr) return axis_attr.error();
  auto keepdims = int_attr(c, "keepdims", 1);
  if (!keepdims) return keepdims.error();
  auto last = int_attr(c, "select_last_index", 0);
  if (!last) return last.error();
  const Shape& s = (*x)->shape;
  auto a = split_at(c, s, *axis_attr);
  if (!a) return a.error();
  if (a->dim == 0 && a->outer * a->inner > 0) {
    return op_error(c, "axis " + std::to_string(a->axis) + " of input " + shape_text(s) +
                           " is empty: no index to select");
  }
  Shape out_shape = s;
  if (*keepdims) {
    out_shape[a->axis] = 1;
  } else {
    out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(a->axis));
  }
  NPU_TRY(check_work(c, a->outer * a->inner, a->dim, "comparisons"));
  auto out = alloc_output(c, DType::kInt64, out_shape);
  if (!out) return out.error();
  return dispatch(c, **x, [&]<typename T>(T) -> HostOutputs {
    const auto xv = (*x)->view<T>();
    auto ov = out->view<int64_t>();
    const bool select_last = *last != 0;
    // v replaces the best so far: beyond it in the op's direction, or equal with select_last.
    const auto better = [&](T v, T best) {
      const bool beyond = max ? less_nan_last(best, v) : less_nan_last(v, best);
      if constexpr (std::is_floating_point_v<T>) {
        // NaN is the extreme of both: the first (or last) NaN wins.
        if (std::isnan(v) || std::isnan(best)) {
          return std::isnan(v) && (!std::isnan(best) || select_last);
        }
      }
      return beyond || (select_last && !less_nan_last(v, best) && !less_nan_last(best, v));
    };
    std::vector<T> best(static_cast<size_t>(a->inner));
    WorkPoll poll;
    for (int64_t o = 0; o < a->outer; ++o) {
      const T* row = xv.data() + o * a->dim * a->inner;
      int64_t* idx = ov.data() + o * a->inner;
      std::copy(row, row + a->inner, best.begin());
      std::fill(idx, idx + a->inner, int64_t{0});
      for (int64_t k = 1; k < a->dim; ++k) {
        if (poll.stop(a->inner)) return stopped(c);
        const T* v = row + k * a->inner;
        for (int64_t i = 0; i < a->inner; ++i) {
          if (better(v[i], best[static_cast<size_t>(i)])) {
            best[static_cast<size_t>(i)] = v[i];
            idx[i] = k;
          }
        }
      }
    }
    return single(std::move(*out));
  });
}

/// TopK's K: the attribute k before opset 10, the 1-element int64 input 1 from 10.
Expected<int64_t> top_k_count(const OpCall& c) {
  if (c.opset < 10) {
    if (optional_input(c, 1)) {
      return op_error(c, "K is an input from opset 10 on (this is opset " +
                             std::to_string(c.opset) + ": attribute k)");
    }
    return required_int_attr(c, "k");
  }
  if (c.attrs.contains("k")) {
    return op_error(c, "attribute k is K, input 1, from opset 10 on (this is opset " +
                           std::to_string(c.opset) + ")");
  }
  auto k = input(c, 1);
  if (!k) return op_error(c, "missing input 1 (K)");
  NPU_TRY(need_dtype(c, **k, {DType::kInt64}, "K"));
  if ((*k)->num_elements() != 1 || (*k)->shape.size() > 1) {
    return op_error(c, "K must be a 1-element 1-d tensor, got shape " + shape_text((*k)->shape));
  }
  return (*k)->view<int64_t>()[0];
}

}  // namespace

HostOutputs arg_max(const OpCall& c) {
  return arg_extreme(c, /*max=*/true);
}

HostOutputs arg_min(const OpCall& c) {
  return arg_extreme(c, /*max=*/false);
}

/// Values and Indices of the K largest (largest = 1) or smallest elements along `axis`.
HostOutputs top_k(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  if (c.num_outputs < 1 || c.num_outputs > 2) {
    return op_error(
        c, "has 2 outputs (Values, Indices), " + std::to_string(c.num_outputs) + " requested");
  }
  NPU_TRY(attr_since(c, "largest", 11));
  NPU_TRY(attr_since(c, "sorted", 11));
  if (c.opset < 11) NPU_TRY(need_numeric(c, **x, /*int_ok=*/false));
  auto k = top_k_count(c);
  if (!k) return k.error();
  auto axis_attr = int_attr(c, "axis", -1);
  if (!axis_attr) return axis_attr.error();
  auto largest = int_attr(c, "largest", 1);
  if (!largest) return largest.error();
  const Shape& s = (*x)->shape;
  auto a = split_at(c, s, *axis_attr);
  if (!a) return a.error();
  if (*k < 0) return op_error(c, "K " + std::to_string(*k) + " is negative");
  if (*k > a->dim) {
    return op_error(c, "K " + std::to_string(*k) + " is larger than axis " +
                           std::to_string(a->axis) + " of size " + std::to_string(a->dim) +
                           " (input " + shape_text(s) + ")");
  }
  Shape out_shape = s;
  out_shape[a->axis] = *k;
  // A partial sort: about dim * log2(K) comparisons per output row.
  int64_t log_k = 1;
  while (log_k < 62 && (int64_t{1} << log_k) < *k) ++log_k;
  NPU_TRY(check_work(c, a->outer * a->inner, a->dim * log_k, "comparisons"));
  auto values = alloc_output(c, (*x)->dtype, out_shape);
  if (!values) return values.error();
  auto indices = alloc_output(c, DType::kInt64, out_shape);
  if (!indices) return indices.error();
  return dispatch(c, **x, [&]<typename T>(T) -> HostOutputs {
    const auto xv = (*x)->view<T>();
    auto vv = values->view<T>();
    auto iv = indices->view<int64_t>();
    std::vector<int64_t> order(static_cast<size_t>(a->dim));
    WorkPoll poll;
    for (int64_t o = 0; o < a->outer; ++o) {
      for (int64_t i = 0; i < a->inner; ++i) {
        if (poll.stop(a->dim)) return stopped(c);
        const T* line = xv.data() + o * a->dim * a->inner + i;
        const auto at = [&](int64_t j) { return line[j * a->inner]; };
        // A total order: by value in the requested direction, then by index.
        const auto first = [&](int64_t p, int64_t q) {
          const T vp = at(p), vq = at(q);
          if (*largest ? less_nan_last(vq, vp) : less_nan_last(vp, vq)) return true;
          if (*largest ? less_nan_last(vp, vq) : less_nan_last(vq, vp)) return false;
          return p < q;
        };
        std::iota(order.begin(), order.end(), int64_t{0});
        std::partial_sort(order.begin(), order.begin() + *k, order.end(), first);
        const int64_t base = o * *k * a->inner + i;
        for (int64_t j = 0; j < *k; ++j) {
          const auto out = static_cast<size_t>(base + j * a->inner);
          vv[out] = at(order[static_cast<size_t>(j)]);
          iv[out] = order[static_cast<size_t>(j)];
        }
      }
    }
    std::vector<NpyArray> outs{std::move(*values)};
    if (c.num_outputs == 2) outs.push_back(std::move(*indices));
    return outs;
  });
}

}  // namespace npu::ops::detail
