// Binary elementwise lowering with NumPy broadcasting. The broadcast shape is normalised
// (unit dims dropped, neighbours with the same broadcast pattern merged, at most 4 left);
// tiles are chunks of one split axis (the outer axes are iterated one index at a time) with
// all inner axes whole. An operand that is the same for every tile (a bias row) is loaded
// once; the others are loaded per tile as their own (un-broadcast) boxes and read through
// zero SRAM strides.
#include "internal.h"

namespace npu::codegen {
namespace {

using detail::BoxDim;
using detail::ceil_div;
using detail::slot_bytes;

struct EltAxis {
  uint64_t d;
  uint64_t s[3];  // byte strides of a, b, out (0: broadcast)
};

// Elements of operand k's box for split axis `ax` with a chunk of c.
uint64_t box_elems(const std::vector<EltAxis>& ax_list, size_t ax, uint64_t c, int k) {
  uint64_t n = ax_list[ax].s[k] ? c : 1;
  for (size_t i = ax + 1; i < ax_list.size(); ++i) n *= ax_list[i].s[k] ? ax_list[i].d : 1;
  return n;
}

bool invariant(const std::vector<EltAxis>& axes, size_t ax, int k) {
  for (size_t i = 0; i <= ax; ++i)
    if (axes[i].s[k]) return false;
  return true;
}

uint64_t sram_need(const std::vector<EltAxis>& axes, size_t ax, uint64_t c, uint32_t e) {
  uint64_t need = 2 * slot_bytes(box_elems(axes, ax, c, 2) * e);
  for (int k = 0; k < 2; ++k)
    need += (invariant(axes, ax, k) ? 1 : 2) * slot_bytes(box_elems(axes, ax, c, k) * e);
  return need;
}

}  // namespace

Expected<LayerReport> emit_eltwise(const EltwiseOp& op_in, EmitContext& ctx) {
  EltwiseOp op = op_in;  // half-precision operands compute in fp32
  op.a = op.a.widened(), op.b = op.b.widened(), op.output = op.output.widened();
  const std::string who = "eltwise " + op.name + ": ";
  const TensorDesc* t[3] = {&op.a, &op.b, &op.output};
  const size_t R = op.output.rank();
  if (op.a.rank() > R || op.b.rank() > R)
    return make_error(EINVAL, who + "inputs have more dims than the output");
  const uint8_t dt = op.output.compute_dtype();
  if (op.a.compute_dtype() != dt || op.b.compute_dtype() != dt)
    return make_error(EINVAL, who + "a, b and output must have one dtype (" + op.a.str() + ", " +
                                  op.b.str() + ", " + op.output.str() + ")");
  const uint32_t e = op.output.sram_elem_size();
  std::vector<EltAxis> axes;
  for (size_t i = 0; i < R; ++i) {
    EltAxis a{op.output.dim(i), {0, 0, op.output.stride(i)}};
    for (int k = 0; k < 2; ++k) {
      const size_t off = R - t[k]->rank();
      if (i < off) continue;
      const uint32_t d = t[k]->dim(i - off);
      if (d != a.d && d != 1)
        return make_error(EINVAL,
                          who + "cannot broadcast " + t[k]->str() + " to " + op.output.str());
      if (d == a.d && d > 1) a.s[k] = t[k]->stride(i - off);
    }
    if (a.d == 1) continue;
    if (!axes.empty()) {
      EltAxis& p = axes.back();
      bool merge = true;
      for (int k = 0; k < 3; ++k) merge = merge && p.s[k] == a.s[k] * a.d;
      if (merge) {
        p = {p.d * a.d, {a.s[0], a.s[1], a.s[2]}};
        continue;
      }
    }
    axes.push_back(a);
  }
  if (axes.empty())
    axes.push_back({1, {op.a.elem_size(), op.b.elem_size(), op.output.elem_size()}});
  if (axes.size() > 4) return make_error(EINVAL, who + "broadcast pattern needs more than 4 dims");
  const uint64_t budget = ctx.budget();
  size_t ax = axes.size() > 3 ? axes.size() - 3 : 0;
  while (ax < axes.size() && sram_need(axes, ax, 1, e) > budget) ++ax;
  if (ax == axes.size())
    return make_error(ENOSPC, detail::sram_error("eltwise", op.name, "one element", 0, budget));
  uint64_t cmax = 1;
  for (uint64_t lo = 1, hi = axes[ax].d; lo <= hi;) {
    const uint64_t mid = (lo + hi) / 2;
    if (sram_need(axes, ax, mid, e) <= budget && mid <= UINT32_MAX)
      cmax = mid, lo = mid + 1;
    else
      hi = mid - 1;
  }
  const std::vector<uint32_t> cands = detail::tile_candidates(uint32_t(axes[ax].d), uint32_t(cmax));

  auto emit = [&](uint32_t chunk, EmitContext& c, LayerReport& rep) -> Expected<void> {
    auto& b = c.builder;
    detail::SramPlan plan(c);
    uint32_t slot[3][2];
    bool inv[2] = {invariant(axes, ax, 0), invariant(axes, ax, 1)};
    for (int k = 0; k < 3; ++k) {
      slot[k][0] = plan.take(box_elems(axes, ax, chunk, k) * e);
      slot[k][1] = (k < 2 && inv[k]) ? slot[k][0] : plan.take(box_elems(axes, ax, chunk, k) * e);
    }
    if (!plan.fits())
      return make_error(
          ENOSPC, detail::sram_error("eltwise", op.name, "tiling", plan.used(), plan.limit()));
    const uint64_t nchunks = ceil_div(axes[ax].d, chunk);
    uint64_t outer = 1;
    for (size_t i = 0; i < ax; ++i) outer *= axes[i].d;
    rep.tiles = uint32_t(outer * nchunks);
    rep.tiling = "axis " + std::to_string(ax) + " chunk " + std::to_string(chunk);
    struct Tile {
      uint64_t off[3];
      uint64_t cc;
    };
    auto tile = [&](uint32_t i) {
      Tile tl{{0, 0, 0}, 0};
      const uint64_t j = i % nchunks;
      uint64_t o = i / nchunks;
      for (size_t a = ax; a-- > 0;) {
        const uint64_t idx = o % axes[a].d;
        o /= axes[a].d;
        for (int k = 0; k < 3; ++k) tl.off[k] += idx * axes[a].s[k];
      }
      for (int k = 0; k < 3; ++k) tl.off[k] += j * chunk * axes[ax].s[k];
      tl.cc = std::min<uint64_t>(chunk, axes[ax].d - j * chunk);
      return tl;
    };
    auto box = [&](const Tile& tl, int k) {
      std::vector<BoxDim> dims{{axes[ax].s[k] ? tl.cc : 1, axes[ax].s[k]}};
      for (size_t i = ax + 1; i < axes.size(); ++i)
        dims.push_back({axes[i].s[k] ? axes[i].d : 1, axes[i].s[k]});
      return dims;
    };
    detail::Pipeline p;
    p.engine = NPU_ENGINE_VECTOR;
    p.tiles = rep.tiles;
    p.load = [&](uint32_t i, uint32_t s) -> Expected<void> {
      const Tile tl = tile(i);
      for (int k = 0; k < 2; ++k) {
        if (inv[k] && i > 0) continue;
        NPU_TRY(detail::emit_dma(b, true, t[k]->va + tl.off[k], slot[k][s], e, box(tl, k),
                                 op.name + (k ? " b" : " a"), detail::convert_of(*t[k])));
      }
      return ok();
    };
    p.compute = [&](uint32_t i, uint32_t s) -> Expected<void> {
      const Tile tl = tile(i);
      // Command dims: [chunk][inner axes...], right-aligned in 4.
      std::vector<uint64_t> dims{tl.cc};
      for (size_t a = ax + 1; a < axes.size(); ++a) dims.push_back(axes[a].d);
      std::array<uint32_t, 4> shape{1, 1, 1, 1};
      std::array<uint32_t, 4> st[3]{};
      const size_t off = 4 - dims.size();
      for (int k = 0; k < 3; ++k) {
        uint64_t acc = 1;
        for (size_t q = dims.size(); q-- > 0;) {
          const bool present = k == 2 || axes[q == 0 ? ax : ax + q].s[k] != 0;
          st[k][off + q] = present ? uint32_t(acc) : 0;
          if (present) acc *= dims[q];
        }
      }
      for (size_t q = 0; q < dims.size(); ++q) shape[off + q] = uint32_t(dims[q]);
      isa::EltwiseArgs a;
      a.op = op.op, a.dtype = dt, a.shape = shape;
      a.a_addr = slot[0][s], a.b_addr = slot[1][s], a.out_addr = slot[2][s];
      a.a_stride = st[0], a.b_stride = st[1], a.out_stride = st[2];
      b.eltwise(a);
      return ok();
    };
    p.store = [&](uint32_t i, uint32_t s) -> Expected<void> {
      const Tile tl = tile(i);
      return detail::emit_dma(b, false, op.output.va + tl.off[2], slot[2][s], e, box(tl, 2),
                              op.name + " output", detail::convert_of(op.output));
    };
    return detail::emit_pipeline(c, p);
  };
  LayerReport base;
  base.name = op.name;
  base.op = "eltwise";
  base.engine = NPU_ENGINE_VECTOR;
  return detail::search_emit(ctx, cands, emit, base);
}

}  // namespace npu::codegen
