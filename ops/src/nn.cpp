// Host ops of the neural-network layers (npu/ops/ops.h): MatMul and Gemm
// (ref::matmul_f32), Conv (ref::conv2d_f32 in NHWC between layout transposes), MaxPool,
// AveragePool and their global forms (ref::pool_nd), BatchNormalization and the Reduce*
// family.
//
// What they accept and compute (float32 unless noted; "numeric" = float32, float64 and the
// integer dtypes):
// - MatMul (1-D, 2-D, batched with broadcast batch dims); Gemm (alpha, beta, transA, transB,
//   optional C broadcast to [M, N]);
// - Conv (any spatial rank; 3+ as a direct loop: strides, pads, dilations, group incl.
//   depthwise, auto_pad NOTSET/VALID/SAME_UPPER/SAME_LOWER, kernel_shape, optional bias);
// - MaxPool (float32, int8, uint8; any spatial rank; strides, pads, dilations, ceil_mode,
//   auto_pad, storage_order; num_outputs 2 adds int64 Indices, flat over N*C*spatial),
//   AveragePool (count_include_pad, ceil_mode, auto_pad, dilations), GlobalMaxPool,
//   GlobalAveragePool. With ceil_mode a window may not start in the end padding; averages with
//   count_include_pad divide by the positions inside the padded input;
// - BatchNormalization (epsilon; training_mode 1 uses batch statistics and may output
//   running_mean and running_var with momentum);
// - ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1,
//   ReduceL2 (float32, float64, int8, uint8, int32, int64; integer Mean/L2 truncate),
//   ReduceLogSum, ReduceLogSumExp (float): axes from the attribute or from input 1, keepdims,
//   noop_with_empty_axes;
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "attributes.h"
#include "broadcasting.h"
#include "conv_geometry.h"
#include "dtype_dispatch.h"
#include "matmul_geometry.h"
#include "npu/cancel.h"
#include "npu/ref/matmul.h"
#include "npu/ref/pool_nd.h"
#include "operands.h"
#include "permute.h"
#include "window_geometry.h"
#include "work_limits.h"

