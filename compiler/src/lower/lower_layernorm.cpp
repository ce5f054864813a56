// LayerNormalization on the vector engine, as the sequence of vector layers a compiler for an
// NPU without a normalization unit emits. X is viewed as [rows, len] (len: the product of the
// normalized axes, from `axis` on); every step computes in fp32 in SRAM (a float16 X is
// converted as it loads) and stages its result in fp32 arena temporaries:
//   mean = REDUCE_MEAN(X)           [rows, 1]
//   d    = X - mean                 [rows, len]  ELTWISE SUB (mean broadcast along the row)
//   var  = REDUCE_MEAN(d * d)       [rows, 1]    ELTWISE MUL into a temporary, then REDUCE
//   std  = SQRT(var + epsilon)      [rows, 1]    ELTWISE ADD of the constant, ACTIVATION SQRT
//   Y    = d / std * Scale + B      [rows, len]  ELTWISE DIV, MUL, ADD (Scale/B along the row)
// The statistics are computed as ONNX defines them (stash_type 1: float32). When the node's
// Mean output is used, `mean` is that output; InvStdDev is 1 / std (ACTIVATION RECIPROCAL).
#include "lower/lower_ops.h"

namespace npu::compiler::detail {

namespace {

/// An fp32 arena temporary of `dims`, freed when the node is done.
struct Temp {
  Lowering& L;
  int id = -1;
  codegen::TensorDesc t;
  Temp(Lowering& l, std::vector<uint32_t> dims) : L(l) {
    uint64_t n = 4;
    for (uint32_t d : dims) n *= d;
    id = L.arena.alloc(n);
    t = codegen::TensorDesc::make(kArenaVa + L.arena.offset(id), NPU_DTYPE_FP32, std::move(dims));
  }
  ~Temp() { L.arena.release(id); }
  Temp(const Temp&) = delete;
  Temp& operator=(const Temp&) = delete;
};

}  // namespace

Expected<void> lower_layernorm(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const auto rank = static_cast<int64_t>(xd->size());
  int64_t axis = n.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return make_error(EINVAL, "axis out of range");
  const auto rows = static_cast<uint32_t>(dim_product(*xd, 0, static_cast<size_t>(axis)));
  const auto len = static_cast<uint32_t>(dim_product(*xd, static_cast<size_t>(axis), xd->size()));
  auto in = L.in_perm(x, identity_perm(xd->size()));
  if (!in) return in.error();
  auto out = L.define_desc(y, identity_perm(xd->size()));
  if (!out) return out.error();
  codegen::TensorDesc X = *in, Y = *out;
  X.dims = Y.dims = {rows, len};
  X.strides = Y.strides = {};

  Temp mean_tmp(L, {rows, 1}), d(L, {rows, len}), sq(L, {rows, len}), stat(L, {rows, 1});
  // The optional statistics outputs: [rows] values in their own storage.
  auto stat_output = [&](size_t k) -> Expected<std::optional<codegen::TensorDesc>> {
    const ValueId v = k < n.outputs.size() ? n.outputs[k] : kNoValue;
    if (v < 0) return std::optional<codegen::TensorDesc>{};
    auto vd = L.dims(v);
    if (!vd) return vd.error();
    auto t = L.define_desc(v, identity_perm(vd->size()));
    if (!t) return t.error();
    t->dims = {rows, 1};
    t->strides = {};
    return std::optional<codegen::TensorDesc>{*t};
  };
  auto mean_out = stat_output(1);
  if (!mean_out) return mean_out.error();
  auto inv_out = stat_output(2);
  if (!inv_out) return inv_out.error();
  const codegen::TensorDesc mean = *mean_out ? **mean_out : mean_tmp.t;
  auto reduce = [&](const codegen::TensorDesc& src, const codegen::TensorDesc& dst,
                    const std::string& step) {
    codegen::ReduceOp r;
    r.name = n.name + "/" + step;
    r.kind = NPU_REDUCE_MEAN;
    r.input = src, r.output = dst;
    r.output.dims = {rows};
    r.axis_begin = 1, r.axis_end = 2;
    return L.layer(r, &codegen::emit_reduce);
  };
  auto eltwise = [&](uint8_t op, const codegen::TensorDesc& a, const codegen::TensorDesc& b,
                     const codegen::TensorDesc& o, const std::string& step) {
    codegen::EltwiseOp e;
    e.name = n.name + "/" + step;
    e.op = op;
    e.a = a, e.b = b, e.output = o;
    return L.layer(e, &codegen::emit_eltwise);
  };
  NPU_TRY(reduce(X, mean, "mean"));
  NPU_TRY(eltwise(NPU_ELTWISE_SUB, X, mean, d.t, "center"));
  NPU_TRY(eltwise(NPU_ELTWISE_MUL, d.t, d.t, sq.t, "square"));
  NPU_TRY(reduce(sq.t, stat.t, "variance"));
  const float eps = n.attr_float("epsilon", 1e-5f);
  const auto eps_t = codegen::TensorDesc::make(L.constants.add(bytes_of(std::vector<float>{eps})),
                                               NPU_DTYPE_FP32, {1, 1});
  NPU_TRY(eltwise(NPU_ELTWISE_ADD, stat.t, eps_t, stat.t, "epsilon"));
  codegen::ActivationOp s;
  s.name = n.name + "/sqrt";
  s.func = NPU_ACT_SQRT;
  s.input = s.output = stat.t;
  NPU_TRY(L.layer(s, &codegen::emit_activation));
  if (*inv_out) {
    codegen::ActivationOp r;
    r.name = n.name + "/inv_std";
    r.func = NPU_ACT_RECIPROCAL;
    r.input = stat.t;
    r.output = **inv_out;
    NPU_TRY(L.layer(r, &codegen::emit_activation));
  }
  // The last steps write Y (in its stored type); Scale and B are read along the row.
  const bool affine_left = n.input(1) >= 0 || n.input(2) >= 0;
  codegen::TensorDesc normed = affine_left ? sq.t : Y;  // sq is free again
  NPU_TRY(eltwise(NPU_ELTWISE_DIV, d.t, stat.t, normed, "normalize"));
  const std::optional<DType> t = L.g.value(y).dtype;
  for (size_t i = 1; i <= 2; ++i) {
    const ValueId p = n.input(i);
    if (p < 0) continue;
    const size_t prank = L.g.value(p).shape ? L.g.value(p).shape->size() : 1;
    auto pv = broadcast_view(L, p, prank, identity_perm(prank), t);
    if (!pv) return pv.error();
    if (!pv->contiguous() || pv->elements() != len)
      return make_error(EINVAL, "Scale/B are not " + std::to_string(len) + " contiguous values");
    pv->dims = {1, len};
    pv->strides = {0, pv->elem_size()};
    const bool last = i == 2 || n.input(2) < 0;
    NPU_TRY(eltwise(i == 1 ? NPU_ELTWISE_MUL : NPU_ELTWISE_ADD, normed, *pv, last ? Y : normed,
                    i == 1 ? "scale" : "bias"));
    normed = last ? Y : normed;
  }
  return ok();
}

}  // namespace npu::compiler::detail
