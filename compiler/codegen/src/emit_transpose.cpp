// Transpose lowering: unit dims are dropped; tiles fix the first f output axes (one index
// each) so that the rest of the output is one contiguous slice whose input is a strided box
// of at most 3 dims; the vector engine permutes each slice in SRAM.
#include "internal.h"

namespace npu::codegen {

using detail::BoxDim;
using detail::slot_bytes;

Expected<LayerReport> emit_transpose(const TransposeOp& op, EmitContext& ctx) {
  const std::string who = "transpose " + op.name + ": ";
  const size_t R = op.input.rank();
  if (!op.input.contiguous() || !op.output.contiguous() || op.input.dtype != op.output.dtype)
    return make_error(EINVAL, who + "needs contiguous input and output of one dtype");
  if (R == 0 || R > 4 || op.perm.size() != R || op.output.rank() != R)
    return make_error(EINVAL, who + "needs a permutation of 1 to 4 dims");
  std::vector<bool> seen(R);
  for (size_t i = 0; i < R; ++i) {
    if (op.perm[i] >= R || seen[op.perm[i]]) return make_error(EINVAL, who + "bad permutation");
    seen[op.perm[i]] = true;
    if (op.output.dim(i) != op.input.dim(op.perm[i]))
      return make_error(EINVAL, who + "output " + op.output.str() + " does not match");
  }
  // Drop unit input dims and renumber the permutation.
  std::vector<uint32_t> keep, dims, perm;
  for (size_t i = 0; i < R; ++i)
    if (op.input.dim(i) > 1) keep.push_back(uint32_t(i)), dims.push_back(op.input.dim(i));
  for (size_t i = 0; i < R; ++i) {
    auto it = std::find(keep.begin(), keep.end(), op.perm[i]);
    if (it != keep.end()) perm.push_back(uint32_t(it - keep.begin()));
  }
  if (dims.empty()) dims.push_back(1), perm.push_back(0);
  const size_t r = dims.size();
  const uint32_t e = op.input.elem_size();
  std::vector<uint64_t> in_stride(r), out_dims(r), out_stride(r);
  for (size_t i = r; i-- > 0;) in_stride[i] = i + 1 < r ? in_stride[i + 1] * dims[i + 1] : e;
  for (size_t i = 0; i < r; ++i) out_dims[i] = dims[perm[i]];
  for (size_t i = r; i-- > 0;) out_stride[i] = i + 1 < r ? out_stride[i + 1] * out_dims[i + 1] : e;
  // Smallest f (fixed leading output axes) whose slice fits and whose input box is <= 3-D.
  const uint64_t budget = ctx.budget();
  size_t f = 0;
  for (; f < r; ++f) {
    uint64_t slice = e;
    for (size_t i = f; i < r; ++i) slice *= out_dims[i];
    if (r - f <= 3 && 4 * slot_bytes(slice) <= budget) break;
  }
  if (f == r)
    return make_error(ENOSPC, detail::sram_error("transpose", op.name, "one row", 0, budget));
  uint64_t tiles = 1, slice_elems = 1;
  for (size_t i = 0; i < f; ++i) tiles *= out_dims[i];
  for (size_t i = f; i < r; ++i) slice_elems *= out_dims[i];
  if (tiles > UINT32_MAX) return make_error(EINVAL, who + "too many tiles");

  auto emit = [&](uint32_t, EmitContext& c, LayerReport& rep) -> Expected<void> {
    auto& b = c.builder;
    detail::SramPlan plan(c);
    uint32_t in[2], out[2];
    for (auto& a : in) a = plan.take(slice_elems * e);
    for (auto& a : out) a = plan.take(slice_elems * e);
    if (!plan.fits())
      return make_error(
          ENOSPC, detail::sram_error("transpose", op.name, "tiling", plan.used(), plan.limit()));
    rep.tiles = uint32_t(tiles);
    rep.tiling = "fixed axes " + std::to_string(f);
    // Output index of the fixed axes of tile i -> input / output byte offsets.
    auto offsets = [&](uint32_t i) {
      uint64_t in_off = 0, out_off = 0, o = i;
      for (size_t a = f; a-- > 0;) {
        const uint64_t idx = o % out_dims[a];
        o /= out_dims[a];
        in_off += idx * in_stride[perm[a]];
        out_off += idx * out_stride[a];
      }
      return std::pair<uint64_t, uint64_t>(in_off, out_off);
    };
    std::vector<bool> fixed(r, false);
    for (size_t a = 0; a < f; ++a) fixed[perm[a]] = true;
    detail::Pipeline p;
    p.engine = NPU_ENGINE_VECTOR;
    p.tiles = rep.tiles;
    p.load = [&](uint32_t i, uint32_t s) -> Expected<void> {
      std::vector<BoxDim> box;
      for (size_t a = 0; a < r; ++a)
        if (!fixed[a]) box.push_back({dims[a], in_stride[a]});
      return detail::emit_dma(b, true, op.input.va + offsets(i).first, in[s], e, box,
                              op.name + " input");
    };
    p.compute = [&](uint32_t, uint32_t s) -> Expected<void> {
      isa::TransposeArgs a;
      a.in_addr = in[s], a.out_addr = out[s], a.elem_size = e;
      const size_t pad = 4 - r;
      for (size_t q = 0; q < 4; ++q) {
        a.perm[q] = uint8_t(q < pad ? q : perm[q - pad] + pad);
        a.in_shape[q] = q < pad || fixed[q - pad] ? 1 : dims[q - pad];
      }
      b.transpose(a);
      return ok();
    };
    p.store = [&](uint32_t i, uint32_t s) -> Expected<void> {
      return detail::emit_dma(b, false, op.output.va + offsets(i).second, out[s], e,
                              {{slice_elems, e}}, op.name + " output");
    };
    return detail::emit_pipeline(c, p);
  };
  LayerReport base;
  base.name = op.name;
  base.op = "transpose";
  base.engine = NPU_ENGINE_VECTOR;
  return detail::search_emit(ctx, std::vector<uint32_t>{0}, emit, base);
}

}  // namespace npu::codegen