namespace npu::ops::detail {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- MatMul, Gemm ----

// ---- Conv ----

/// Direct float convolution of 3 or more spatial dims (1-d and 2-d use ref::conv2d_f32):
/// y[n][oc][o...] = bias[oc] + sum over the group's input channels and the kernel window of
/// x[n][ic][o * stride - pad_begin + k * dilation] * w[oc][icg][k] (padding contributes 0).
HostOutputs conv_nd(const OpCall& c, const NpyArray& x, const NpyArray& w, const NpyArray* bias) {
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  const size_t rank = xs.size() - 2;
  auto group = int_attr(c, "group", 1);
  if (!group) return group.error();
  if (ws.size() != xs.size() || *group < 1 || ws[0] < 1 || ws[0] % *group != 0 ||
      xs[1] != ws[1] * *group) {
    return op_error(c, "weights " + shape_text(ws) + " do not match input " + shape_text(xs) +
                           " with group " + std::to_string(*group));
  }
  auto attrs = spatial_attrs(c, rank, Shape(ws.begin() + 2, ws.end()));
  if (!attrs) return attrs.error();
  auto mode = auto_pad_attr(c);
  if (!mode) return mode.error();
  Shape out_shape = {xs[0], ws[0]};
  auto windows = resolve_windows(c, *mode, xs, *attrs, false);
  if (!windows) return windows.error();
  const std::vector<PadResult>& pads = *windows;
  for (const PadResult& p : pads) out_shape.push_back(p.out);
  NPU_TRY(check_work(c, count(out_shape), count(ws) / ws[0], "multiply-accumulates"));
  if (bias && bias->num_elements() != ws[0]) {
    return op_error(c, "bias shape " + shape_text(bias->shape) + " does not match " +
                           std::to_string(ws[0]) + " output channels");
  }
  auto alloc = alloc_output(c, DType::kFloat32, out_shape);
  if (!alloc) return alloc.error();
  NpyArray y = std::move(*alloc);
  const auto xv = x.view<float>();
  const auto wv = w.view<float>();
  auto yv = y.view<float>();
  const Shape in_sp(xs.begin() + 2, xs.end()), out_sp(out_shape.begin() + 2, out_shape.end());
  const int64_t in_size = count(in_sp), out_size = count(out_sp), k_size = count(attrs->kernel);
  const int64_t ocg = ws[0] / *group, icg = ws[1];
  std::vector<int64_t> o(rank), k(rank);
  for (int64_t n = 0; n < xs[0]; ++n) {
    for (int64_t oc = 0; oc < ws[0]; ++oc) {
      const int64_t g = oc / ocg;
      for (int64_t op = 0; op < out_size; ++op) {
        if (op % 1024 == 0 && cancelled()) return op_error(c, "cancelled");
        for (int64_t r = op, d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
          o[static_cast<size_t>(d)] = r % out_sp[static_cast<size_t>(d)];
          r /= out_sp[static_cast<size_t>(d)];
        }
        double acc = bias ? static_cast<double>(bias->view<float>()[static_cast<size_t>(oc)]) : 0.0;
        for (int64_t kp = 0; kp < k_size; ++kp) {
          int64_t in_off = 0;
          bool inside = true;
          for (int64_t r = kp, d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
            const auto du = static_cast<size_t>(d);
            k[du] = r % attrs->kernel[du];
            r /= attrs->kernel[du];
          }
          for (size_t d = 0; d < rank && inside; ++d) {
            const int64_t i = o[d] * attrs->strides[d] - pads[d].begin + k[d] * attrs->dilations[d];
            inside = i >= 0 && i < in_sp[d];
            in_off = in_off * in_sp[d] + i;
          }
          if (!inside) continue;
          for (int64_t ic = 0; ic < icg; ++ic) {
            const float xval =
                xv[static_cast<size_t>((n * xs[1] + g * icg + ic) * in_size + in_off)];
            const float wval = wv[static_cast<size_t>((oc * icg + ic) * k_size + kp)];
            acc += static_cast<double>(xval) * static_cast<double>(wval);
          }
        }
        yv[static_cast<size_t>((n * ws[0] + oc) * out_size + op)] = static_cast<float>(acc);
      }
    }
  }
  return single(std::move(y));
}

// ---- pooling ----

/// MaxPool (float32, int8, uint8; num_outputs 2 adds the int64 Indices), AveragePool
/// (float32), GlobalMaxPool and GlobalAveragePool, any spatial rank.
HostOutputs pool_window(const OpCall& c, uint8_t kind, bool global) {
  auto x = input(c, 0);
  if (!x) return x.error();
  const Shape& xs = (*x)->shape;
  if (xs.size() < 3) return op_error(c, "input must have rank >= 3, got " + shape_text(xs));
  const size_t rank = xs.size() - 2;
  const bool with_indices = c.num_outputs == 2 && kind == NPU_POOL_MAX && !global;
  ref::PoolNdShape s;
  s.planes = static_cast<uint64_t>(xs[0] * xs[1]);
  s.in.assign(xs.begin() + 2, xs.end());
  Shape out_shape = {xs[0], xs[1]};
  if (global) {
    s.kernel = s.in;
    s.out = s.stride = s.dilation = std::vector<int64_t>(rank, 1);
    s.pad_begin = s.pad_end = std::vector<int64_t>(rank, 0);
  } else {
    auto attrs = spatial_attrs(c, rank, {});
    if (!attrs) return attrs.error();
    auto mode = auto_pad_attr(c);
    if (!mode) return mode.error();
    auto ceil_mode = int_attr(c, "ceil_mode", 0);
    if (!ceil_mode) return ceil_mode.error();
    auto include_pad = int_attr(c, "count_include_pad", 0);
    if (!include_pad) return include_pad.error();
    auto order = int_attr(c, "storage_order", 0);
    if (!order) return order.error();
    if (*order != 0 && *order != 1) return op_error(c, "attribute storage_order must be 0 or 1");
    s.kernel = attrs->kernel;
    s.stride = attrs->strides;
    s.dilation = attrs->dilations;
    s.count_include_pad = *include_pad != 0;
    s.column_major_argmax = *order == 1;
    auto windows = resolve_windows(c, *mode, xs, *attrs, *ceil_mode != 0);
    if (!windows) return windows.error();
    for (const PadResult& p : *windows) {
      s.out.push_back(p.out);
      s.pad_begin.push_back(p.begin);
      s.pad_end.push_back(p.end);
    }
  }
  out_shape.insert(out_shape.end(), s.out.begin(), s.out.end());
  NPU_TRY(check_output(c, with_indices ? DType::kInt64 : (*x)->dtype, out_shape));
  // ref::pool_nd visits only the taps inside the input: at most min(kernel, input) per dim.
  Shape taps;
  for (size_t d = 0; d < rank; ++d) taps.push_back(std::min(s.kernel[d], s.in[d]));
  NPU_TRY(check_work(c, count(out_shape), count(taps), "window taps"));
  if (count(xs) == 0) {
    if (count(out_shape) != 0) return op_error(c, "input " + shape_text(xs) + " is empty");
    std::vector<NpyArray> outs{NpyArray::zeros((*x)->dtype, out_shape)};
    if (with_indices) outs.push_back(NpyArray::zeros(DType::kInt64, out_shape));
    return outs;
  }
  NpyArray out = NpyArray::zeros((*x)->dtype, out_shape);
  NpyArray indices = NpyArray::zeros(DType::kInt64, with_indices ? out_shape : Shape{0});
  return dispatch(c, **x, [&]<typename T>(T) -> HostOutputs {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, int8_t> ||
                  std::is_same_v<T, uint8_t>) {
      if (auto r =
              ref::pool_nd<T>(kind, s, (*x)->view<T>(), out.view<T>(), indices.view<int64_t>());
          !r) {
        return op_error(c, r.error().message);
      }
    }
    std::vector<NpyArray> outs{std::move(out)};
    if (with_indices) outs.push_back(std::move(indices));
    return outs;
  });
}

