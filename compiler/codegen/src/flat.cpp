// emit_flat(): contiguous element ranges through the double-buffered pipeline.
#include "flat.h"

namespace npu::codegen::detail {

Expected<void> require_contiguous(const std::string& op, const std::string& name,
                                  const TensorDesc& in, const TensorDesc& out) {
  if (!in.contiguous() || !out.contiguous())
    return make_error(EINVAL, op + " " + name + ": input and output must be contiguous");
  return ok();
}

void flat_io(FlatSpec& s, const TensorDesc& in, const TensorDesc& out) {
  s.in_va = in.va, s.out_va = out.va;
  s.e_in = in.sram_elem_size(), s.e_out = out.sram_elem_size();
  s.dram_e_in = in.elem_size(), s.dram_e_out = out.elem_size();
  s.cvt_in = convert_of(in), s.cvt_out = convert_of(out);
}

Expected<LayerReport> emit_flat(EmitContext& ctx, const FlatSpec& s) {
  const uint64_t de_in = s.dram_e_in ? s.dram_e_in : s.e_in;
  const uint64_t de_out = s.dram_e_out ? s.dram_e_out : s.e_out;
  const uint64_t out_align = s.out_align ? s.out_align : s.align;
  const uint64_t units = s.count / s.align;
  if (units == 0 || s.count % s.align)
    return make_error(EINVAL, s.op + " " + s.name + ": empty tensor or partial row");
  const uint64_t budget = ctx.budget();
  const uint64_t fixed = slot_bytes(s.const_bytes) + 4 * 64;
  const uint64_t per_unit = 2 * (s.align * s.e_in + out_align * s.e_out);
  if (fixed + per_unit > budget)
    return make_error(
        ENOSPC, sram_error(s.op, s.name, "one row of " + std::to_string(s.align) + " elements",
                           fixed + per_unit, budget));
  // Keep command fields (u32 counts, DMA sizes) in range.
  const uint64_t cap = std::min<uint64_t>((budget - fixed) / per_unit, UINT32_MAX / s.align);
  const uint32_t max_units = uint32_t(std::min<uint64_t>({cap, units, UINT32_MAX}));
  std::vector<uint32_t> cands =
      tile_candidates(uint32_t(std::min<uint64_t>(units, UINT32_MAX)), max_units);
  LayerReport base;
  base.name = s.name;
  base.op = s.op;
  base.engine = NPU_ENGINE_VECTOR;
  auto emit = [&](uint32_t chunk, EmitContext& c, LayerReport& r) -> Expected<void> {
    auto& b = c.builder;
    SramPlan plan(c);
    const uint32_t consts = plan.take(s.const_bytes);
    uint32_t in[2], out[2];
    for (auto& a : in) a = plan.take(chunk * s.align * s.e_in);
    for (auto& a : out) a = plan.take(chunk * out_align * s.e_out);
    if (!plan.fits())
      return make_error(ENOSPC, sram_error(s.op, s.name, "tiling", plan.used(), plan.limit()));
    const uint32_t tiles = uint32_t(ceil_div(units, chunk));
    r.tiles = tiles;
    r.tiling = "elements " + std::to_string(chunk * s.align);
    auto range = [&](uint32_t t) {
      const uint64_t u0 = uint64_t(t) * chunk;
      return std::pair<uint64_t, uint64_t>(u0, std::min<uint64_t>(chunk, units - u0));
    };
    Pipeline p;
    p.engine = NPU_ENGINE_VECTOR;
    p.tiles = tiles;
    p.load = [&](uint32_t t, uint32_t slot) -> Expected<void> {
      if (t == 0 && s.const_bytes) NPU_TRY(s.load_consts(b, consts));
      auto [u0, n] = range(t);
      return emit_dma(b, true, s.in_va + u0 * s.align * de_in, in[slot], s.e_in,
                      {{n * s.align, de_in}}, s.name + " input", s.cvt_in);
    };
    p.compute = [&](uint32_t t, uint32_t slot) -> Expected<void> {
      auto [u0, n] = range(t);
      s.compute(b, u0 * s.align, n * s.align, in[slot], out[slot], consts);
      return ok();
    };
    p.store = [&](uint32_t t, uint32_t slot) -> Expected<void> {
      auto [u0, n] = range(t);
      return emit_dma(b, false, s.out_va + u0 * out_align * de_out, out[slot], s.e_out,
                      {{n * out_align, de_out}}, s.name + " output", s.cvt_out);
    };
    return emit_pipeline(c, p);
  };
  return search_emit(ctx, cands, emit, base);
}

}  // namespace npu::codegen::detail
