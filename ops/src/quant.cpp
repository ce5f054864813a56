// Quantized host ops (npu/ops/ops.h): QuantizeLinear and DequantizeLinear
// (ref::quantize_tensor / dequantize_tensor), ConvInteger and QLinearConv (ref::conv2d_int),
// MatMulInteger and QLinearMatMul (ref::matmul_int).
//
// Requantization: ONNX's reference computes the combined scale in float32
// (x_scale * w_scale / y_scale), multiplies the int32 accumulator by it in float64 and rounds
// half to even. A float32 scale is exactly multiplier / 2^shift (ref::quantize_multiplier), so
// ref::requantize's exact product gives the same result whenever the float64 product is
// exact, i.e. for every accumulator below 2^29 in magnitude (and is the exact value beyond).
//
// What they accept and compute (float32 unless noted; "numeric" = float32, float64 and the
// integer dtypes):
// - QuantizeLinear (float32 or int32 in; uint8 out unless the zero point is int8; per tensor
//   or per axis with axis; round half to even, saturate), DequantizeLinear (int8, uint8, int32
//   with zero point 0; per tensor or per axis);
// - ConvInteger (int8/uint8 x and w, scalar x zero point, scalar or per-output-channel w zero
//   point, int32 out), QLinearConv (per-tensor x and y, per-tensor or per-output-channel w,
//   int32 bias), MatMulInteger (a zero point per tensor or per row, b per tensor or per
//   column), QLinearMatMul (a per tensor or per row, b per tensor or per column, batched).
//   Requantization multiplies the accumulator by float32(float32(s_x * s_w) / s_y) exactly
//   and rounds half to even (ref::requantize), as ONNX's reference does in float64;
#include <cmath>
#include <type_traits>

#include "attributes.h"
#include "broadcasting.h"
#include "conv_geometry.h"
#include "dtype_dispatch.h"
#include "matmul_geometry.h"
#include "npu/ref/matmul.h"
#include "npu/ref/quant.h"
#include "operands.h"

namespace npu::ops::detail {
namespace {

// ---- parameters ----

/// Calls f(T{}) for T = int8_t or uint8_t, the element type of `a`.
template <typename F>
HostOutputs with_int8(const OpCall& c, const NpyArray& a, const char* what, F&& f) {
  if (a.dtype == DType::kInt8) return f(int8_t{});
  if (a.dtype == DType::kUint8) return f(uint8_t{});
  return op_error(
      c, std::string(what) + " dtype " + format::dtype_name(a.dtype) + " is not supported");
}

/// Calls f(T{}) for the output element type int32_t, int8_t or uint8_t.
template <typename F>
HostOutputs with_int_output(const OpCall& c, DType t, F&& f) {
  if (t == DType::kInt32) return f(int32_t{});
  if (t == DType::kInt8) return f(int8_t{});
  if (t == DType::kUint8) return f(uint8_t{});
  return op_error(c, std::string("output dtype ") + format::dtype_name(t) + " is not supported");
}

/// Calls f(TA{}, TB{}, TO{}) for the int8/uint8 element types of a and b and the output type.
template <typename F>
HostOutputs with_int_types(const OpCall& c, const NpyArray& a, const char* a_name,
                           const NpyArray& b, const char* b_name, DType out, F&& f) {
  return with_int8(c, a, a_name, [&]<typename TA>(TA) -> HostOutputs {
    return with_int8(c, b, b_name, [&]<typename TB>(TB) -> HostOutputs {
      return with_int_output(c, out,
                             [&]<typename TO>(TO) -> HostOutputs { return f(TA{}, TB{}, TO{}); });
    });
  });
}

/// Values of a scalar or per-channel parameter as `n` entries (absent: `def`); `dtype` is the
/// required element type.
template <typename V>
Expected<std::vector<V>> channel_values(const OpCall& c, const NpyArray* p, int64_t n, DType dtype,
                                        const char* what, V def) {
  if (p == nullptr) return std::vector<V>(static_cast<size_t>(n), def);
  if (p->dtype != dtype) {
    return op_error(c, std::string(what) + " dtype " + format::dtype_name(p->dtype) +
                           " is not supported (expected " + format::dtype_name(dtype) + ")");
  }
  const int64_t count = p->num_elements();
  if (count != 1 && count != n) {
    return op_error(c, std::string(what) + " shape " + shape_text(p->shape) + " is neither a " +
                           "scalar nor " + std::to_string(n) + " values");
  }
  std::vector<V> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    out[static_cast<size_t>(i)] = static_cast<V>(number_at(*p, count == 1 ? 0 : i));
  }
  return out;
}

/// A per-tensor parameter (one element).
template <typename V>
Expected<V> scalar_value(const OpCall& c, const NpyArray* p, DType dtype, const char* what, V def) {
  if (p) NPU_TRY(need_scalar(c, *p, what));
  auto v = channel_values<V>(c, p, 1, dtype, what, def);
  if (!v) return v.error();
  return (*v)[0];
}

/// float32(float32(a * b) / y) as multiplier / 2^shift; it must be positive, finite, < 2^31.
Expected<ref::QuantMultiplier> requant_scale(const OpCall& c, float a, float b, float y) {
  const float product = a * b;
  const float scale = product / y;
  if (!(scale > 0.0f) || !std::isfinite(scale) || scale >= 2147483648.0f) {
    return op_error(c,
                    "combined scale " + std::to_string(scale) + " must be positive and below 2^31");
  }
  return ref::quantize_multiplier(scale);
}

// ---- QuantizeLinear, DequantizeLinear ----

/// Per-tensor (one-element scale) or per-axis (1-d scale of x.shape[axis] values) parameters.
struct AxisQuant {
  std::vector<npu_qparam> params;
  ref::QuantParams q;  // without params, which quant() points at this object's