// ---- BatchNormalization ----

// ---- Reduce* ----

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kSumSquare, kL1, kL2, kLogSum, kLogSumExp };

/// The reduced axes as a mask: the "axes" attribute, else input 1 (ReduceSum from opset 13,
/// the others from 18); none means all unless noop_with_empty_axes (then nullopt: identity).
Expected<std::optional<std::vector<bool>>> reduce_axes(const OpCall& c, size_t rank) {
  auto attr = ints_attr(c, "axes");
  if (!attr) return attr.error();
  std::vector<int64_t> axes;
  if (*attr) {
    axes = **attr;
  } else if (const NpyArray* a = optional_input(c, 1)) {
    NPU_TRY(need_dtype(c, *a, {DType::kInt64}, "axes"));
    if (a->shape.size() > 1) return op_error(c, "axes must be 1-d, got " + shape_text(a->shape));
    axes = a->values<int64_t>();
  }
  auto noop = int_attr(c, "noop_with_empty_axes", 0);
  if (!noop) return noop.error();
  if (axes.empty() && *noop) return std::optional<std::vector<bool>>{};
  std::vector<bool> mask(rank, axes.empty());
  for (int64_t a : axes) {
    auto ax = norm_axis(c, a, rank);
    if (!ax) return ax.error();
    if (mask[*ax]) return op_error(c, "axis " + std::to_string(a) + " appears twice");
    mask[*ax] = true;
  }
  return std::optional<std::vector<bool>>{std::move(mask)};
}

