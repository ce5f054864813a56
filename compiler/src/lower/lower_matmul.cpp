// Matrix products onto MATMUL layers: MatMul/Gemm (batched, broadcast A, transB, a
// per-column bias, a full [M,N] Gemm C as an ELTWISE add afterwards, fused activations),
// MatMulInteger and QLinearMatMul (per-column requantization parameters).
#include <algorithm>

#include "lower/lower_ops.h"

namespace npu::compiler::detail {

Expected<void> lower_matmul(Lowering& L, const Node& n) {
  const Graph& g = L.g;
  const bool ql = n.op_type == "QLinearMatMul", mi = n.op_type == "MatMulInteger";
  const bool gemm = n.op_type == "Gemm";
  const ValueId a = n.input(0), b = n.input(ql ? 3 : 1), y = n.outputs[0];
  auto ad = L.dims(a), bd = L.dims(b), yd = L.dims(y);
  if (!ad) return ad.error();
  if (!bd) return bd.error();
  if (!yd) return yd.error();
  const bool tb = gemm && n.attr_int("transB", 0) != 0;
  const auto M = static_cast<uint32_t>((*ad)[ad->size() - 2]);
  const auto K = static_cast<uint32_t>((*ad)[ad->size() - 1]);
  const auto N = static_cast<uint32_t>(tb ? (*bd)[bd->size() - 2] : (*bd)[bd->size() - 1]);
  const auto a_batch = static_cast<uint32_t>(dim_product(*ad, 0, ad->size() - 2));
  const auto b_batch = static_cast<uint32_t>(dim_product(*bd, 0, bd->size() - 2));
  const uint32_t batch = std::max(a_batch, b_batch);

  codegen::MatMulOp op;
  op.name = n.name;
  op.transpose_b = tb;
  auto as = L.in_perm(a, identity_perm(ad->size()));
  if (!as) return as.error();
  op.a = *as;
  op.a.dims = {M, K};
  if (batch > 1) {
    op.a.dims.insert(op.a.dims.begin(), batch);
    if (a_batch == 1) op.a.strides = {0, uint64_t(K) * op.a.elem_size(), op.a.elem_size()};
  }
  // Half precision: a constant B converted once, A and a computed B read as half.
  const NpyArray* bc = g.constant(b);
  const uint8_t half = ql || mi ? 0 : L.matrix_half(g.value(b).dtype);
  if (half && bc && g.value(a).dtype == g.value(b).dtype) {
    op.b = codegen::TensorDesc::make(L.add_half_constant(bc->data, bc->dtype, half), half, {});
  } else {
    auto bs = L.in_perm(b, identity_perm(bd->size()));
    if (!bs) return bs.error();
    op.b = *bs;
  }
  if (half) op.a = op.a.computed_as(half), op.b = op.b.computed_as(half);
  op.b.dims = tb ? std::vector<uint32_t>{N, K} : std::vector<uint32_t>{K, N};
  if (b_batch > 1) op.b.dims.insert(op.b.dims.begin(), b_batch);
  auto out = L.define_desc(y, identity_perm(yd->size()));
  if (!out) return out.error();
  op.output = *out;
  op.output.dims = {M, N};
  if (batch > 1) op.output.dims.insert(op.output.dims.begin(), batch);

  std::optional<Act> post;
  std::optional<ValueId> add_after;  // a Gemm C that is not a per-column bias
  if (!ql && !mi) {
    const ValueId c = gemm ? n.input(2) : (n.inputs.size() > 2 ? n.input(2) : kNoValue);
    if (c >= 0) {
      const NpyArray* ct = g.constant(c);
      if (!ct) return make_error(EINVAL, "bias is not constant");
      const bool per_column = ct->shape.size() < 2 || ct->shape[ct->shape.size() - 2] == 1;
      if (per_column) {
        auto bias = floats_n(g, c, N, "bias");
        if (!bias) return bias.error();
        op.chan_va = L.constants.add(bytes_of(*bias));
      } else {
        add_after = c;
      }
    }
    NPU_TRY(fused_activation(n, op, post));
    if (add_after && (op.fclamp_min != -codegen::kInf || op.fclamp_max != codegen::kInf))
      return make_error(EINVAL, "a clamp after a full-matrix C");
  } else {
    auto q = int_params(g, n, N, mi);
    if (!q) return q.error();
    op.a_zp = q->in_zp;
    op.out_zp = q->out_zp;
    op.chan_va = L.constants.add(bytes_of(q->chan));
  }
  NPU_TRY(L.layer(op, &codegen::emit_matmul));
  if (add_after) {
    codegen::EltwiseOp e;
    e.name = n.name + "/c";
    e.op = NPU_ELTWISE_ADD;
    e.a = *out;
    e.output = *out;
    auto cv = L.logical_view(*add_after);
    if (!cv) return cv.error();
    e.b = *cv;
    NPU_TRY(L.layer(e, &codegen::emit_eltwise));
  }
  return emit_post(L, post, *out, n.name);
}

}  // namespace npu::compiler::detail
