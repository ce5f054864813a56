// MatMul/Gemm lowering: tiles over M (rows of A and of the output) and, when B does not fit,
// over N (column slices of B, loaded once per slice). K is never split: an fp32 K split would
// need accumulation across tiles, so a K that does not fit with one row is an error.
#include "internal.h"

namespace npu::codegen {
namespace {

using detail::ceil_div;
using detail::slot_bytes;

struct MmGeom {
  uint32_t batch, M, K, N;
  bool b_batched;
  uint32_t e_a, e_b, e_o, chan_per_n;
  bool integer;
  // Byte strides: a batch / row / k; b batch / k / n; out batch / row / n.
  uint64_t a_sb, a_sm, a_sk, b_sb, b_sk, b_sn, o_sb, o_sm, o_sn;
};

struct MmTiling {
  uint32_t ns, rows;
};

uint64_t sram_need(const MmGeom& g, MmTiling t, uint32_t weight_sets) {
  const uint64_t w =
      slot_bytes(uint64_t(g.K) * t.ns * g.e_b) + slot_bytes(uint64_t(t.ns) * g.chan_per_n);
  return (weight_sets > 1 ? 2 : 1) * w + 2 * slot_bytes(uint64_t(t.rows) * g.K * g.e_a) +
         2 * slot_bytes(uint64_t(t.rows) * t.ns * g.e_o);
}

Expected<MmGeom> check(const MatMulOp& op) {
  const std::string who = "matmul " + op.name + ": ";
  const TensorDesc &a = op.a, &b = op.b, &o = op.output;
  if (a.rank() < 2 || a.rank() > 3 || b.rank() < 2 || b.rank() > 3 || o.rank() != a.rank())
    return make_error(EINVAL, who + "a and output must be rank 2 or 3 (same rank), b rank 2 or 3");
  MmGeom g{};
  const size_t ra = a.rank(), rb = b.rank();
  g.batch = ra == 3 ? a.dim(0) : 1;
  g.M = a.dim(ra - 2), g.K = a.dim(ra - 1);
  g.b_batched = rb == 3 && b.dim(0) > 1;
  if (rb == 3 && b.dim(0) != g.batch && b.dim(0) != 1)
    return make_error(
        EINVAL, who + "batch of b " + std::to_string(b.dim(0)) + " != " + std::to_string(g.batch));
  const uint32_t bk = op.transpose_b ? b.dim(rb - 1) : b.dim(rb - 2);
  g.N = op.transpose_b ? b.dim(rb - 2) : b.dim(rb - 1);
  if (bk != g.K)
    return make_error(EINVAL, who + "k of a (" + std::to_string(g.K) + ") != k of b (" +
                                  std::to_string(bk) + ")");
  if (o.dim(ra - 2) != g.M || o.dim(ra - 1) != g.N || (ra == 3 && o.dim(0) != g.batch))
    return make_error(EINVAL, who + "output " + o.str() + " does not match");
  g.integer = !isa::dtype_is_float(a.compute_dtype());
  if (g.integer && op.chan_va == 0)
    return make_error(EINVAL, who + "integer matmul needs channel params (chan_va)");
  g.e_a = a.sram_elem_size(), g.e_b = b.sram_elem_size(), g.e_o = o.sram_elem_size();
  g.chan_per_n = g.integer ? sizeof(npu_chan_qparams) : (op.chan_va ? 4 : 0);
  g.a_sb = ra == 3 ? a.stride(0) : 0, g.a_sm = a.stride(ra - 2), g.a_sk = a.stride(ra - 1);
  g.o_sb = ra == 3 ? o.stride(0) : 0, g.o_sm = o.stride(ra - 2), g.o_sn = o.stride(ra - 1);
  g.b_sb = g.b_batched ? b.stride(0) : 0;
  g.b_sk = op.transpose_b ? b.stride(rb - 1) : b.stride(rb - 2);
  g.b_sn = op.transpose_b ? b.stride(rb - 2) : b.stride(rb - 1);
  // A shared B and row-contiguous batches: fold the batch into M.
  if (!g.b_batched && g.batch > 1 && g.a_sb == g.M * g.a_sm && g.o_sb == g.M * g.o_sm) {
    g.M *= g.batch;
    g.batch = 1;
  }
  return g;
}

Expected<void> emit_tiling(const MatMulOp& op, const MmGeom& g, MmTiling t, EmitContext& ctx,
                           LayerReport& rep) {
  auto& b = ctx.builder;
  const uint32_t slices = ceil_div(g.N, t.ns), mt = ceil_div(g.M, t.rows);
  const uint32_t sets = g.b_batched ? slices * g.batch : slices;
  detail::SramPlan plan(ctx);
  uint32_t wslot[2], cslot[2], in[2], out[2];
  for (uint32_t s = 0; s < (sets > 1 ? 2u : 1u); ++s) {
    wslot[s] = plan.take(uint64_t(g.K) * t.ns * g.e_b);
    cslot[s] = plan.take(uint64_t(t.ns) * g.chan_per_n);
  }
  if (sets == 1) wslot[1] = wslot[0], cslot[1] = cslot[0];
  for (uint32_t s = 0; s < 2; ++s) in[s] = plan.take(uint64_t(t.rows) * g.K * g.e_a);
  for (uint32_t s = 0; s < 2; ++s) out[s] = plan.take(uint64_t(t.rows) * t.ns * g.e_o);
  if (!plan.fits())
    return make_error(ENOSPC,
                      detail::sram_error("matmul", op.name, "tiling", plan.used(), plan.limit()));
  rep.tiles = slices * g.batch * mt;
  rep.tiling = "rows " + std::to_string(t.rows) + " x n " + std::to_string(t.ns);

  struct Tile {
    uint32_t set, bt, m0, rows, n0, ns;
    bool first;  // first tile of its weight set
  };
  auto tile = [&](uint32_t i) {
    const uint32_t m = i % mt;
    uint32_t s, bt;
    if (g.b_batched) {
      s = i / mt % slices, bt = i / mt / slices;
    } else {
      bt = i / mt % g.batch, s = i / mt / g.batch;
    }
    const uint32_t set = g.b_batched ? bt * slices + s : s;
    const bool first = m == 0 && (g.b_batched || bt == 0);
    return Tile{set,        bt,
                m * t.rows, std::min(t.rows, g.M - m * t.rows),
                s * t.ns,   std::min(t.ns, g.N - s * t.ns),
                first};
  };
  detail::Pipeline p;
  p.engine = NPU_ENGINE_MATRIX;
  p.tiles = rep.tiles;
  p.load = [&](uint32_t i, uint32_t slot) -> Expected<void> {
    const Tile tl = tile(i);
    if (tl.first) {
      const uint64_t src = op.b.va + tl.bt * g.b_sb + tl.n0 * g.b_sn;
      if (op.transpose_b)
        NPU_TRY(detail::emit_dma(b, true, src, wslot[tl.set % 2], g.e_b,
                                 {{tl.ns, g.b_sn}, {g.K, g.b_sk}}, op.name + " b",
                                 detail::convert_of(op.b)));
      else
        NPU_TRY(detail::emit_dma(b, true, src, wslot[tl.set % 2], g.e_b,
                                 {{g.K, g.b_sk}, {tl.ns, g.b_sn}}, op.name + " b",
                                 detail::convert_of(op.b)));
      if (g.chan_per_n)
        NPU_TRY(detail::emit_dma_bytes(b, true, op.chan_va + uint64_t(tl.n0) * g.chan_per_n,
                                       cslot[tl.set % 2], uint64_t(tl.ns) * g.chan_per_n,
                                       op.name + " channel params"));
    }
    return detail::emit_dma(b, true, op.a.va + tl.bt * g.a_sb + tl.m0 * g.a_sm, in[slot], g.e_a,
                            {{tl.rows, g.a_sm}, {g.K, g.a_sk}}, op.name + " a",
                            detail::convert_of(op.a));
  };
  p.compute = [&](uint32_t i, uint32_t slot) -> Expected<void> {
    const Tile tl = tile(i);
    isa::MatmulArgs a;
    a.a_addr = in[slot], a.b_addr = wslot[tl.set % 2], a.out_addr = out[slot];
    a.chan_addr = cslot[tl.set % 2];
    a.m = tl.rows, a.k = g.K, a.n = tl.ns, a.batch = 1;
    a.a_dtype = op.a.compute_dtype(), a.b_dtype = op.b.compute_dtype();
    a.out_dtype = op.output.compute_dtype();
    a.a_zp = op.a_zp, a.out_zp = op.out_zp;
    a.clamp_min = op.clamp_min, a.clamp_max = op.clamp_max;
    a.fclamp_min = op.fclamp_min, a.fclamp_max = op.fclamp_max;
    a.bias = !g.integer && op.chan_va != 0;
    a.transpose_b = op.transpose_b;
    b.matmul(a);
    return ok();
  };
  p.store = [&](uint32_t i, uint32_t slot) -> Expected<void> {
    const Tile tl = tile(i);
    return detail::emit_dma(
        b, false, op.output.va + tl.bt * g.o_sb + tl.m0 * g.o_sm + tl.n0 * g.o_sn, out[slot], g.e_o,
        {{tl.rows, g.o_sm}, {tl.ns, g.o_sn}}, op.name + " output", detail::convert_of(op.output));
  };
  return detail::emit_pipeline(ctx, p);
}

}  // namespace

Expected<LayerReport> emit_matmul(const MatMulOp& op, EmitContext& ctx) {
  auto gr = check(op);
  if (!gr) return gr.error();
  const MmGeom g = *gr;
  const uint64_t budget = ctx.budget();
  const uint32_t cols = detail::matrix_cols(ctx.cfg, op.b.compute_dtype());
  const uint32_t unit = std::min(g.N, std::max(cols, 1u));
  auto sets = [&](uint32_t ns) { return ceil_div(g.N, ns) * (g.b_batched ? g.batch : 1); };
  std::vector<uint32_t> slice_opts;
  if (sram_need(g, {g.N, 1}, sets(g.N)) <= budget) slice_opts.push_back(g.N);
  auto pick = [&](uint32_t step, bool half) {
    uint32_t best = 0;
    for (uint32_t ns = step; ns < g.N; ns += step) {
      const uint64_t w =
          slot_bytes(uint64_t(g.K) * ns * g.e_b) + slot_bytes(uint64_t(ns) * g.chan_per_n);
      if ((half && 2 * w > budget / 2) || sram_need(g, {ns, 1}, sets(ns)) > budget) break;
      best = ns;
    }
    return best;
  };
  uint32_t best = pick(unit, true);
  if (!best) best = pick(1, true);
  if (!best) best = pick(1, false);
  if (best) {
    slice_opts.push_back(best);
    if (best % unit == 0 && best / 2 >= unit) slice_opts.push_back(best / 2 / unit * unit);
  }
  std::vector<MmTiling> cands;
  for (uint32_t ns : slice_opts) {
    uint32_t rmax = 0;
    for (uint32_t r = 1; r <= g.M && sram_need(g, {ns, r}, sets(ns)) <= budget; ++r) rmax = r;
    for (uint32_t r : detail::tile_candidates(g.M, rmax)) cands.push_back({ns, r});
  }
  if (cands.empty())
    return make_error(ENOSPC,
                      detail::sram_error("matmul", op.name,
                                         "k=" + std::to_string(g.K) + " with one row and " +
                                             std::to_string(1) + " column (k is never split)",
                                         sram_need(g, {1, 1}, 2), budget));
  LayerReport base;
  base.name = op.name;
  base.op = "matmul";
  base.engine = NPU_ENGINE_MATRIX;
  return detail::search_emit(
      ctx, cands,
      [&](const MmTiling& t, EmitContext& c, LayerReport& r) {
        return emit_tiling(op, g, t, c, r);
      },
      base);
}

}  // namespace npu::codegen