/// Accumulates in double for float32 (then rounds once) and in wrapping int64 for integers;
/// Mean and L2 of integers truncate toward zero (NumPy's astype), LogSum/LogSumExp are float.
template <typename T>
void reduce_values(Reduce kind, const Shape& in_shape, const Shape& keep_shape,
                   std::span<const T> in, std::span<T> out) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  const bool is_max = kind == Reduce::kMax, is_min = kind == Reduce::kMin;
  Acc init = kind == Reduce::kProd ? Acc{1} : Acc{0};
  if (is_max) init = static_cast<Acc>(std::numeric_limits<T>::lowest());
  if (is_min) init = static_cast<Acc>(std::numeric_limits<T>::max());
  if constexpr (std::is_floating_point_v<T>) {
    if (is_max) init = -std::numeric_limits<double>::infinity();
    if (is_min) init = std::numeric_limits<double>::infinity();
  }
  std::vector<Acc> acc(out.size(), init);
  std::vector<double> shift(out.size(), 0.0);  // LogSumExp: max of each group
  const auto sin = broadcast_strides(in_shape, in_shape);
  const auto sout = broadcast_strides(keep_shape, in_shape);
  if (kind == Reduce::kLogSumExp) {
    std::vector<double> mx(out.size(), -std::numeric_limits<double>::infinity());
    for_each_broadcast(in_shape, sin, sout, [&](int64_t i, int64_t, int64_t o) {
      mx[o] = std::max(mx[o], static_cast<double>(in[i]));
    });
    for (size_t o = 0; o < mx.size(); ++o) shift[o] = std::isfinite(mx[o]) ? mx[o] : 0.0;
  }
  const int64_t group = out.empty() ? 0 : count(in_shape) / static_cast<int64_t>(out.size());
  // + and * in Acc: exact-ish double for floats, wrapping (through uint64) for integers.
  auto add = [](Acc a, Acc b) -> Acc {
    if constexpr (std::is_floating_point_v<T>) {
      return a + b;
    } else {
      return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    }
  };
  auto mul = [](Acc a, Acc b) -> Acc {
    if constexpr (std::is_floating_point_v<T>) {
      return a * b;
    } else {
      return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    }
  };
  for_each_broadcast(in_shape, sin, sout, [&](int64_t i, int64_t, int64_t o) {
    const Acc v = static_cast<Acc>(in[i]);
    Acc& a = acc[o];
    switch (kind) {
      case Reduce::kMax:
      case Reduce::kMin:
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(a)) break;  // NaN propagates
          if (std::isnan(v)) a = v;
        }
        if (is_max ? v > a : v < a) a = v;
        break;
      case Reduce::kProd:
        a = mul(a, v);
        break;
      case Reduce::kSumSquare:
      case Reduce::kL2:
        a = add(a, mul(v, v));
        break;
      case Reduce::kL1:
        a = add(a, v < 0 ? mul(v, Acc{-1}) : v);
        break;
      case Reduce::kLogSumExp:
        a += static_cast<Acc>(std::exp(static_cast<double>(v) - shift[o]));
        break;
      default:  // kSum, kMean, kLogSum
        a = add(a, v);
        break;
    }
  });
  for (size_t o = 0; o < out.size(); ++o) {
    double r = static_cast<double>(acc[o]);
    switch (kind) {
      case Reduce::kMean:
        r = group == 0 ? std::numeric_limits<double>::quiet_NaN() : r / static_cast<double>(group);
        break;
      case Reduce::kL2:
        r = std::sqrt(r);
        break;
      case Reduce::kLogSum:
        r = std::log(r);
        break;
      case Reduce::kLogSumExp:
        r = std::log(r) + shift[o];
        break;
      default:
        break;
    }
    if constexpr (std::is_floating_point_v<T>) {
      out[o] = static_cast<T>(r);
    } else if (kind == Reduce::kMean || kind == Reduce::kL2) {
      out[o] = std::isfinite(r) ? static_cast<T>(std::trunc(r)) : T{0};
    } else {
      out[o] = static_cast<T>(acc[o]);  // wraps to T
    }
  }
}

HostOutputs reduce_kind(const OpCall& c, Reduce kind) {
  auto x = input(c, 0);
  if (!x) return x.error();
  const Shape& s = (*x)->shape;
  auto mask = reduce_axes(c, s.size());
  if (!mask) return mask.error();
  if (!*mask) return single(**x);  // noop_with_empty_axes
  auto keepdims = int_attr(c, "keepdims", 1);
  if (!keepdims) return keepdims.error();
  Shape keep = s, out_shape;
  for (size_t d = 0; d < s.size(); ++d) {
    if ((**mask)[d]) {
      keep[d] = 1;
      if (*keepdims) out_shape.push_back(1);
    } else {
      out_shape.push_back(s[d]);
    }
  }
  NpyArray out = NpyArray::zeros((*x)->dtype, out_shape);
  return dispatch(c, **x, [&]<typename T>(T) -> HostOutputs {
    reduce_values<T>(kind, s, keep, (*x)->view<T>(), out.view<T>());
    return single(std::move(out));
  });
}

}  // namespace

