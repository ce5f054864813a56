// Vector-engine ops: elementwise binaries (ELTWISE, the other operand through a strided
// broadcast view in the output's order), activations (ACTIVATION), pools (POOL, auto_pad and
// ceil_mode), Softmax/LogSoftmax (SOFTMAX), reductions over contiguous axes (REDUCE),
// BatchNormalization (SCALE_SHIFT) and Quantize/DequantizeLinear (QUANTIZE, per tensor or
// per axis).
#include <algorithm>
#include <cmath>
#include <map>

#include "lower/lower_ops.h"

namespace npu::compiler::detail {

Expected<void> lower_eltwise(Lowering& L, const Node& n) {
  const ValueId y = n.outputs[0];
  auto yd = L.dims(y);
  if (!yd) return yd.error();
  const size_t rank = yd->size();
  Perm perm = identity_perm(rank);
  for (ValueId v : n.inputs) {
    if (v < 0 || L.g.value(v).is_constant()) continue;
    auto s = L.get(v);
    if (!s) return s.error();
    if (s->perm.size() == rank && s->perm != perm) {
      perm = s->perm;
      break;
    }
  }
  codegen::EltwiseOp op;
  op.name = n.name;
  op.op = device_code(n);
  const std::optional<DType> t = L.g.value(y).dtype;
  auto a = broadcast_view(L, n.input(0), rank, perm, t);
  if (!a) return a.error();
  auto b = broadcast_view(L, n.input(1), rank, perm, t);
  if (!b) return b.error();
  auto out = L.define_desc(y, perm);
  if (!out) return out.error();
  op.a = *a, op.b = *b, op.output = *out;
  if (rank == 0) op.a.dims = op.b.dims = op.output.dims = {1};
  if (rank == 0) op.a.strides = op.b.strides = {};
  return L.layer(op, &codegen::emit_eltwise);
}

Expected<void> lower_activation(Lowering& L, const Node& n) {
  auto act = act_of(n.op_type, &n);
  if (!act) return make_error(EINVAL, "no device activation");
  if (n.op_type == "Clip") {
    if (n.input(1) >= 0) {
      auto lo = floats_n(L.g, n.input(1), 1, "min");
      if (!lo) return lo.error();
      act->alpha = (*lo)[0];
    }
    if (n.input(2) >= 0) {
      auto hi = floats_n(L.g, n.input(2), 1, "max");
      if (!hi) return hi.error();
      act->beta = (*hi)[0];
    }
  }
  auto s = L.get(n.input(0));
  if (!s) return s.error();
  codegen::ActivationOp op;
  op.name = n.name;
  op.func = act->func, op.alpha = act->alpha, op.beta = act->beta;
  auto in = L.physical(n.input(0));
  if (!in) return in.error();
  auto out = L.define_desc(n.outputs[0], s->perm);
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  return L.layer(op, &codegen::emit_activation);
}

Expected<void> lower_pool(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x), yd = L.dims(y);
  if (!xd) return xd.error();
  if (!yd) return yd.error();
  const size_t rank = xd->size();
  codegen::PoolOp op;
  op.name = n.name;
  const bool global = n.op_type.rfind("Global", 0) == 0;
  op.kind = device_code(n);
  op.global = global;
  if (!global) {
    auto win = window_of(n, *xd, n.attr_ints("kernel_shape"));
    if (!win) return win.error();
    if (win->dh != 1 || win->dw != 1) return make_error(EINVAL, "dilated pooling");
    op.k_h = win->kh, op.k_w = win->kw, op.stride_h = win->sh, op.stride_w = win->sw;
    op.pad_top = win->pt, op.pad_left = win->pl, op.pad_bottom = win->pb, op.pad_right = win->pr;
    op.count_pad = n.attr_int("count_include_pad", 0) != 0;
    // ceil_mode: extend the bottom/right padding to reach the inferred output size.
    const int64_t ih = rank == 4 ? (*xd)[2] : 1, iw = (*xd)[rank - 1];
    const int64_t oh = rank == 4 ? (*yd)[2] : 1, ow = (*yd)[rank - 1];
    const int64_t need_b = (oh - 1) * op.stride_h + op.k_h - ih - op.pad_top;
    const int64_t need_r = (ow - 1) * op.stride_w + op.k_w - iw - op.pad_left;
    if (need_b > op.pad_bottom || need_r > op.pad_right) {
      if (op.kind == NPU_POOL_AVG && op.count_pad)
        return make_error(EINVAL, "ceil_mode with count_include_pad");
      op.pad_bottom = static_cast<uint32_t>(std::max<int64_t>(need_b, op.pad_bottom));
      op.pad_right = static_cast<uint32_t>(std::max<int64_t>(need_r, op.pad_right));
    }
  }
  auto in = L.in_perm(x, channels_last_perm(rank));
  if (!in) return in.error();
  op.input = as_2d(*in);
  auto out = L.define_desc(y, channels_last_perm(rank));
  if (!out) return out.error();
  op.output = as_2d(*out);
  return L.layer(op, &codegen::emit_pool);
}

