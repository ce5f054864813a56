// Pool lowering: like conv2d without weights. Output-row bands with input halos (implicit
// padding only at the image border), channel slices when one row of all channels does not
// fit (global pooling of large maps), double-buffered on the vector engine.
#include "internal.h"

namespace npu::codegen {
namespace {

using detail::ceil_div;
using detail::slot_bytes;

struct PoolGeom {
  uint32_t N, H, W, C, OH, OW, kh, kw, sh, sw, pt, pl, pb, pr, e;
};

struct PoolTiling {
  uint32_t cs, rows;
};

uint64_t band_rows(const PoolGeom& g, uint32_t rows) {
  return std::min<uint64_t>(g.H, uint64_t(rows - 1) * g.sh + g.kh);
}

uint64_t sram_need(const PoolGeom& g, PoolTiling t) {
  return 2 * slot_bytes(band_rows(g, t.rows) * g.W * t.cs * g.e) +
         2 * slot_bytes(uint64_t(t.rows) * g.OW * t.cs * g.e);
}

}  // namespace

Expected<LayerReport> emit_pool(const PoolOp& op_in, EmitContext& ctx) {
  PoolOp op = op_in;  // half-precision tensors pool in fp32
  op.input = op.input.widened(), op.output = op.output.widened();
  const std::string who = "pool " + op.name + ": ";
  if (op.input.rank() != 4 || op.output.rank() != 4)
    return make_error(EINVAL, who + "input and output must be nhwc");
  PoolGeom g{};
  g.N = op.input.dim(0), g.H = op.input.dim(1), g.W = op.input.dim(2), g.C = op.input.dim(3);
  g.OH = op.output.dim(1), g.OW = op.output.dim(2), g.e = op.input.sram_elem_size();
  if (op.global) {
    g.kh = g.H, g.kw = g.W, g.sh = g.sw = 1;
  } else {
    g.kh = op.k_h, g.kw = op.k_w, g.sh = op.stride_h, g.sw = op.stride_w;
    g.pt = op.pad_top, g.pl = op.pad_left, g.pb = op.pad_bottom, g.pr = op.pad_right;
  }
  const uint32_t oh = isa::CommandBufferBuilder::conv_out_size(g.H, g.pt, g.pb, g.kh, 1, g.sh);
  const uint32_t ow = isa::CommandBufferBuilder::conv_out_size(g.W, g.pl, g.pr, g.kw, 1, g.sw);
  if (oh != g.OH || ow != g.OW || op.output.dim(0) != g.N || op.output.dim(3) != g.C ||
      op.input.compute_dtype() != op.output.compute_dtype())
    return make_error(
        EINVAL, who + "output " + op.output.str() + " does not match input " + op.input.str());
  for (uint32_t v : {g.H, g.W, g.C, g.kh, g.kw})
    if (v > 65535) return make_error(EINVAL, who + "a dim exceeds 65535");
  for (uint32_t v : {g.sh, g.sw, g.pt, g.pl, g.pb, g.pr})
    if (v > 255) return make_error(EINVAL, who + "stride or pad exceeds 255");
  const uint64_t budget = ctx.budget();
  uint32_t cs = g.C;
  while (cs > 1 && sram_need(g, {cs, 1}) > budget) cs = (cs + 1) / 2;
  if (sram_need(g, {cs, 1}) > budget)
    return make_error(ENOSPC, detail::sram_error("pool", op.name, "one output row of one channel",
                                                 sram_need(g, {1, 1}), budget));
  uint32_t rmax = 0;
  for (uint32_t r = 1; r <= g.OH && sram_need(g, {cs, r}) <= budget; ++r) rmax = r;
  std::vector<PoolTiling> cands;
  for (uint32_t r : detail::tile_candidates(g.OH, rmax)) cands.push_back({cs, r});

  auto emit = [&](const PoolTiling& t, EmitContext& c, LayerReport& rep) -> Expected<void> {
    auto& b = c.builder;
    const uint32_t slices = ceil_div(g.C, t.cs), bands = ceil_div(g.OH, t.rows);
    detail::SramPlan plan(c);
    uint32_t in[2], out[2];
    for (auto& a : in) a = plan.take(band_rows(g, t.rows) * g.W * t.cs * g.e);
    for (auto& a : out) a = plan.take(uint64_t(t.rows) * g.OW * t.cs * g.e);
    if (!plan.fits())
      return make_error(ENOSPC,
                        detail::sram_error("pool", op.name, "tiling", plan.used(), plan.limit()));
    rep.tiles = g.N * slices * bands;
    rep.tiling = "rows " + std::to_string(t.rows) + " x c " + std::to_string(t.cs);
    struct Tile {
      uint32_t n, c0, cs, oy0, rows;
      int64_t a0, a1;
      uint32_t ptop, pbot;
    };
    auto tile = [&](uint32_t i) {
      Tile tl{};
      const uint32_t r = i % bands, s = i / bands % slices;
      tl.n = i / bands / slices;
      tl.c0 = s * t.cs, tl.cs = std::min(t.cs, g.C - tl.c0);
      tl.oy0 = r * t.rows, tl.rows = std::min(t.rows, g.OH - tl.oy0);
      const int64_t r0 = int64_t(tl.oy0) * g.sh - g.pt;
      const int64_t r1 = int64_t(tl.oy0 + tl.rows - 1) * g.sh + g.kh - g.pt;
      tl.a0 = std::max<int64_t>(r0, 0), tl.a1 = std::min<int64_t>(r1, g.H);
      tl.ptop = uint32_t(tl.a0 - r0), tl.pbot = uint32_t(r1 - tl.a1);
      return tl;
    };
    detail::Pipeline p;
    p.engine = NPU_ENGINE_VECTOR;
    p.tiles = rep.tiles;
    p.load = [&](uint32_t i, uint32_t slot) -> Expected<void> {
      const Tile tl = tile(i);
      const TensorDesc& x = op.input;
      return detail::emit_dma(
          b, true, x.va + tl.n * x.stride(0) + tl.a0 * x.stride(1) + tl.c0 * x.stride(3), in[slot],
          g.e, {{uint64_t(tl.a1 - tl.a0), x.stride(1)}, {g.W, x.stride(2)}, {tl.cs, x.stride(3)}},
          op.name + " input", detail::convert_of(x));
    };
    p.compute = [&](uint32_t i, uint32_t slot) -> Expected<void> {
      const Tile tl = tile(i);
      isa::PoolArgs a;
      a.kind = op.kind, a.dtype = op.input.compute_dtype(), a.in_addr = in[slot],
      a.out_addr = out[slot];
      a.in_h = uint16_t(tl.a1 - tl.a0), a.in_w = uint16_t(g.W), a.channels = uint16_t(tl.cs);
      a.out_h = uint16_t(tl.rows), a.out_w = uint16_t(g.OW);
      a.k_h = uint16_t(g.kh), a.k_w = uint16_t(g.kw);
      a.stride_h = uint8_t(g.sh), a.stride_w = uint8_t(g.sw);
      a.pad_top = uint8_t(tl.ptop), a.pad_bottom = uint8_t(tl.pbot);
      a.pad_left = uint8_t(g.pl), a.pad_right = uint8_t(g.pr);
      a.count_pad = op.count_pad;
      b.pool(a);
      return ok();
    };
    p.store = [&](uint32_t i, uint32_t slot) -> Expected<void> {
      const Tile tl = tile(i);
      const TensorDesc& y = op.output;
      return detail::emit_dma(
          b, false, y.va + tl.n * y.stride(0) + tl.oy0 * y.stride(1) + tl.c0 * y.stride(3),
          out[slot], g.e, {{tl.rows, y.stride(1)}, {g.OW, y.stride(2)}, {tl.cs, y.stride(3)}},
          op.name + " output", detail::convert_of(y));
    };
    return detail::emit_pipeline(c, p);
  };
  LayerReport base;
  base.name = op.name;
  base.op = "pool";
  base.engine = NPU_ENGINE_VECTOR;
  return detail::search_emit(ctx, cands, emit, base);
}

}  // namespace npu::codegen