HostOutputs matmul(const OpCall& c) {
  auto a = input(c, 0);
  if (!a) return a.error();
  auto b = input(c, 1);
  if (!b) return b.error();
  NPU_TRY(need_dtype(c, **b, {DType::kFloat32}));
  auto g = matmul_geometry(c, (*a)->shape, (*b)->shape);
  if (!g) return g.error();
  NpyArray out = NpyArray::zeros(DType::kFloat32, g->out_shape);
  if (count(g->out_shape) == 0 || g->k == 0) return single(std::move(out));  // sums of nothing
  auto av = (*a)->view<float>();
  auto bv = (*b)->view<float>();
  auto ov = out.view<float>();
  const int64_t m = g->m, k = g->k, n = g->n;
  ref::MatmulShape ms;
  ms.m = static_cast<uint32_t>(m);
  ms.k = static_cast<uint32_t>(k);
  ms.n = static_cast<uint32_t>(n);
  Expected<void> status = ok();
  for_each_broadcast(g->batch, g->a_strides, g->b_strides, [&](int64_t o, int64_t i, int64_t j) {
    if (!status) return;
    status = ref::matmul_f32(ms, av.subspan(static_cast<size_t>(i * m * k), m * k),
                             bv.subspan(static_cast<size_t>(j * k * n), k * n), {}, -kInf, kInf,
                             ov.subspan(static_cast<size_t>(o * m * n), m * n));
  });
  if (!status) return op_error(c, status.error().message);
  return single(std::move(out));
}

/// Y = alpha * A' B' + beta * C (float32), A' = transA ? A^T : A, B' likewise; C broadcast
/// unidirectionally to [M, N] and skipped when absent or beta is 0 (as ONNX's reference).
HostOutputs gemm(const OpCall& c) {
  auto a = input(c, 0);
  if (!a) return a.error();
  auto b = input(c, 1);
  if (!b) return b.error();
  const NpyArray* cin = optional_input(c, 2);
  NPU_TRY(need_dtype(c, **b, {DType::kFloat32}));
  if (cin) NPU_TRY(need_dtype(c, *cin, {DType::kFloat32}, "C"));
  if ((*a)->shape.size() != 2 || (*b)->shape.size() != 2) {
    return op_error(c, "A and B must be 2-d, got " + shape_text((*a)->shape) + " and " +
                           shape_text((*b)->shape));
  }
  auto trans_a = int_attr(c, "transA", 0);
  if (!trans_a) return trans_a.error();
  auto trans_b = int_attr(c, "transB", 0);
  if (!trans_b) return trans_b.error();
  auto alpha = float_attr(c, "alpha", 1.0f);
  if (!alpha) return alpha.error();
  auto beta = float_attr(c, "beta", 1.0f);
  if (!beta) return beta.error();
  const Shape& sa = (*a)->shape;
  const Shape& sb = (*b)->shape;
  const int64_t m = *trans_a ? sa[1] : sa[0], k = *trans_a ? sa[0] : sa[1];
  const int64_t kb = *trans_b ? sb[1] : sb[0], n = *trans_b ? sb[0] : sb[1];
  if (k != kb) {
    return op_error(c, "shapes " + shape_text(sa) + " and " + shape_text(sb) +
                           " do not match with transA " + std::to_string(*trans_a) + ", transB " +
                           std::to_string(*trans_b));
  }
  for (int64_t d : {m, k, n}) {
    if (d > std::numeric_limits<uint32_t>::max()) return op_error(c, "dimension too large");
  }
  NPU_TRY(check_work(c, count({m, n}), k, "multiply-accumulates"));
  NpyArray out = NpyArray::zeros(DType::kFloat32, {m, n});
  auto ov = out.view<float>();
  if (m > 0 && n > 0 && k > 0) {
    std::optional<NpyArray> transposed;  // A^T when transA; A itself is used as is
    if (*trans_a) {
      auto t = permute(c, **a, {1, 0});
      if (!t) return t.error();
      transposed = std::move(*t);
    }
    const NpyArray& at = transposed ? *transposed : **a;
    ref::MatmulShape ms;
    ms.m = static_cast<uint32_t>(m);
    ms.k = static_cast<uint32_t>(k);
    ms.n = static_cast<uint32_t>(n);
    ms.transpose_b = *trans_b != 0;
    if (auto r = ref::matmul_f32(ms, at.view<float>(), (*b)->view<float>(), {}, -kInf, kInf, ov);
        !r) {
      return op_error(c, r.error().message);
    }
  }
  for (float& v : ov) v *= *alpha;
  if (cin && *beta != 0.0f) {
    auto shape = broadcast(c, cin->shape, {m, n});
    if (!shape) return shape.error();
    if (*shape != Shape{m, n}) {
      return op_error(
          c, "C shape " + shape_text(cin->shape) + " does not broadcast to " + shape_text({m, n}));
    }
    auto cv = cin->view<float>();
    for_each_broadcast(*shape, broadcast_strides(cin->shape, *shape),
                       broadcast_strides(*shape, *shape),
                       [&](int64_t o, int64_t i, int64_t) { ov[o] += cv[i] * *beta; });
  }
  return single(std::move(out));
}

