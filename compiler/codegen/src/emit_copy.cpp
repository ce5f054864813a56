// Copy and Pad lowering: DRAM-to-DRAM box copies staged through SRAM. Both views are reduced
// to axes (unit axes dropped, axes contiguous in both views merged). A tile fixes the leading
// axes (one index each), chunks one of the others and takes the rest whole (at most 3 axes:
// one DMA box). The plain path is a load/store ping-pong between dma_in and dma_out over two SRAM
// slots, with no compute engine; Pad's fill is the DMA_LOAD padding, and tiles lying wholly
// in the padding are stored from a fill row loaded once. When the input's contiguous axis is
// not the output's (a layout change), a transposed path loads in the input's order and
// permutes on the vector engine, so that neither DMA moves one element per run. The variant
// and the tile size are picked by replaying the candidates.
#include <bit>

#include "internal.h"
#include "npu/isa/half.h"

namespace npu::codegen {
namespace {

using detail::BoxDim;
using detail::ceil_div;
using detail::slot_bytes;

constexpr uint64_t kMaxPad = UINT16_MAX;  // DMA pad fields are u16 elements

/// One axis of a box copy: output extent n = pb + in_n + pa (pads only for Pad), byte strides.
struct Axis {
  uint64_t n = 1, in_n = 1, pb = 0, pa = 0;
  uint64_t in_stride = 0, out_stride = 0;
};

struct BoxCopy {
  std::string op, name;
  uint32_t e = 1;       // element bytes in SRAM and in the output
  uint32_t e_in = 1;    // element bytes in the input (differs when the load converts)
  detail::Convert cvt;  // the loads' conversion (input dtype -> output dtype)
  uint64_t in_va = 0, out_va = 0;
  uint32_t fill = 0;
  bool padded = false;
  std::vector<Axis> axes;  // merged, outermost (largest output stride) first
};

/// A way to run the copy: the axes in tile order (SRAM layout and store order) and, for the
/// transposed path, the load order as indices into `axes` (empty: plain path).
struct Variant {
  std::vector<Axis> axes;
  std::vector<uint32_t> load;
};

/// Axes before `split` take one index per tile, axis `chunked` (>= split) `chunk` indices,
/// the others are whole.
struct Tiling {
  size_t variant = 0, split = 0, chunked = 0;
  uint64_t chunk = 1;
};

/// One DMA_LOAD box dim with its fill: `size` elements read, `pb`/`pa` filled around them.
struct PadDim {
  uint64_t size, stride, pb, pa;
};

/// Where tile t of a tiling reads and writes.
struct TileBox {
  bool all_fill = false;  // lies wholly in the padding
  uint64_t in_off = 0, out_off = 0, elems = 1;
  std::vector<PadDim> load;   // axes >= split, tile order
  std::vector<BoxDim> store;  // axes >= split, tile order
};

uint64_t tile_count(const std::vector<Axis>& ax, const Tiling& t) {
  uint64_t n = ceil_div(ax[t.chunked].n, t.chunk);
  for (size_t i = 0; i < t.split; ++i) n *= ax[i].n;
  return n;
}

TileBox tile_box(const std::vector<Axis>& ax, const Tiling& t, uint64_t index) {
  TileBox tb;
  const uint64_t chunks = ceil_div(ax[t.chunked].n, t.chunk);
  const uint64_t c = index % chunks;
  uint64_t rest = index / chunks;
  std::vector<std::pair<uint64_t, uint64_t>> range(ax.size());
  for (size_t i = ax.size(); i-- > 0;) {
    if (i == t.chunked) {
      range[i] = {c * t.chunk, std::min(c * t.chunk + t.chunk, ax[i].n)};
    } else if (i >= t.split) {
      range[i] = {0, ax[i].n};
    } else {
      range[i] = {rest % ax[i].n, rest % ax[i].n + 1};
      rest /= ax[i].n;
    }
  }
  for (size_t i = 0; i < ax.size(); ++i) {
    const Axis& x = ax[i];
    const auto [a, b] = range[i];
    const uint64_t lo = std::max(a, x.pb), hi = std::min(b, x.pb + x.in_n);
    tb.out_off += a * x.out_stride;
    if (lo >= hi) {
      tb.all_fill = true;
    } else {
      tb.in_off += (lo - x.pb) * x.in_stride;
    }
    if (i >= t.split) {
      tb.load.push_back({lo < hi ? hi - lo : 0, x.in_stride, lo < hi ? lo - a : 0, b - hi});
      tb.store.push_back({b - a, x.out_stride});
      tb.elems *= b - a;
    }
  }
  return tb;
}

/// One DMA_LOAD of a strided DRAM box into the contiguous padded SRAM box at `sram`. Unit
/// dims without padding are dropped and neighbours merged when contiguous in DRAM and the
/// inner one is unpadded; at most 3 dims may remain.
Expected<void> emit_padded_load(isa::CommandBufferBuilder& b, uint64_t dram, uint32_t sram,
                                uint32_t e, uint32_t fill, const std::vector<PadDim>& dims,
                                const std::string& what, detail::Convert cvt) {
  std::vector<PadDim> m;
  for (const PadDim& d : dims) {
    if (d.size == 1 && d.pb == 0 && d.pa == 0) continue;
    if (!m.empty() && d.pb == 0 && d.pa == 0) {
      PadDim& o = m.back();
      if (o.stride == d.size * d.stride && o.pb * d.size <= kMaxPad && o.pa * d.size <= kMaxPad) {
        o = {o.size * d.size, d.stride, o.pb * d.size, o.pa * d.size};
        continue;
      }
    }
    m.push_back(d);
  }
  if (m.empty()) m.push_back({1, e, 0, 0});
  if (m.size() > 3)
    return make_error(EINVAL, what + ": dma box has " + std::to_string(m.size()) +
                                  " non-contiguous dims (at most 3)");
  while (m.size() < 3) m.insert(m.begin(), PadDim{1, 0, 0, 0});
  isa::DmaArgs a;
  a.dram = dram;
  a.sram = sram;
  a.elem_size = e;
  a.pad_value = fill;
  a.dram_dtype = cvt.dram;
  a.sram_dtype = cvt.sram;
  std::array<uint32_t, 3> ds{};
  for (int i = 0; i < 3; ++i) {
    const PadDim& d = m[2 - i];
    if (d.size > UINT32_MAX || d.stride > UINT32_MAX)
      return make_error(EINVAL, what + ": dma box dim or stride exceeds 32 bits");
    if (d.pb > kMaxPad || d.pa > kMaxPad)
      return make_error(EINVAL, what + ": padding of " + std::to_string(std::max(d.pb, d.pa)) +
                                    " elements in one dma exceeds 65535");
    a.size[i] = uint32_t(d.size);
    ds[i] = uint32_t(d.stride);
    a.pad_before[i] = uint16_t(d.pb);
    a.pad_after[i] = uint16_t(d.pa);
  }
  a.dram_stride = ds;
  b.dma_load(a);
  return ok();
}

/// DMA_STOREs of the fill row (`len` elements at `sram`) over a DRAM box of merged dims:
/// y and z read the same row (SRAM stride 0); a longer x is cut into rows of `len`, and
/// boxes of more than 3 dims loop over their outermost dim.
Expected<void> emit_fill_box(isa::CommandBufferBuilder& b, uint64_t dram, uint32_t sram, uint32_t e,
                             uint64_t len, std::vector<BoxDim> m, const std::string& what) {
  const BoxDim x = m.back();
  if (x.size > len) {
    const uint64_t q = x.size / len, rem = x.size % len;
    std::vector<BoxDim> rows(m.begin(), m.end() - 1);
    rows.push_back({q, len * x.stride});
    rows.push_back({len, x.stride});
    NPU_TRY(emit_fill_box(b, dram, sram, e, len, rows, what));
    if (rem == 0) return ok();
    std::vector<BoxDim> tail(m.begin(), m.end() - 1);
    tail.push_back({rem, x.stride});
    return emit_fill_box(b, dram + q * len * x.stride, sram, e, len, tail, what);
  }
  if (m.size() > 3) {
    const BoxDim o = m.front();
    const std::vector<BoxDim> inner(m.begin() + 1, m.end());
    for (uint64_t i = 0; i < o.size; ++i)
      NPU_TRY(emit_fill_box(b, dram + i * o.stride, sram, e, len, inner, what));
    return ok();
  }
  while (m.size() < 3) m.insert(m.begin(), BoxDim{1, 0});
  isa::DmaArgs a;
  a.dram = dram;
  a.sram = sram;
  a.elem_size = e;
  a.sram_stride = std::array<uint32_t, 2>{0, 0};
  std::array<uint32_t, 3> ds{};
  for (int i = 0; i < 3; ++i) {
    const BoxDim& d = m[2 - i];
    if (d.size > UINT32_MAX || d.stride > UINT32_MAX)
      return make_error(EINVAL, what + ": dma box dim or stride exceeds 32 bits");
    a.size[i] = uint32_t(d.size);
    ds[i] = uint32_t(d.stride);
  }
  a.dram_stride = ds;
  b.dma_store(a);
  return ok();
}

Expected<void> emit_fill_store(isa::CommandBufferBuilder& b, uint64_t dram, uint32_t sram,
                               uint32_t e, uint64_t len, const std::vector<BoxDim>& dims,
                               const std::string& what) {
  std::vector<BoxDim> m;
  for (const BoxDim& d : dims) {
    if (d.size == 1) continue;
    if (!m.empty() && m.back().stride == d.size * d.stride) {
      m.back() = {m.back().size * d.size, d.stride};
    } else {
      m.push_back(d);
    }
  }
  if (m.empty()) m.push_back({1, e});
  return emit_fill_box(b, dram, sram, e, len, m, what);
}

std::string tiling_name(const Variant& v, const Tiling& t) {
  std::vector<int64_t> sizes;
  for (const auto& axis : v.axes) sizes.push_back(static_cast<int64_t>(axis.n));
  std::string s = "axes " + format::shape_text(sizes);
  s += " fixed " + std::to_string(t.split) + ", axis " + std::to_string(t.chunked) + " by " +
       std::to_string(t.chunk);
  return v.load.empty() ? s : s + ", transposed";
}

/// The plain path: dma_in loads tile k into slot k % 2 and signals full (dma_in -> dma_out);
/// dma_out stores it and signals free (dma_out -> dma_in), which dma_in waits for before
/// reusing the slot at tile k + 2. Every wait follows its signal in buffer order.
Expected<void> emit_plain(const BoxCopy& op, const Variant& v, const Tiling& t, EmitContext& c,
                          LayerReport& rep) {
  auto& b = c.builder;
  const uint64_t tiles = tile_count(v.axes, t);
  const uint64_t tile_elems = tile_box(v.axes, t, 0).elems;
  bool any_fill = false;
  for (uint64_t i = 0; op.padded && !any_fill && i < tiles; ++i)
    any_fill = tile_box(v.axes, t, i).all_fill;
  detail::SramPlan plan(c);
  const uint64_t fill_len = any_fill ? std::min(tile_elems, kMaxPad) : 0;
  const uint32_t fill = any_fill ? plan.take((fill_len + 1) * op.e) : 0;
  uint32_t slot[2];
  for (auto& s : slot) s = plan.take(tile_elems * op.e);
  if (!plan.fits())
    return make_error(ENOSPC,
                      detail::sram_error(op.op, op.name, "tiling", plan.used(), plan.limit()));
  rep.engine = NPU_ENGINE_DMA_OUT;
  rep.tiles = uint32_t(tiles);
  rep.tiling = tiling_name(v, t);
  auto full = c.sems.get(NPU_ENGINE_DMA_IN, NPU_ENGINE_DMA_OUT);
  auto free = c.sems.get(NPU_ENGINE_DMA_OUT, NPU_ENGINE_DMA_IN);
  if (!full) return full.error();
  if (!free) return free.error();
  if (any_fill) {
    // The fill row: fill_len elements of padding before one element read from the input.
    isa::DmaArgs a;
    a.dram = op.in_va;
    a.sram = fill;
    a.elem_size = op.e;
    a.pad_before = {uint16_t(fill_len), 0, 0};
    a.pad_value = op.fill;
    a.dram_dtype = op.cvt.dram;
    a.sram_dtype = op.cvt.sram;
    b.dma_load(a);
    b.sem_signal(NPU_ENGINE_DMA_IN, *full);
    b.sem_wait(NPU_ENGINE_DMA_OUT, *full);
  }
  uint64_t k = 0;
  for (uint64_t i = 0; i < tiles; ++i) {
    const TileBox tb = tile_box(v.axes, t, i);
    if (tb.all_fill) {
      NPU_TRY(emit_fill_store(b, op.out_va + tb.out_off, fill, op.e, fill_len, tb.store,
                              op.name + " fill"));
      continue;
    }
    const uint32_t s = slot[k % 2];
    if (k >= 2) b.sem_wait(NPU_ENGINE_DMA_IN, *free);
    NPU_TRY(emit_padded_load(b, op.in_va + tb.in_off, s, op.e, op.fill, tb.load, op.name + " input",
                             op.cvt));
    b.sem_signal(NPU_ENGINE_DMA_IN, *full);
    b.sem_wait(NPU_ENGINE_DMA_OUT, *full);
    NPU_TRY(
        detail::emit_dma(b, false, op.out_va + tb.out_off, s, op.e, tb.store, op.name + " output"));
    b.sem_signal(NPU_ENGINE_DMA_OUT, *free);
    ++k;
  }
  if (k) b.sem_wait(NPU_ENGINE_DMA_IN, *free, uint32_t(std::min<uint64_t>(k, 2)));
  return ok();
}

/// The transposed path (Copy only): the tile pipeline on the vector engine, loading each
/// tile in the input's axis order and permuting it into the output's with TRANSPOSE.
Expected<void> emit_transposed(const BoxCopy& op, const Variant& v, const Tiling& t, EmitContext& c,
                               LayerReport& rep) {
  auto& b = c.builder;
  const uint64_t tiles = tile_count(v.axes, t);
  const TileBox first = tile_box(v.axes, t, 0);
  detail::SramPlan plan(c);
  uint32_t in[2], out[2];
  for (auto& a : in) a = plan.take(first.elems * op.e);
  for (auto& a : out) a = plan.take(first.elems * op.e);
  if (!plan.fits())
    return make_error(ENOSPC,
                      detail::sram_error(op.op, op.name, "tiling", plan.used(), plan.limit()));
  rep.engine = NPU_ENGINE_VECTOR;
  rep.tiles = uint32_t(tiles);
  rep.tiling = tiling_name(v, t);
  // The tile's axes (>= split) in load order, as positions in the tile order.
  std::vector<uint32_t> order;
  for (uint32_t a : v.load)
    if (a >= t.split) order.push_back(uint32_t(a - t.split));
  detail::Pipeline p;
  p.engine = NPU_ENGINE_VECTOR;
  p.tiles = rep.tiles;
  p.load = [&](uint32_t i, uint32_t s) -> Expected<void> {
    const TileBox tb = tile_box(v.axes, t, i);
    std::vector<PadDim> box;
    for (uint32_t a : order) box.push_back(tb.load[a]);
    return emit_padded_load(b, op.in_va + tb.in_off, in[s], op.e, 0, box, op.name + " input",
                            op.cvt);
  };
  p.compute = [&](uint32_t i, uint32_t s) -> Expected<void> {
    const TileBox tb = tile_box(v.axes, t, i);
    const size_t q = order.size(), pad = 4 - q;
    isa::TransposeArgs a;
    a.in_addr = in[s], a.out_addr = out[s], a.elem_size = op.e;
    for (size_t d = 0; d < pad; ++d) a.perm[d] = uint8_t(d);
    for (size_t j = 0; j < q; ++j) {
      a.in_shape[pad + j] = uint32_t(tb.store[order[j]].size);
      const size_t pos = size_t(std::find(order.begin(), order.end(), uint32_t(j)) - order.begin());
      a.perm[pad + j] = uint8_t(pad + pos);
    }
    b.transpose(a);
    return ok();
  };
  p.store = [&](uint32_t i, uint32_t s) -> Expected<void> {
    const TileBox tb = tile_box(v.axes, t, i);
    return detail::emit_dma(b, false, op.out_va + tb.out_off, out[s], op.e, tb.store,
                            op.name + " output");
  };
  return detail::emit_pipeline(c, p);
}

/// Views of identical logical dims -> merged axes sorted by output stride.
Expected<std::vector<Axis>> make_axes(const std::string& who, const TensorDesc& in,
                                      const TensorDesc& out, const std::vector<uint64_t>& pb) {
  const size_t r = out.rank();
  if ((!in.strides.empty() && in.strides.size() != in.rank()) ||
      (!out.strides.empty() && out.strides.size() != r))
    return make_error(EINVAL, who + "strides do not match the dims");
  std::vector<Axis> ax;
  for (size_t i = 0; i < r; ++i) {
    if (in.dim(i) == 0) return make_error(EINVAL, who + "empty input " + in.str());
    if (out.dim(i) == 1) continue;
    if (out.stride(i) == 0)
      return make_error(
          EINVAL, who + "output dim " + std::to_string(i) + " has stride 0 (overlapping writes)");
    Axis a;
    a.n = out.dim(i), a.in_n = in.dim(i), a.pb = pb[i], a.pa = a.n - a.in_n - a.pb;
    a.in_stride = in.stride(i), a.out_stride = out.stride(i);
    ax.push_back(a);
  }
  std::stable_sort(ax.begin(), ax.end(),
                   [](const Axis& a, const Axis& b) { return a.out_stride > b.out_stride; });
  std::vector<Axis> m;
  for (const Axis& a : ax) {
    if (!m.empty()) {
      Axis& o = m.back();
      const bool unpadded = o.pb == 0 && o.pa == 0 && a.pb == 0 && a.pa == 0;
      if (unpadded && o.in_stride == a.n * a.in_stride && o.out_stride == a.n * a.out_stride) {
        o.n = o.in_n = o.n * a.n;
        o.in_stride = a.in_stride, o.out_stride = a.out_stride;
        continue;
      }
    }
    m.push_back(a);
  }
  if (m.empty()) m.push_back({1, 1, 0, 0, in.elem_size(), out.elem_size()});
  for (const Axis& a : m)
    if (a.n > UINT32_MAX) return make_error(EINVAL, who + "tensor too large");
  return m;
}

Expected<LayerReport> emit_box_copy(const BoxCopy& op, EmitContext& ctx) {
  const std::string who = op.op + " " + op.name + ": ";
  // Variants: output order (plain), input order (plain) when it differs, and the transposed
  // path when the output's innermost axis is not the input's contiguous one.
  std::vector<Variant> vars{{op.axes, {}}};
  std::vector<uint32_t> by_in(op.axes.size());
  for (uint32_t i = 0; i < by_in.size(); ++i) by_in[i] = i;
  auto key = [&](uint32_t i) {
    return op.axes[i].in_stride ? op.axes[i].in_stride : UINT64_MAX;  // broadcast outermost
  };
  std::stable_sort(by_in.begin(), by_in.end(),
                   [&](uint32_t a, uint32_t b) { return key(a) > key(b); });
  if (!std::is_sorted(by_in.begin(), by_in.end())) {
    Variant v;
    for (uint32_t i : by_in) v.axes.push_back(op.axes[i]);
    vars.push_back(v);
    if (!op.padded && op.axes.back().in_stride != op.e_in && v.axes.back().in_stride == op.e_in)
      vars.push_back({op.axes, by_in});
  }
  const uint64_t budget = ctx.budget();
  std::vector<Variant> kept;
  std::vector<Tiling> cands;
  uint64_t need_min = 0;
  for (const Variant& v : vars) {
    const size_t r = v.axes.size();
    const uint64_t slots = v.load.empty() ? 2 : 4;
    auto need = [&](size_t split, size_t axis, uint64_t chunk) {
      uint64_t elems = chunk;
      for (size_t i = split; i < r; ++i) elems *= i == axis ? 1 : v.axes[i].n;
      const uint64_t fill = op.padded ? slot_bytes((std::min(elems, kMaxPad) + 1) * op.e) : 0;
      return slots * slot_bytes(elems * op.e) + fill;
    };
    // The fewest fixed axes (at most 3 left for the DMA box) for which one index of some
    // chunked axis fits; the plain path chunks the outermost one (whole inner rows), the
    // transposed path any (the input's contiguous axis may be the output's outermost).
    size_t split = r > 3 ? r - 3 : 0;
    std::vector<size_t> axes;
    for (;; ++split) {
      for (size_t a = split; a < (v.load.empty() ? split + 1 : r); ++a)
        if (need(split, a, 1) <= budget) axes.push_back(a);
      if (!axes.empty() || split + 1 == r) break;
    }
    if (axes.empty()) {
      const uint64_t n = need(split, split, 1);
      need_min = need_min ? std::min(need_min, n) : n;
      continue;
    }
    for (size_t a : axes) {
      uint64_t lo = 1, hi = v.axes[a].n;  // largest chunk that fits
      while (lo < hi) {
        const uint64_t mid = lo + (hi - lo + 1) / 2;
        if (need(split, a, mid) <= budget) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      for (uint32_t chunk : detail::tile_candidates(uint32_t(v.axes[a].n), uint32_t(lo))) {
        Tiling t{kept.size(), split, a, chunk};
        if (tile_count(v.axes, t) <= UINT32_MAX) cands.push_back(t);
      }
    }
    kept.push_back(v);
  }
  if (kept.empty())
    return make_error(ENOSPC, detail::sram_error(op.op, op.name, "one element", need_min, budget));
  if (cands.empty()) return make_error(EINVAL, who + "too many tiles");
  LayerReport base;
  base.name = op.name;
  base.op = op.op;
  base.engine = NPU_ENGINE_DMA_OUT;
  auto emit = [&](const Tiling& t, EmitContext& c, LayerReport& rep) -> Expected<void> {
    const Variant& v = kept[t.variant];
    return v.load.empty() ? emit_plain(op, v, t, c, rep) : emit_transposed(op, v, t, c, rep);
  };
  return detail::search_emit(ctx, cands, emit, base);
}

/// Equal dtypes, or two float types (the loads convert).
bool same_or_float(uint8_t a, uint8_t b) {
  return a == b || (isa::dtype_is_float(a) && isa::dtype_is_float(b));
}

/// Element sizes and the loads' conversion of a copy from `in` to `out` (SRAM holds the
/// output's type; a copy between fp16 and fp32 converts as it loads).
void set_types(BoxCopy& bc, const TensorDesc& in, const TensorDesc& out) {
  bc.e = out.elem_size(), bc.e_in = in.elem_size();
  if (in.dtype != out.dtype) bc.cvt = {in.dtype, out.dtype};
}

}  // namespace

Expected<LayerReport> emit_copy(const CopyOp& op, EmitContext& ctx) {
  const std::string who = "copy " + op.name + ": ";
  if (op.input.dims != op.output.dims || !same_or_float(op.input.dtype, op.output.dtype))
    return make_error(
        EINVAL, who + "output " + op.output.str() + " does not match input " + op.input.str());
  if (op.input.elem_size() == 0) return make_error(EINVAL, who + "unknown dtype");
  BoxCopy bc;
  bc.op = "copy", bc.name = op.name;
  set_types(bc, op.input, op.output);
  bc.in_va = op.input.va, bc.out_va = op.output.va;
  auto axes = make_axes(who, op.input, op.output, std::vector<uint64_t>(op.input.rank(), 0));
  if (!axes) return axes.error();
  bc.axes = std::move(*axes);
  return emit_box_copy(bc, ctx);
}

Expected<LayerReport> emit_pad(const PadOp& op, EmitContext& ctx) {
  const std::string who = "pad " + op.name + ": ";
  const size_t r = op.input.rank();
  if (!same_or_float(op.input.dtype, op.output.dtype) || op.output.rank() != r ||
      op.pad_before.size() != r)
    return make_error(EINVAL, who + "needs input and output of one dtype (or two float types) " +
                                  "and rank and one pad_before per dim");
  if (op.input.elem_size() == 0) return make_error(EINVAL, who + "unknown dtype");
  std::vector<uint64_t> pb(r);
  bool padded = false;
  for (size_t i = 0; i < r; ++i) {
    pb[i] = op.pad_before[i];
    if (uint64_t(op.input.dim(i)) + pb[i] > op.output.dim(i))
      return make_error(EINVAL, who + "output " + op.output.str() + " is smaller than input " +
                                    op.input.str() + " plus pad_before on dim " +
                                    std::to_string(i));
    const uint64_t pa = op.output.dim(i) - op.input.dim(i) - pb[i];
    if (std::max(pb[i], pa) > kMaxPad)
      return make_error(EINVAL, who + "pad of " + std::to_string(std::max(pb[i], pa)) +
                                    " elements on dim " + std::to_string(i) +
                                    " exceeds the dma's 65535");
    padded |= op.output.dim(i) != op.input.dim(i);
  }
  BoxCopy bc;
  bc.op = "pad", bc.name = op.name;
  set_types(bc, op.input, op.output);
  bc.in_va = op.input.va, bc.out_va = op.output.va;
  if (isa::dtype_is_half(op.output.dtype))  // fill_bits are fp32 bits for every float type
    bc.fill = isa::fp32_to_half(op.output.dtype, std::bit_cast<float>(op.fill_bits));
  else
    bc.fill = bc.e == 4 ? op.fill_bits : op.fill_bits & ((1u << (8 * bc.e)) - 1);
  bc.padded = padded;
  auto axes = make_axes(who, op.input, op.output, pb);
  if (!axes) return axes.error();
  bc.axes = std::move(*axes);
  return emit_box_copy(bc, ctx);
}

}  // namespace npu::codegen
