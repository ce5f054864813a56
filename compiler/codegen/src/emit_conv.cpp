// Conv2d lowering: output-row bands (input row bands with their halos), output-channel slices
// when the weights do not fit, double-buffered through the tile pipeline. Input channels are
// never split (fp32 would need cross-tile accumulation); a conv whose single output row with
// one channel slice does not fit is an error.
#include "internal.h"

namespace npu::codegen {
namespace {

using detail::BoxDim;
using detail::ceil_div;
using detail::slot_bytes;

struct ConvGeom {
  uint32_t N, H, W, C, OC, KH, KW, OH, OW, icg, ocg, g;
  uint32_t e_in, e_w, e_out, chan_per_oc;
  bool integer;
};

struct ConvTiling {
  uint32_t ocs;   // output channels per slice
  uint32_t rows;  // output rows per band
};

uint32_t slice_in_c(const ConvGeom& g, uint32_t ocs) {
  return g.g == 1 ? g.C : ocs / g.ocg * g.icg;
}

uint64_t band_in_rows(const ConvGeom& g, const Conv2dOp& op, uint32_t rows) {
  return std::min<uint64_t>(g.H, uint64_t(rows - 1) * op.stride_h + op.dil_h * (g.KH - 1) + 1);
}

uint64_t sram_need(const ConvGeom& g, const Conv2dOp& op, ConvTiling t) {
  const uint32_t slices = ceil_div(g.OC, t.ocs);
  const uint64_t w = slot_bytes(uint64_t(t.ocs) * g.KH * g.KW * g.icg * g.e_w) +
                     slot_bytes(uint64_t(t.ocs) * g.chan_per_oc);
  const uint64_t in = band_in_rows(g, op, t.rows) * g.W * slice_in_c(g, t.ocs) * g.e_in;
  const uint64_t out = uint64_t(t.rows) * g.OW * t.ocs * g.e_out;
  return (slices > 1 ? 2 : 1) * w + 2 * slot_bytes(in) + 2 * slot_bytes(out);
}

Expected<ConvGeom> check(const Conv2dOp& op) {
  const std::string who = "conv2d " + op.name + ": ";
  if (op.input.rank() != 4 || op.output.rank() != 4 || op.weights.rank() != 4)
    return make_error(EINVAL, who + "input, weights and output must be rank 4 (nhwc, ohwi)");
  ConvGeom g{};
  g.N = op.input.dim(0), g.H = op.input.dim(1), g.W = op.input.dim(2), g.C = op.input.dim(3);
  g.OC = op.weights.dim(0), g.KH = op.weights.dim(1), g.KW = op.weights.dim(2);
  g.OH = op.output.dim(1), g.OW = op.output.dim(2);
  g.g = op.groups;
  if (g.g == 0 || g.C % g.g || g.OC % g.g)
    return make_error(EINVAL, who + "groups " + std::to_string(g.g) + " must divide channels");
  g.icg = g.C / g.g, g.ocg = g.OC / g.g;
  if (op.weights.dim(3) != g.icg)
    return make_error(EINVAL, who + "weights have " + std::to_string(op.weights.dim(3)) +
                                  " input channels, expected " + std::to_string(g.icg));
  if (op.output.dim(0) != g.N || op.output.dim(3) != g.OC)
    return make_error(EINVAL, who + "output " + op.output.str() + " does not match");
  const uint32_t oh = isa::CommandBufferBuilder::conv_out_size(g.H, op.pad_top, op.pad_bottom, g.KH,
                                                               op.dil_h, op.stride_h);
  const uint32_t ow = isa::CommandBufferBuilder::conv_out_size(g.W, op.pad_left, op.pad_right, g.KW,
                                                               op.dil_w, op.stride_w);
  if (oh != g.OH || ow != g.OW)
    return make_error(EINVAL, who + "output is " + std::to_string(g.OH) + "x" +
                                  std::to_string(g.OW) + ", expected " + std::to_string(oh) + "x" +
                                  std::to_string(ow));
  for (uint32_t v : {g.H, g.W, g.C, g.OC, g.KH, g.KW, g.OH, g.OW})
    if (v > 65535) return make_error(EINVAL, who + "a dim exceeds 65535");
  for (uint32_t v : {op.stride_h, op.stride_w, op.dil_h, op.dil_w, op.pad_top, op.pad_left,
                     op.pad_bottom, op.pad_right})
    if (v > 255) return make_error(EINVAL, who + "stride, dilation or pad exceeds 255");
  if (!op.weights.contiguous()) return make_error(EINVAL, who + "weights must be contiguous");
  g.integer = !isa::dtype_is_float(op.input.compute_dtype());
  if (g.integer && op.chan_va == 0)
    return make_error(EINVAL, who + "integer conv needs channel params (chan_va)");
  if (op.weights.sram_dtype) return make_error(EINVAL, who + "weights are never converted");
  g.e_in = op.input.sram_elem_size(), g.e_w = op.weights.elem_size();
  g.e_out = op.output.sram_elem_size();
  g.chan_per_oc = g.integer ? sizeof(npu_chan_qparams) : (op.chan_va ? 4 : 0);
  return g;
}

Expected<void> emit_tiling(const Conv2dOp& op, const ConvGeom& g, ConvTiling t, EmitContext& ctx,
                           LayerReport& rep) {
  auto& b = ctx.builder;
  const uint32_t slices = ceil_div(g.OC, t.ocs);
  const uint32_t bands = ceil_div(g.OH, t.rows);
  const uint64_t w_per_oc = uint64_t(g.KH) * g.KW * g.icg * g.e_w;
  detail::SramPlan plan(ctx);
  uint32_t wslot[2], cslot[2], in[2], out[2];
  for (uint32_t s = 0; s < (slices > 1 ? 2u : 1u); ++s) {
    wslot[s] = plan.take(t.ocs * w_per_oc);
    cslot[s] = plan.take(uint64_t(t.ocs) * g.chan_per_oc);
  }
  if (slices == 1) wslot[1] = wslot[0], cslot[1] = cslot[0];
  for (uint32_t s = 0; s < 2; ++s)
    in[s] = plan.take(band_in_rows(g, op, t.rows) * g.W * slice_in_c(g, t.ocs) * g.e_in);
  for (uint32_t s = 0; s < 2; ++s) out[s] = plan.take(uint64_t(t.rows) * g.OW * t.ocs * g.e_out);
  if (!plan.fits())
    return make_error(ENOSPC,
                      detail::sram_error("conv2d", op.name, "tiling", plan.used(), plan.limit()));
  rep.tiles = slices * g.N * bands;
  rep.tiling = "rows " + std::to_string(t.rows) + " x oc " + std::to_string(t.ocs);

  struct Tile {
    uint32_t s, n, oy0, rows, oc0, ocs;
  };
  auto tile = [&](uint32_t i) {
    const uint32_t r = i % bands, n = i / bands % g.N, s = i / bands / g.N;
    const uint32_t oy0 = r * t.rows, oc0 = s * t.ocs;
    return Tile{s, n, oy0, std::min(t.rows, g.OH - oy0), oc0, std::min(t.ocs, g.OC - oc0)};
  };
  // Input rows [a0, a1) of a band and the implicit padding the conv adds around them.
  struct Band {
    int64_t a0, a1;
    uint32_t pad_top, pad_bottom;
  };
  auto band = [&](const Tile& tl) {
    const int64_t r0 = int64_t(tl.oy0) * op.stride_h - op.pad_top;
    const int64_t r1 =
        int64_t(tl.oy0 + tl.rows - 1) * op.stride_h + op.dil_h * (g.KH - 1) - op.pad_top + 1;
    const int64_t a0 = std::max<int64_t>(r0, 0), a1 = std::min<int64_t>(r1, g.H);
    return Band{a0, a1, uint32_t(a0 - r0), uint32_t(r1 - a1)};
  };

  detail::Pipeline p;
  p.engine = NPU_ENGINE_MATRIX;
  p.tiles = rep.tiles;
  p.load = [&](uint32_t i, uint32_t slot) -> Expected<void> {
    const Tile tl = tile(i);
    if (tl.n == 0 && tl.oy0 == 0) {  // first tile of a slice: its weights and channel params
      NPU_TRY(detail::emit_dma_bytes(b, true, op.weights.va + tl.oc0 * w_per_oc, wslot[tl.s % 2],
                                     tl.ocs * w_per_oc, op.name + " weights"));
      if (g.chan_per_oc)
        NPU_TRY(detail::emit_dma_bytes(b, true, op.chan_va + uint64_t(tl.oc0) * g.chan_per_oc,
                                       cslot[tl.s % 2], uint64_t(tl.ocs) * g.chan_per_oc,
                                       op.name + " channel params"));
    }
    const Band bd = band(tl);
    if (bd.a1 <= bd.a0)
      return make_error(EINVAL, "conv2d " + op.name + ": a band lies entirely in the padding");
    const uint32_t cin = slice_in_c(g, tl.ocs);
    const uint32_t c0 = g.g == 1 ? 0 : tl.oc0 / g.ocg * g.icg;
    const TensorDesc& x = op.input;
    return detail::emit_dma(
        b, true, x.va + tl.n * x.stride(0) + bd.a0 * x.stride(1) + c0 * x.stride(3), in[slot],
        g.e_in, {{uint64_t(bd.a1 - bd.a0), x.stride(1)}, {g.W, x.stride(2)}, {cin, x.stride(3)}},
        op.name + " input", detail::convert_of(x));
  };
  p.compute = [&](uint32_t i, uint32_t slot) -> Expected<void> {
    const Tile tl = tile(i);
    const Band bd = band(tl);
    isa::Conv2dArgs a;
    a.in_addr = in[slot], a.w_addr = wslot[tl.s % 2], a.out_addr = out[slot];
    a.chan_addr = cslot[tl.s % 2];
    a.in_h = uint16_t(bd.a1 - bd.a0), a.in_w = uint16_t(g.W),
    a.in_c = uint16_t(slice_in_c(g, tl.ocs));
    a.out_h = uint16_t(tl.rows), a.out_w = uint16_t(g.OW), a.out_c = uint16_t(tl.ocs);
    a.k_h = uint16_t(g.KH), a.k_w = uint16_t(g.KW);
    a.groups = uint16_t(g.g == 1 ? 1 : tl.ocs / g.ocg);
    a.stride_h = uint8_t(op.stride_h), a.stride_w = uint8_t(op.stride_w);
    a.dil_h = uint8_t(op.dil_h), a.dil_w = uint8_t(op.dil_w);
    a.pad_top = uint8_t(bd.pad_top), a.pad_bottom = uint8_t(bd.pad_bottom);
    a.pad_left = uint8_t(op.pad_left), a.pad_right = uint8_t(op.pad_right);
    a.in_dtype = op.input.compute_dtype(), a.w_dtype = op.weights.dtype;
    a.out_dtype = op.output.compute_dtype();
    a.in_zp = op.in_zp, a.out_zp = op.out_zp;
    a.clamp_min = op.clamp_min, a.clamp_max = op.clamp_max;
    a.fclamp_min = op.fclamp_min, a.fclamp_max = op.fclamp_max;
    a.bias = !g.integer && op.chan_va != 0;
    b.conv2d(a);
    return ok();
  };
  p.store = [&](uint32_t i, uint32_t slot) -> Expected<void> {
    const Tile tl = tile(i);
    const TensorDesc& y = op.output;
    return detail::emit_dma(
        b, false, y.va + tl.n * y.stride(0) + tl.oy0 * y.stride(1) + tl.oc0 * y.stride(3),
        out[slot], g.e_out, {{tl.rows, y.stride(1)}, {g.OW, y.stride(2)}, {tl.ocs, y.stride(3)}},
        op.name + " output", detail::convert_of(y));
  };
  return detail::emit_pipeline(ctx, p);
}

}  // namespace

Expected<LayerReport> emit_conv2d(const Conv2dOp& op, EmitContext& ctx) {
  auto gr = check(op);
  if (!gr) return gr.error();
  const ConvGeom g = *gr;
  const uint64_t budget = ctx.budget();
  const uint32_t cols = detail::matrix_cols(ctx.cfg, op.weights.dtype);
  const uint32_t unit = g.g == 1 ? std::min(g.OC, std::max(cols, 1u)) : g.ocg;

  // Channel-slice options: all channels when they fit with one output row, else the widest
  // slice whose two weight slots take at most half of the budget, and half of that.
  std::vector<uint32_t> slice_opts;
  if (sram_need(g, op, {g.OC, 1}) <= budget) slice_opts.push_back(g.OC);
  auto pick = [&](uint32_t step, bool half) {
    uint32_t best = 0;
    for (uint32_t ocs = step; ocs < g.OC; ocs += step) {
      const uint64_t w = slot_bytes(uint64_t(ocs) * g.KH * g.KW * g.icg * g.e_w) +
                         slot_bytes(uint64_t(ocs) * g.chan_per_oc);
      if ((half && 2 * w > budget / 2) || sram_need(g, op, {ocs, 1}) > budget) break;
      best = ocs;
    }
    return best;
  };
  const uint32_t fine = g.g == 1 ? 1 : g.ocg;
  uint32_t best = pick(unit, true);
  if (!best) best = pick(fine, true);
  if (!best) best = pick(fine, false);
  if (best) {
    slice_opts.push_back(best);
    if (best % unit == 0 && best / 2 >= unit) slice_opts.push_back(best / 2 / unit * unit);
  }
  std::vector<ConvTiling> cands;
  for (uint32_t ocs : slice_opts) {
    uint32_t rmax = 0;
    for (uint32_t r = 1; r <= g.OH && sram_need(g, op, {ocs, r}) <= budget; ++r) rmax = r;
    for (uint32_t r : detail::tile_candidates(g.OH, rmax)) cands.push_back({ocs, r});
  }
  if (cands.empty()) {
    const uint32_t ocs = fine;
    return make_error(ENOSPC, detail::sram_error("conv2d", op.name,
                                                 "one output row with " + std::to_string(ocs) +
                                                     " output channels (width tiling is not "
                                                     "implemented)",
                                                 sram_need(g, op, {ocs, 1}), budget));
  }
  LayerReport base;
  base.name = op.name;
  base.op = "conv2d";
  base.engine = NPU_ENGINE_MATRIX;
  return detail::search_emit(
      ctx, cands,
      [&](const ConvTiling& t, EmitContext& c, LayerReport& r) {
        return emit_tiling(op, g, t, c, r);
      },
      base);
}

}  // namespace npu::codegen