HostOutputs conv(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto w = input(c, 1);
  if (!w) return w.error();
  const NpyArray* bias = optional_input(c, 2);
  NPU_TRY(need_dtype(c, **w, {DType::kFloat32}, "weights"));
  if (bias) NPU_TRY(need_dtype(c, *bias, {DType::kFloat32}, "bias"));
  if ((*x)->shape.size() > 4) return conv_nd(c, **x, **w, bias);
  auto g = conv_geometry(c, (*x)->shape, (*w)->shape);
  if (!g) return g.error();
  if (bias) {
    NPU_TRY(need_dtype(c, *bias, {DType::kFloat32}, "bias"));
    if (bias->num_elements() != g->s.out_c) {
      return op_error(c, "bias shape " + shape_text(bias->shape) + " does not match " +
                             std::to_string(g->s.out_c) + " output channels");
    }
  }
  NPU_TRY(check_output(c, DType::kFloat32, g->out_shape));
  if (count(g->out_shape) == 0) return single(NpyArray::zeros(DType::kFloat32, g->out_shape));
  auto xn = conv_input_nhwc(c, **x, *g);
  if (!xn) return xn.error();
  auto wn = conv_weights_ohwi(c, **w, *g);
  if (!wn) return wn.error();
  const ref::Conv2dShape& s = g->s;
  NpyArray y = NpyArray::zeros(DType::kFloat32, {s.batch, s.out_h, s.out_w, s.out_c});
  if (auto r = ref::conv2d_f32(s, xn->view<float>(), wn->view<float>(),
                               bias ? bias->view<float>() : std::span<const float>{}, -kInf, kInf,
                               y.view<float>());
      !r) {
    return op_error(c, r.error().message);
  }
  auto out = conv_output_nchw(c, y, *g);
  if (!out) return out.error();
  return single(std::move(*out));
}

