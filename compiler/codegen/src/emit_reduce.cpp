// Reduce lowering: the input is viewed as [outer][len][inner]; tiles are chunks of outer
// rows with the whole inner extent, or, when one row does not fit, chunks of inner columns
// (a strided 3-D DMA box) one outer row at a time. len is never split.
#include "internal.h"

namespace npu::codegen {

using detail::ceil_div;
using detail::slot_bytes;

Expected<LayerReport> emit_reduce(const ReduceOp& op_in, EmitContext& ctx) {
  ReduceOp op = op_in;  // half-precision tensors reduce in fp32
  op.input = op.input.widened(), op.output = op.output.widened();
  const std::string who = "reduce " + op.name + ": ";
  if (!op.input.contiguous() || !op.output.contiguous() ||
      op.input.compute_dtype() != NPU_DTYPE_FP32 || op.output.compute_dtype() != NPU_DTYPE_FP32)
    return make_error(EINVAL, who + "needs contiguous fp32 (or half) input and output");
  const uint64_t ei = op.input.elem_size(), eo = op.output.elem_size();  // DRAM bytes
  if (op.axis_begin >= op.axis_end || op.axis_end > op.input.rank())
    return make_error(EINVAL, who + "bad axis range");
  uint64_t outer = 1, len = 1, inner = 1;
  for (size_t i = 0; i < op.input.rank(); ++i)
    (i < op.axis_begin ? outer : i < op.axis_end ? len : inner) *= op.input.dim(i);
  if (op.output.elements() != outer * inner)
    return make_error(EINVAL, who + "output " + op.output.str() + " has the wrong size");
  if (outer > UINT32_MAX || len > UINT32_MAX || inner > UINT32_MAX)
    return make_error(EINVAL, who + "tensor too large");
  const uint64_t budget = ctx.budget();
  auto need = [&](uint64_t oc, uint64_t ic) {
    return 2 * slot_bytes(oc * len * ic * 4) + 2 * slot_bytes(oc * ic * 4);
  };
  uint64_t ic = inner;
  while (ic > 1 && need(1, ic) > budget) ic = (ic + 1) / 2;
  if (need(1, ic) > budget)
    return make_error(
        ENOSPC, detail::sram_error("reduce", op.name, "one column of len " + std::to_string(len),
                                   need(1, 1), budget));
  uint64_t ocmax = 1;
  if (ic == inner)
    while (ocmax < outer && need(ocmax + 1, ic) <= budget) ++ocmax;
  struct Tiling {
    uint32_t oc, ic;
  };
  std::vector<Tiling> cands;
  for (uint32_t oc : detail::tile_candidates(uint32_t(outer), uint32_t(ocmax)))
    cands.push_back({oc, uint32_t(ic)});
  auto emit = [&](const Tiling& t, EmitContext& c, LayerReport& rep) -> Expected<void> {
    auto& b = c.builder;
    detail::SramPlan plan(c);
    uint32_t in[2], out[2];
    for (auto& a : in) a = plan.take(uint64_t(t.oc) * len * t.ic * 4);
    for (auto& a : out) a = plan.take(uint64_t(t.oc) * t.ic * 4);
    if (!plan.fits())
      return make_error(ENOSPC,
                        detail::sram_error("reduce", op.name, "tiling", plan.used(), plan.limit()));
    const uint64_t ni = ceil_div(inner, t.ic), no = ceil_div(outer, t.oc);
    rep.tiles = uint32_t(ni * no);
    rep.tiling = "outer " + std::to_string(t.oc) + " x inner " + std::to_string(t.ic);
    auto tile = [&](uint32_t i) {
      const uint64_t o0 = i / ni * t.oc, i0 = i % ni * t.ic;
      return std::array<uint64_t, 4>{o0, std::min<uint64_t>(t.oc, outer - o0), i0,
                                     std::min<uint64_t>(t.ic, inner - i0)};
    };
    detail::Pipeline p;
    p.engine = NPU_ENGINE_VECTOR;
    p.tiles = rep.tiles;
    p.load = [&](uint32_t i, uint32_t s) -> Expected<void> {
      auto [o0, oc, i0, icc] = tile(i);
      return detail::emit_dma(b, true, op.input.va + (o0 * len * inner + i0) * ei, in[s], 4,
                              {{oc, len * inner * ei}, {len, inner * ei}, {icc, ei}},
                              op.name + " input", detail::convert_of(op.input));
    };
    p.compute = [&](uint32_t i, uint32_t s) -> Expected<void> {
      auto [o0, oc, i0, icc] = tile(i);
      b.reduce({op.kind, in[s], out[s], uint32_t(oc), uint32_t(len), uint32_t(icc)});
      return ok();
    };
    p.store = [&](uint32_t i, uint32_t s) -> Expected<void> {
      auto [o0, oc, i0, icc] = tile(i);
      return detail::emit_dma(b, false, op.output.va + (o0 * inner + i0) * eo, out[s], 4,
                              {{oc, inner * eo}, {icc, eo}}, op.name + " output",
                              detail::convert_of(op.output));
    };
    return detail::emit_pipeline(c, p);
  };
  LayerReport base;
  base.name = op.name;
  base.op = "reduce";
  base.engine = NPU_ENGINE_VECTOR;
  return detail::search_emit(ctx, cands, emit, base);
}

}  // namespace npu::codegen