  ref::QuantParams quant() const {
    ref::QuantParams p = q;
    if (p.channels > 1) p.params = params;
    return p;
  }
};

Expected<AxisQuant> axis_quant(const OpCall& c, const NpyArray& x, const NpyArray& scale,
                               const NpyArray* zp, DType zp_dtype) {
  NPU_TRY(need_dtype(c, scale, {DType::kFloat32}, "scale"));
  AxisQuant a;
  int64_t channels = 1;
  size_t axis = 0;
  if (scale.num_elements() != 1) {
    if (scale.shape.size() != 1) {
      return op_error(c, "scale shape " + shape_text(scale.shape) + " is neither a scalar nor 1-d");
    }
    auto axis_attr = int_attr(c, "axis", 1);
    if (!axis_attr) return axis_attr.error();
    auto ax = norm_axis(c, *axis_attr, x.shape.size());
    if (!ax) return ax.error();
    axis = *ax;
    channels = x.shape[axis];
    if (scale.num_elements() != channels) {
      return op_error(c, "scale has " + std::to_string(scale.num_elements()) + " values for " +
                             std::to_string(channels) + " channels on axis " +
                             std::to_string(axis));
    }
  }
  auto scales = channel_values<float>(c, &scale, channels, DType::kFloat32, "scale", 1.0f);
  if (!scales) return scales.error();
  auto zps = channel_values<int32_t>(c, zp, channels, zp_dtype, "zero point", 0);
  if (!zps) return zps.error();
  if (zp && zp->num_elements() != scale.num_elements()) {
    return op_error(c, "zero point shape " + shape_text(zp->shape) + " does not match scale " +
                           shape_text(scale.shape));
  }
  for (int64_t i = 0; i < channels; ++i) {
    a.params.push_back({(*scales)[static_cast<size_t>(i)], (*zps)[static_cast<size_t>(i)]});
  }
  if (channels == 1) {
    a.q.scale = a.params[0].scale;
    a.q.zp = a.params[0].zp;
  } else {  // per axis (an empty axis leaves nothing to quantize)
    int64_t inner = 1;
    for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
    a.q.channels = static_cast<uint32_t>(channels);
    a.q.inner = static_cast<uint32_t>(inner);
  }
  return a;
}

// ---- ConvInteger, QLinearConv ----

/// Runs ref::conv2d_int on ONNX-layout x and w (int8/uint8 each) into `out_dtype`.
HostOutputs int_conv(const OpCall& c, const NpyArray& x, const NpyArray& w, const ConvGeometry& g,
                     std::span<const npu_chan_qparams> chan, const ref::IntOutput& o,
                     DType out_dtype) {
  if (count(g.out_shape) == 0) return single(NpyArray::zeros(out_dtype, g.out_shape));
  auto xn = conv_input_nhwc(c, x, g);
  if (!xn) return xn.error();
  auto wn = conv_weights_ohwi(c, w, g);
  if (!wn) return wn.error();
  const ref::Conv2dShape& s = g.s;
  NpyArray y = NpyArray::zeros(out_dtype, {s.batch, s.out_h, s.out_w, s.out_c});
  auto r = with_int_types(c, x, "input", w, "weights", out_dtype,
                          [&]<typename TX, typename TW, typename TO>(TX, TW, TO) -> HostOutputs {
                            if (auto e = ref::conv2d_int<TX, TW, TO>(
                                    s, xn->view<TX>(), wn->view<TW>(), chan, o, y.view<TO>());
                                !e) {
                              return op_error(c, e.error().message);
                            }
                            return std::vector<NpyArray>{};
                          });
  if (!r) return r.error();
  auto out = conv_output_nchw(c, y, g);
  if (!out) return out.error();
  return single(std::move(*out));
}

/// The output dtype and zero point of a QLinear op: y_zero_point's, else the input's type.
Expected<std::pair<DType, int32_t>> qlinear_output(const OpCall& c, const NpyArray* y_zp,
                                                   DType input_dtype) {
  const DType t = y_zp ? y_zp->dtype : input_dtype;
  if (t != DType::kInt8 && t != DType::kUint8) {
    return op_error(
        c, std::string("y_zero_point dtype ") + format::dtype_name(t) + " is not supported");
  }
  auto zp = scalar_value<int32_t>(c, y_zp, t, "y_zero_point", 0);
  if (!zp) return zp.error();
  return std::pair{t, *zp};
}

ref::IntOutput int_output(int32_t in_zp, DType out_dtype, int32_t out_zp) {
  ref::IntOutput o;
  o.in_zp = in_zp;
  o.out_zp = out_zp;
  o.clamp_min = out_dtype == DType::kInt8 ? -128 : 0;
  o.clamp_max = out_dtype == DType::kInt8 ? 127 : 255;
  return o;
}

// ---- MatMulInteger, QLinearMatMul ----

/// Batched ref::matmul_int, one row at a time: a_zp has m entries (per row), chan n entries
/// (per column) or m * n (per row and column).
HostOutputs int_matmul(const OpCall& c, const NpyArray& a, const NpyArray& b,
                       const MatmulGeometry& g, const std::vector<int32_t>& a_zp,
                       const std::vector<npu_chan_qparams>& chan, const ref::IntOutput& o,
                       DType out_dtype) {
  NpyArray out = NpyArray::zeros(out_dtype, g.out_shape);
  const int64_t m = g.m, k = g.k, n = g.n;
  ref::MatmulShape ms;
  ms.m = 1;
  ms.k = static_cast<uint32_t>(k);
  ms.n = static_cast<uint32_t>(n);
  const bool per_row_chan = static_cast<int64_t>(chan.size()) != n;
  auto r = with_int_types(
      c, a, "A", b, "B", out_dtype,
      [&]<typename TA, typename TB, typename TO>(TA, TB, TO) -> HostOutputs {
        auto ov = out.view<TO>();
        if (k == 0) {  // sums of nothing: 0 requantized is the output zero point
          for (TO& v : ov) v = static_cast<TO>(o.out_zp);
          return std::vector<NpyArray>{};
        }
        auto av = a.view<TA>();
        auto bv = b.view<TB>();
        Expected<void> status = ok();
        for_each_broadcast(
            g.batch, g.a_strides, g.b_strides, [&](int64_t bo, int64_t ia, int64_t ib) {
              for (int64_t row = 0; row < m && status; ++row) {
                ref::IntOutput ro = o;
                ro.in_zp = a_zp[static_cast<size_t>(row)];
                const auto cs = std::span<const npu_chan_qparams>(chan).subspan(
                    per_row_chan ? static_cast<size_t>(row * n) : 0, static_cast<size_t>(n));
                status = ref::matmul_int<TA, TB, TO>(
                    ms, av.subspan(static_cast<size_t>((ia * m + row) * k), k),
                    bv.subspan(static_cast<size_t>(ib * k * n), k * n), cs, ro,
                    ov.subspan(static_cast<size_t>((bo * m + row) * n), n));
              }
            });
        if (!status) return op_error(c, status.error().message);
        return std::vector<NpyArray>{};
      });
  if (!r) return r.error();
  return single(std::move(out));
}

}  // namespace

