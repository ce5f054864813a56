// Private helpers shared by the emitters: the double-buffered tile pipeline, strided DRAM
// boxes as DMA commands, SRAM slot planning, the tile-size search and the layer report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "npu/codegen/emit.h"
#include "npu/isa/schedule.h"

namespace npu::codegen::detail {

inline uint64_t ceil_div(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}
inline uint64_t round_up(uint64_t a, uint64_t b) {
  return ceil_div(a, b) * b;
}

/// One dim of a DRAM box: extent and byte stride (outermost first in a vector).
struct BoxDim {
  uint64_t size;
  uint64_t stride;
};

/// Output-channel lanes of the matrix engine's array for a weight dtype.
inline uint32_t matrix_cols(const isa::DeviceConfig& cfg, uint8_t w_dtype) {
  if (isa::dtype_is_half(w_dtype)) return cfg.matrix.fp16_cols;
  return w_dtype == NPU_DTYPE_FP32 ? cfg.matrix.fp32_cols : cfg.matrix.int8_cols;
}

/// The element conversion of a DMA: DRAM and SRAM types (both 0: the bytes move unchanged).
struct Convert {
  uint8_t dram = 0, sram = 0;
};
/// The conversion a tensor's DMAs make (none unless its SRAM type differs).
inline Convert convert_of(const TensorDesc& t) {
  return t.sram_dtype && t.sram_dtype != t.dtype ? Convert{t.dtype, t.sram_dtype} : Convert{};
}

/// Emits one DMA_LOAD (load) or DMA_STORE of a strided DRAM box to/from a contiguous SRAM
/// box of `elem`-byte SRAM elements. Dims of extent 1 are dropped and contiguous neighbours
/// merged; at most 3 may remain. `cvt` converts elements between the DRAM and SRAM types.
Expected<void> emit_dma(isa::CommandBufferBuilder& b, bool load, uint64_t dram, uint32_t sram,
                        uint32_t elem, std::vector<BoxDim> dims, const std::string& what,
                        Convert cvt = {});

/// A contiguous 1-D copy of `bytes` bytes (weights, params), in the widest element size
/// dividing the size.
Expected<void> emit_dma_bytes(isa::CommandBufferBuilder& b, bool load, uint64_t dram, uint32_t sram,
                              uint64_t bytes, const std::string& what);

/// The double-buffered tile pipeline (docs/codegen.md): tile t loads into input slot t % 2,
/// computes from it into output slot t % 2 and stores from there. Semaphores: full
/// (dma_in -> compute), free (compute -> dma_in), ready (compute -> dma_out), ofree
/// (dma_out -> compute). Buffer order is load(t), compute(t), store(t): every wait's signal
/// precedes it in the buffer, so no queue depth can deadlock it.
struct Pipeline {
  uint8_t engine = NPU_ENGINE_MATRIX;  // compute engine
  uint32_t tiles = 0;
  std::function<Expected<void>(uint32_t tile, uint32_t slot)> load, compute, store;
};
Expected<void> emit_pipeline(EmitContext& ctx, const Pipeline& p);

/// Bump allocator over the layer's SRAM budget.
class SramPlan {
 public:
  explicit SramPlan(const EmitContext& ctx) : base_(ctx.sram_base), limit_(ctx.budget()) {}
  uint32_t take(uint64_t bytes) {
    const uint64_t at = used_;
    used_ += round_up(bytes, 64);
    return static_cast<uint32_t>(base_ + at);
  }
  bool fits() const { return used_ <= limit_; }
  uint64_t used() const { return used_; }
  uint64_t limit() const { return limit_; }

 private:
  uint64_t base_, limit_, used_ = 0;
};
inline uint64_t slot_bytes(uint64_t bytes) {
  return round_up(bytes, 64);
}

/// Fills the report's cycles and per-engine sums from a replay of the commands the layer
/// appended (from `first` on).
Expected<void> finish_report(EmitContext& ctx, uint32_t first, LayerReport& r);

/// Emits the layer once per candidate into scratch builders, keeps the one with the fewest
/// replayed cycles and emits it for real. `emit(candidate, ctx, report)` appends the layer.
template <typename P, typename F>
Expected<LayerReport> search_emit(EmitContext& ctx, std::vector<P> candidates, F emit,
                                  const LayerReport& base) {
  if (candidates.empty()) return make_error(EINVAL, base.op + " " + base.name + ": no tiling");
  size_t best = 0;
  if (ctx.search && candidates.size() > 1) {
    uint64_t best_cycles = UINT64_MAX;
    for (size_t i = 0; i < candidates.size(); ++i) {
      isa::CommandBufferBuilder scratch;
      SemAllocator sems = ctx.sems;
      EmitContext sc{scratch, ctx.cfg, sems, ctx.sram_base, ctx.sram_bytes, false};
      LayerReport r = base;
      if (!emit(candidates[i], sc, r)) continue;
      auto s = isa::replay(scratch.commands(), ctx.cfg);
      if (s && s->cycles < best_cycles) best_cycles = s->cycles, best = i;
    }
  }
  LayerReport r = base;
  const uint32_t first = static_cast<uint32_t>(ctx.builder.size());
  NPU_TRY(emit(candidates[best], ctx, r));
  NPU_TRY(finish_report(ctx, first, r));
  return r;
}

/// Distinct tile extents to try for a dimension of `total` with at most `max_fit` per tile.
std::vector<uint32_t> tile_candidates(uint32_t total, uint32_t max_fit, uint32_t align = 1);

std::string sram_error(const std::string& op, const std::string& name, const std::string& what,
                       uint64_t need, uint64_t have);

}  // namespace npu::codegen::detail
