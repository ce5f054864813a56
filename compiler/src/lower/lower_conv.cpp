// Convolutions onto CONV2D layers: Conv (fp32 bias, fused activation as a clamp or an
// in-place ACTIVATION layer), ConvInteger and QLinearConv (per-channel requantization
// parameters); 1-D convs as 2-D with height 1, weights reordered OHWI once.
#include <cstring>

#include "lower/lower_ops.h"

namespace npu::compiler::detail {

using codegen::TensorDesc;

namespace {

/// OIHW (or OIW) constant weights reordered to OHWI into `out` (w.data.size() bytes).
void to_ohwi(const NpyArray& w, std::span<std::byte> out) {
  const int64_t O = w.shape[0], I = w.shape[1];
  const int64_t HW = dim_product(w.shape, 2, w.shape.size());
  const size_t es = format::dtype_size(w.dtype);
  if (HW == 1) {  // 1x1 kernels: OIHW is OHWI
    std::memcpy(out.data(), w.data.data(), w.data.size());
    return;
  }
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < I; ++i)
      for (int64_t p = 0; p < HW; ++p) {
        std::memcpy(out.data() + ((o * HW + p) * I + i) * es,
                    w.data.data() + ((o * I + i) * HW + p) * es, es);
      }
}

std::vector<std::byte> to_ohwi(const NpyArray& w) {
  std::vector<std::byte> out(w.data.size());
  to_ohwi(w, out);
  return out;
}

}  // namespace

Expected<void> lower_conv(Lowering& L, const Node& n) {
  const Graph& g = L.g;
  const bool ql = n.op_type == "QLinearConv", ci = n.op_type == "ConvInteger";
  const ValueId x = n.input(0), w = n.input(ql ? 3 : 1), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const NpyArray* wt = g.constant(w);
  if (!wt || wt->shape.size() != xd->size()) return make_error(EINVAL, "weights are not constant");
  const size_t rank = xd->size();
  auto win = window_of(n, *xd, std::vector<int64_t>(wt->shape.begin() + 2, wt->shape.end()));
  if (!win) return win.error();
  const auto OC = static_cast<size_t>(wt->shape[0]);

  codegen::Conv2dOp op;
  op.name = n.name;
  auto in = L.in_perm(x, channels_last_perm(rank));
  if (!in) return in.error();
  op.input = as_2d(*in);
  auto out_s = L.define(y, channels_last_perm(rank));
  if (!out_s) return out_s.error();
  auto out = L.desc(y, *out_s);
  if (!out) return out.error();
  op.output = as_2d(*out);
  auto wdt = npu_dtype(wt->dtype, "weights");
  if (!wdt) return wdt.error();
  const auto kh = win->kh, kw = win->kw;
  const std::vector<uint32_t> wdims{static_cast<uint32_t>(OC), kh, kw,
                                    static_cast<uint32_t>(wt->shape[1])};
  // Half precision: weights converted once, the input read (converted if need be) as half.
  const uint8_t half = n.op_type == "Conv" ? L.matrix_half(wt->dtype) : 0;
  if (half) {
    op.weights = TensorDesc::make(L.add_half_constant(to_ohwi(*wt), wt->dtype, half), half, wdims);
    op.input = op.input.computed_as(half);
  } else {
    op.weights =
        TensorDesc::make(L.constants.add_in_place(
                             wt->data.size(), [&](std::span<std::byte> dst) { to_ohwi(*wt, dst); }),
                         *wdt, wdims);
  }
  op.stride_h = win->sh, op.stride_w = win->sw, op.dil_h = win->dh, op.dil_w = win->dw;
  op.pad_top = win->pt, op.pad_left = win->pl, op.pad_bottom = win->pb, op.pad_right = win->pr;
  op.groups = static_cast<uint32_t>(n.attr_int("group", 1));
  std::optional<Act> post;
  if (n.op_type == "Conv") {
    if (n.input(2) >= 0) {
      auto b = floats_n(g, n.input(2), OC, "bias");
      if (!b) return b.error();
      op.chan_va = L.constants.add(bytes_of(*b));
    }
    NPU_TRY(fused_activation(n, op, post));
  } else {
    if (n.activation) return make_error(EINVAL, "fused activation on an integer conv");
    auto q = int_params(g, n, OC, ci);
    if (!q) return q.error();
    op.in_zp = q->in_zp;
    op.out_zp = q->out_zp;
    op.chan_va = L.constants.add(bytes_of(q->chan));
  }
  NPU_TRY(L.layer(op, &codegen::emit_conv2d));
  return emit_post(L, post, *out, n.name);
}

}  // namespace npu::compiler::detail