/// y = saturate(rint(x / scale) + zp); x float32 (or int32, converted), y uint8 unless the
/// zero point says int8.
HostOutputs quantize_linear(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto scale = input(c, 1);
  if (!scale) return scale.error();
  const NpyArray* zp = optional_input(c, 2);
  const DType out_dtype = zp ? zp->dtype : DType::kUint8;
  if (out_dtype != DType::kInt8 && out_dtype != DType::kUint8) {
    return op_error(
        c, std::string("zero point dtype ") + format::dtype_name(out_dtype) + " is not supported");
  }
  auto q = axis_quant(c, **x, **scale, zp, out_dtype);
  if (!q) return q.error();
  std::vector<float> converted;
  std::span<const float> xv = (*x)->view<float>();
  if ((*x)->dtype == DType::kInt32) {
    for (int32_t v : (*x)->view<int32_t>()) converted.push_back(static_cast<float>(v));
    xv = converted;
  }
  NpyArray out = NpyArray::zeros(out_dtype, (*x)->shape);
  return with_int8(c, out, "output", [&]<typename T>(T) -> HostOutputs {
    if (auto r = ref::quantize_tensor<T>(xv, out.view<T>(), q->quant()); !r) {
      return op_error(c, r.error().message);
    }
    return single(std::move(out));
  });
}