Expected<void> lower_softmax(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const auto rank = static_cast<int64_t>(xd->size());
  int64_t axis = n.attr_int("axis", n.opset < 13 ? 1 : -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) return make_error(EINVAL, "bad axis");
  if (n.opset >= 13 && axis != rank - 1) return make_error(EINVAL, "softmax over a non-last axis");
  const auto rows = static_cast<uint32_t>(dim_product(*xd, 0, static_cast<size_t>(axis)));
  const auto len = static_cast<uint32_t>(dim_product(*xd, static_cast<size_t>(axis), xd->size()));
  codegen::SoftmaxOp op;
  op.name = n.name;
  op.log = device_code(n) == NPU_SOFTMAX_FLAG_LOG;
  auto in = L.in_perm(x, identity_perm(xd->size()));
  if (!in) return in.error();
  auto out = L.define_desc(y, identity_perm(xd->size()));
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  op.input.dims = op.output.dims = {rows, len};
  return L.layer(op, &codegen::emit_softmax);
}

Expected<void> lower_reduce(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const auto rank = static_cast<int64_t>(xd->size());
  std::vector<int64_t> axes;
  if (n.input(1) >= 0) {
    const NpyArray* t = L.g.constant(n.input(1));
    if (!t) return make_error(EINVAL, "axes are not constant");
    axes = format::to_ints(*t);
  } else {
    axes = n.attr_ints("axes");
  }
  auto in_s = L.storage_in_perm(x, identity_perm(xd->size()));
  if (!in_s) return in_s.error();
  if (axes.empty()) {
    if (n.attr_int("noop_with_empty_axes", 0) != 0) {
      return L.alias(y, *in_s, in_s->perm);
    }
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (int64_t& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  codegen::ReduceOp op;
  op.name = n.name;
  op.kind = device_code(n);
  auto in = L.desc(x, *in_s);
  if (!in) return in.error();
  auto yd = L.dims(y);
  if (!yd) return yd.error();
  auto out = L.define_desc(y, identity_perm(yd->size()));
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  if (rank == 0) {
    op.input.dims = {1};
    axes = {0};
  }
  op.axis_begin = static_cast<uint32_t>(axes.front());
  op.axis_end = static_cast<uint32_t>(axes.back() + 1);
  return L.layer(op, &codegen::emit_reduce);
}

Expected<void> lower_batchnorm(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  if (xd->size() < 2) return make_error(EINVAL, "BatchNormalization of rank < 2");
  const auto C = static_cast<size_t>((*xd)[1]);
  auto gamma = floats_n(L.g, n.input(1), C, "scale");
  auto beta = floats_n(L.g, n.input(2), C, "B");
  auto mean = floats_n(L.g, n.input(3), C, "mean");
  auto var = floats_n(L.g, n.input(4), C, "var");
  for (auto* e : {&gamma, &beta, &mean, &var}) {
    if (!*e) return e->error();
  }
  const float eps = n.attr_float("epsilon", 1e-5f);
  std::vector<float> scale(C), shift(C);
  for (size_t c = 0; c < C; ++c) {
    scale[c] = (*gamma)[c] / std::sqrt((*var)[c] + eps);
    shift[c] = (*beta)[c] - (*mean)[c] * scale[c];
  }
  const Perm perm = channels_last_perm(xd->size());
  codegen::ScaleShiftOp op;
  op.name = n.name;
  op.scale_va = L.constants.add(bytes_of(scale));
  op.shift_va = L.constants.add(bytes_of(shift));
  auto in = L.in_perm(x, perm);
  if (!in) return in.error();
  auto out = L.define_desc(y, perm);
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  return L.layer(op, &codegen::emit_scale_shift);
}

Expected<void> lower_quant(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  auto s = L.get(x);
  if (!s) return s.error();
  codegen::QuantizeOp op;
  op.name = n.name;
  op.dequantize = n.op_type == "DequantizeLinear";
  const NpyArray* st = L.g.constant(n.input(1));
  if (!st) return make_error(EINVAL, "scale is not constant");
  const size_t count = static_cast<size_t>(st->num_elements());
  auto in = L.physical(x);
  if (!in) return in.error();
  auto out = L.define_desc(y, s->perm);
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  if (count == 1) {
    auto sc = floats_n(L.g, n.input(1), 1, "scale");
    auto zp = ints_n(L.g, n.input(2), 1, "zero_point");
    if (!sc) return sc.error();
    if (!zp) return zp.error();
    op.scale = (*sc)[0];
    op.zp = static_cast<int32_t>((*zp)[0]);
  } else {
    int64_t axis = n.attr_int("axis", 1);
    const auto rank = static_cast<int64_t>(xd->size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return make_error(EINVAL, "bad axis");
    const auto C = static_cast<size_t>((*xd)[static_cast<size_t>(axis)]);
    auto sc = floats_n(L.g, n.input(1), C, "scale");
    auto zp = ints_n(L.g, n.input(2), C, "zero_point");
    if (!sc) return sc.error();
    if (!zp) return zp.error();
    std::vector<npu_qparam> params(C);
    for (size_t c = 0; c < C; ++c) params[c] = {(*sc)[c], static_cast<int32_t>((*zp)[c])};
    op.params_va = L.constants.add(bytes_of(params));
    op.channels = static_cast<uint32_t>(C);
    // Inner extent: the stored dims after the axis's stored position.
    size_t j = 0;
    while (s->perm[j] != axis) ++j;
    op.inner = 1;
    for (size_t k = j + 1; k < in->dims.size(); ++k) op.inner *= in->dims[k];
  }
  return L.layer(op, &codegen::emit_quantize);
}

}  // namespace npu::compiler::detail