/// y = scale * (x - mean) / sqrt(var + epsilon) + B per channel (axis 1). With training_mode
/// 1 (opset >= 14) mean and var are the batch's (population variance) and the optional
/// outputs 2 and 3 are running_mean = mean * momentum + batch_mean * (1 - momentum) and
/// running_var likewise.
HostOutputs batch_norm(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto training = int_attr(c, "training_mode", 0);
  if (!training) return training.error();
  if ((*training == 0 && c.num_outputs != 1) || c.num_outputs > 3) {
    return op_error(c, "outputs beyond Y need training_mode 1 (running mean and variance only)");
  }
  auto eps = float_attr(c, "epsilon", 1e-5f);
  if (!eps) return eps.error();
  auto momentum = float_attr(c, "momentum", 0.9f);
  if (!momentum) return momentum.error();
  const Shape& s = (*x)->shape;
  if (s.size() < 2) return op_error(c, "input must have rank >= 2, got " + shape_text(s));
  const int64_t channels = s[1];
  std::span<const float> params[4];  // scale, B, mean, var
  const char* names[4] = {"scale", "B", "mean", "var"};
  for (size_t i = 0; i < 4; ++i) {
    auto p = input(c, i + 1);
    if (!p) return p.error();
    NPU_TRY(need_dtype(c, **p, {DType::kFloat32}, names[i]));
    if ((*p)->num_elements() != channels) {
      return op_error(c, std::string(names[i]) + " shape " + shape_text((*p)->shape) +
                             " does not match " + std::to_string(channels) + " channels");
    }
    params[i] = (*p)->view<float>();
  }
  int64_t inner = 1;
  for (size_t i = 2; i < s.size(); ++i) inner *= s[i];
  const auto channel_of = [&](int64_t i) { return static_cast<size_t>((i / inner) % channels); };
  auto xv = (*x)->view<float>();
  std::vector<float> mean(params[2].begin(), params[2].end());
  std::vector<float> var(params[3].begin(), params[3].end());
  if (*training) {  // batch statistics, accumulated in double
    std::vector<double> sum(static_cast<size_t>(channels)), sq(static_cast<size_t>(channels));
    for (int64_t i = 0; i < static_cast<int64_t>(xv.size()); ++i) sum[channel_of(i)] += xv[i];
    const double per_channel = static_cast<double>(count(s) / std::max<int64_t>(channels, 1));
    for (size_t ch = 0; ch < mean.size(); ++ch)
      mean[ch] = static_cast<float>(sum[ch] / per_channel);
    for (int64_t i = 0; i < static_cast<int64_t>(xv.size()); ++i) {
      const double d = xv[i] - static_cast<double>(mean[channel_of(i)]);
      sq[channel_of(i)] += d * d;
    }
    for (size_t ch = 0; ch < var.size(); ++ch) var[ch] = static_cast<float>(sq[ch] / per_channel);
  }
  NpyArray out = **x;
  auto ov = out.view<float>();
  for (int64_t i = 0; i < static_cast<int64_t>(ov.size()); ++i) {
    const size_t ch = channel_of(i);
    ov[i] = params[0][ch] * (ov[i] - mean[ch]) / std::sqrt(var[ch] + *eps) + params[1][ch];
  }
  std::vector<NpyArray> outs{std::move(out)};
  for (size_t k = 1; k < c.num_outputs; ++k) {  // running_mean, running_var
    const std::vector<float>& batch = k == 1 ? mean : var;
    NpyArray running = NpyArray::zeros(DType::kFloat32, {channels});
    auto rv = running.view<float>();
    for (size_t ch = 0; ch < rv.size(); ++ch) {
      rv[ch] = params[k + 1][ch] * *momentum + batch[ch] * (1.0f - *momentum);
    }
    outs.push_back(std::move(running));
  }
  return outs;
}

/// MaxPool, AveragePool: the row's NPU_POOL_* kind over windows.
HostOutputs pool(const OpCall& c) {
  return pool_window(c, c.schema->code, /*global=*/false);
}

HostOutputs global_pool(const OpCall& c) {
  return pool_window(c, c.schema->code, /*global=*/true);
}

/// ReduceSum/Mean/Max/Min: the row's NPU_REDUCE_* kind.
HostOutputs reduce(const OpCall& c) {
  switch (c.schema->code) {
    case NPU_REDUCE_SUM:
      return reduce_kind(c, Reduce::kSum);
    case NPU_REDUCE_MEAN:
      return reduce_kind(c, Reduce::kMean);
    case NPU_REDUCE_MAX:
      return reduce_kind(c, Reduce::kMax);
    case NPU_REDUCE_MIN:
      return reduce_kind(c, Reduce::kMin);
    default:
      return op_error(c, "no reduction for code " + std::to_string(c.schema->code));
  }
}

HostOutputs reduce_prod(const OpCall& c) {
  return reduce_kind(c, Reduce::kProd);
}

HostOutputs reduce_sum_square(const OpCall& c) {
  return reduce_kind(c, Reduce::kSumSquare);
}

HostOutputs reduce_l1(const OpCall& c) {
  return reduce_kind(c, Reduce::kL1);
}

HostOutputs reduce_l2(const OpCall& c) {
  return reduce_kind(c, Reduce::kL2);
}

HostOutputs reduce_log_sum(const OpCall& c) {
  return reduce_kind(c, Reduce::kLogSum);
}

HostOutputs reduce_log_sum_exp(const OpCall& c) {
  return reduce_kind(c, Reduce::kLogSumExp);
}

}  // namespace npu::ops::detail