/// y = (x - zp) * scale in float32; x int8, uint8 or int32 (whose zero point must be 0).
HostOutputs dequantize_linear(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto scale = input(c, 1);
  if (!scale) return scale.error();
  const NpyArray* zp = optional_input(c, 2);
  auto q = axis_quant(c, **x, **scale, zp, (*x)->dtype);
  if (!q) return q.error();
  NpyArray out = NpyArray::zeros(DType::kFloat32, (*x)->shape);
  return with_int_output(c, (*x)->dtype, [&]<typename T>(T) -> HostOutputs {
    if constexpr (std::is_same_v<T, int32_t>) {
      for (const npu_qparam& p : q->params) {
        if (p.zp != 0) return op_error(c, "int32 input needs a zero point of 0");
      }
    }
    if (auto r = ref::dequantize_tensor<T>((*x)->view<T>(), out.view<float>(), q->quant()); !r) {
      return op_error(c, r.error().message);
    }
    return single(std::move(out));
  });
}

/// ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32: scalar x zero point, scalar or
/// per-output-channel w zero point.
HostOutputs conv_integer(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto w = input(c, 1);
  if (!w) return w.error();
  auto g = conv_geometry(c, (*x)->shape, (*w)->shape);
  if (!g) return g.error();
  auto x_zp = scalar_value<int32_t>(c, optional_input(c, 2), (*x)->dtype, "x_zero_point", 0);
  if (!x_zp) return x_zp.error();
  auto w_zp =
      channel_values<int32_t>(c, optional_input(c, 3), g->s.out_c, (*w)->dtype, "w_zero_point", 0);
  if (!w_zp) return w_zp.error();
  std::vector<npu_chan_qparams> chan(g->s.out_c);
  for (size_t i = 0; i < chan.size(); ++i) chan[i] = {0, 0, 0, (*w_zp)[i]};
  ref::IntOutput o;
  o.in_zp = *x_zp;
  return int_conv(c, **x, **w, *g, chan, o, DType::kInt32);
}

/// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?): per-tensor x and y,
/// per-tensor or per-output-channel w; int32 bias.
HostOutputs qlinear_conv(const OpCall& c) {
  const NpyArray* in[9];
  for (size_t i = 0; i < 9; ++i) in[i] = optional_input(c, i);
  for (size_t i : {0, 1, 3, 4, 6}) {
    if (!in[i]) return op_error(c, "missing input " + std::to_string(i));
  }
  auto g = conv_geometry(c, in[0]->shape, in[3]->shape);
  if (!g) return g.error();
  const int64_t m = g->s.out_c;
  auto x_scale = scalar_value<float>(c, in[1], DType::kFloat32, "x_scale", 1.0f);
  if (!x_scale) return x_scale.error();
  auto x_zp = scalar_value<int32_t>(c, in[2], in[0]->dtype, "x_zero_point", 0);
  if (!x_zp) return x_zp.error();
  auto w_scale = channel_values<float>(c, in[4], m, DType::kFloat32, "w_scale", 1.0f);
  if (!w_scale) return w_scale.error();
  auto w_zp = channel_values<int32_t>(c, in[5], m, in[3]->dtype, "w_zero_point", 0);
  if (!w_zp) return w_zp.error();
  auto y_scale = scalar_value<float>(c, in[6], DType::kFloat32, "y_scale", 1.0f);
  if (!y_scale) return y_scale.error();
  auto y = qlinear_output(c, in[7], in[0]->dtype);
  if (!y) return y.error();
  if (in[8] && in[8]->num_elements() != m) {
    return op_error(c, "bias shape " + shape_text(in[8]->shape) + " does not match " +
                           std::to_string(m) + " output channels");
  }
  auto bias = channel_values<int32_t>(c, in[8], m, DType::kInt32, "bias", 0);
  if (!bias) return bias.error();
  std::vector<npu_chan_qparams> chan(static_cast<size_t>(m));
  for (size_t i = 0; i < chan.size(); ++i) {
    auto q = requant_scale(c, *x_scale, (*w_scale)[i], *y_scale);
    if (!q) return q.error();
    chan[i] = {(*bias)[i], q->multiplier, q->shift, (*w_zp)[i]};
  }
  return int_conv(c, *in[0], *in[3], *g, chan, int_output(*x_zp, y->first, y->second), y->first);
}

/// MatMulInteger(A, B, a_zero_point?, b_zero_point?) -> int32; a_zero_point per tensor or per
/// row of A, b_zero_point per tensor or per column of B.
HostOutputs matmul_integer(const OpCall& c) {
  auto a = input(c, 0);
  if (!a) return a.error();
  auto b = input(c, 1);
  if (!b) return b.error();
  auto g = matmul_geometry(c, (*a)->shape, (*b)->shape);
  if (!g) return g.error();
  auto a_zp =
      channel_values<int32_t>(c, optional_input(c, 2), g->m, (*a)->dtype, "a_zero_point", 0);
  if (!a_zp) return a_zp.error();
  auto b_zp =
      channel_values<int32_t>(c, optional_input(c, 3), g->n, (*b)->dtype, "b_zero_point", 0);
  if (!b_zp) return b_zp.error();
  std::vector<npu_chan_qparams> chan(static_cast<size_t>(g->n));
  for (size_t j = 0; j < chan.size(); ++j) chan[j] = {0, 0, 0, (*b_zp)[j]};
  return int_matmul(c, **a, **b, *g, *a_zp, chan, ref::IntOutput{}, DType::kInt32);
}

/// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, bias?): a's parameters
/// per tensor or per row, b's per tensor or per column, y's per tensor; `bias` (int32 per
/// column) is the compiler's IR extension (npu/compiler/quantize.h), not ONNX.
HostOutputs qlinear_matmul(const OpCall& c) {
  const NpyArray* in[9];
  for (size_t i = 0; i < 9; ++i) in[i] = optional_input(c, i);
  for (size_t i : {0, 1, 3, 4, 6}) {
    if (!in[i]) return op_error(c, "missing input " + std::to_string(i));
  }
  auto g = matmul_geometry(c, in[0]->shape, in[3]->shape);
  if (!g) return g.error();
  const int64_t m = g->m, n = g->n;
  auto a_scale = channel_values<float>(c, in[1], m, DType::kFloat32, "a_scale", 1.0f);
  if (!a_scale) return a_scale.error();
  auto a_zp = channel_values<int32_t>(c, in[2], m, in[0]->dtype, "a_zero_point", 0);
  if (!a_zp) return a_zp.error();
  auto b_scale = channel_values<float>(c, in[4], n, DType::kFloat32, "b_scale", 1.0f);
  if (!b_scale) return b_scale.error();
  auto b_zp = channel_values<int32_t>(c, in[5], n, in[3]->dtype, "b_zero_point", 0);
  if (!b_zp) return b_zp.error();
  auto y_scale = scalar_value<float>(c, in[6], DType::kFloat32, "y_scale", 1.0f);
  if (!y_scale) return y_scale.error();
  auto y = qlinear_output(c, in[7], in[0]->dtype);
  if (!y) return y.error();
  auto bias = channel_values<int32_t>(c, in[8], n, DType::kInt32, "bias", 0);
  if (!bias) return bias.error();
  // Per column, or per row and column when a_scale has one value per row.
  const bool per_row = in[1]->num_elements() != 1;
  std::vector<npu_chan_qparams> chan;
  for (size_t r = 0; r < (per_row ? a_scale->size() : 1); ++r) {
    for (size_t j = 0; j < b_scale->size(); ++j) {
      auto q = requant_scale(c, (*a_scale)[r], (*b_scale)[j], *y_scale);
      if (!q) return q.error();
      chan.push_back({(*bias)[j], q->multiplier, q->shift, (*b_zp)[j]});
    }
  }
  return int_matmul(c, *in[0], *in[3], *g, *a_zp, chan, int_output(0, y->first, y->second),
                    y->first);
}

}  // namespace npu::ops::detail
