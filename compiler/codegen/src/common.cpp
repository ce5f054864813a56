// Shared emitter machinery: DMA boxes, the double-buffered pipeline, semaphore ids, the
// layer report and tile-size candidates.
#include <cstdio>

#include "internal.h"
#include "npu/isa/timing.h"

namespace npu::codegen {

Expected<uint32_t> SemAllocator::get(uint8_t from_engine, uint8_t to_engine, uint32_t channel) {
  const auto key = std::make_tuple(from_engine, to_engine, channel);
  if (auto it = ids_.find(key); it != ids_.end()) return it->second;
  if (next_ >= limit_)
    return make_error(ENOSPC, "semaphores exhausted: the device has " + std::to_string(limit_));
  ids_[key] = next_;
  return next_++;
}

uint64_t roofline(const LayerReport& l) {
  return std::max({l.compute_cycles, l.dma_in_cycles, l.dma_out_cycles});
}

double roofline_ratio(const LayerReport& l) {
  const uint64_t r = roofline(l);
  return r ? double(l.cycles) / double(r) : 0.0;
}

std::string format_report_header() {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-22s %-11s %-6s %6s %12s %10s %10s %10s %6s %5s", "layer", "op",
                "engine", "tiles", "MACs", "bytes", "cycles", "roofline", "ratio", "util");
  return buf;
}

std::string format_report_line(const LayerReport& l) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-22s %-11s %-6s %6u %12llu %10llu %10llu %10llu %6.3f %4.0f%%",
                l.name.c_str(), l.op.c_str(),
                l.engine == NPU_ENGINE_MATRIX   ? "matrix"
                : l.engine == NPU_ENGINE_VECTOR ? "vector"
                                                : "dma",
                l.tiles, static_cast<unsigned long long>(l.macs),
                static_cast<unsigned long long>(l.bytes_in + l.bytes_out),
                static_cast<unsigned long long>(l.cycles),
                static_cast<unsigned long long>(roofline(l)), roofline_ratio(l),
                100.0 * l.utilization());
  return buf;
}

namespace detail {

Expected<void> emit_dma(isa::CommandBufferBuilder& b, bool load, uint64_t dram, uint32_t sram,
                        uint32_t elem, std::vector<BoxDim> dims, const std::string& what,
                        Convert cvt) {
  std::vector<BoxDim> m;  // merged, outermost first
  for (const BoxDim& d : dims) {
    if (d.size == 0) return make_error(EINVAL, what + ": empty dma box");
    if (d.size == 1) continue;
    if (!m.empty() && m.back().stride == d.size * d.stride) {
      m.back() = {m.back().size * d.size, d.stride};
    } else {
      m.push_back(d);
    }
  }
  // Merge the innermost dim into a contiguous x when it is not already element-strided.
  if (m.empty()) m.push_back({1, cvt.dram ? isa::dtype_size(cvt.dram) : elem});
  if (m.size() > 3)
    return make_error(EINVAL, what + ": dma box has " + std::to_string(m.size()) +
                                  " non-contiguous dims (at most 3)");
  while (m.size() < 3) m.insert(m.begin(), BoxDim{1, m.front().size * m.front().stride});
  isa::DmaArgs a;
  a.dram = dram;
  a.sram = sram;
  a.elem_size = elem;
  a.dram_dtype = cvt.dram;
  a.sram_dtype = cvt.sram;
  std::array<uint32_t, 3> ds{};
  for (int i = 0; i < 3; ++i) {
    const BoxDim& d = m[2 - i];
    if (d.size > UINT32_MAX || d.stride > UINT32_MAX)
      return make_error(EINVAL, what + ": dma box dim or stride exceeds 32 bits");
    a.size[i] = static_cast<uint32_t>(d.size);
    ds[i] = static_cast<uint32_t>(d.stride);
  }
  a.dram_stride = ds;
  if (load)
    b.dma_load(a);
  else
    b.dma_store(a);
  return ok();
}

Expected<void> emit_dma_bytes(isa::CommandBufferBuilder& b, bool load, uint64_t dram, uint32_t sram,
                              uint64_t bytes, const std::string& what) {
  const uint32_t elem = bytes % 4 == 0 ? 4 : 1;
  return emit_dma(b, load, dram, sram, elem, {{bytes / elem, elem}}, what);
}

Expected<void> emit_pipeline(EmitContext& ctx, const Pipeline& p) {
  auto& b = ctx.builder;
  const uint8_t ce = p.engine;
  auto full = ctx.sems.get(NPU_ENGINE_DMA_IN, ce);
  auto free = ctx.sems.get(ce, NPU_ENGINE_DMA_IN);
  auto ready = ctx.sems.get(ce, NPU_ENGINE_DMA_OUT);
  auto ofree = ctx.sems.get(NPU_ENGINE_DMA_OUT, ce);
  for (auto* s : {&full, &free, &ready, &ofree})
    if (!*s) return s->error();
  for (uint32_t t = 0; t < p.tiles; ++t) {
    const uint32_t slot = t % 2;
    // dma_in: wait until compute released this slot (tile t - 2), load, announce it.
    if (t >= 2) b.sem_wait(NPU_ENGINE_DMA_IN, *free);
    NPU_TRY(p.load(t, slot));
    b.sem_signal(NPU_ENGINE_DMA_IN, *full);
    // compute: wait for the input and for dma_out to have drained this output slot.
    b.sem_wait(ce, *full);
    if (t >= 2) b.sem_wait(ce, *ofree);
    NPU_TRY(p.compute(t, slot));
    b.sem_signal(ce, *ready);
    b.sem_signal(ce, *free);
    // dma_out: store the tile, release the output slot.
    b.sem_wait(NPU_ENGINE_DMA_OUT, *ready);
    NPU_TRY(p.store(t, slot));
    b.sem_signal(NPU_ENGINE_DMA_OUT, *ofree);
  }
  // Drain the tokens nobody waited for, so the semaphores end at zero for the next layer.
  const uint32_t rest = std::min<uint32_t>(p.tiles, 2);
  if (rest) {
    b.sem_wait(NPU_ENGINE_DMA_IN, *free, rest);
    b.sem_wait(ce, *ofree, rest);
  }
  return ok();
}

Expected<void> finish_report(EmitContext& ctx, uint32_t first, LayerReport& r) {
  auto cmds = ctx.builder.commands().subspan(first);
  auto s = isa::replay(cmds, ctx.cfg);
  if (!s) return s.error();
  r.first_cmd = first;
  r.num_cmds = static_cast<uint32_t>(cmds.size());
  r.cycles = s->cycles;
  r.macs = r.bytes_in = r.bytes_out = 0;
  r.compute_cycles = r.dma_in_cycles = r.dma_out_cycles = 0;
  for (const npu_cmd& c : cmds) {
    const uint8_t op = c.hdr.opcode;
    if (op == NPU_OP_SEM_WAIT || op == NPU_OP_SEM_SIGNAL || op == NPU_OP_END) continue;
    const isa::CommandCost k = isa::command_cost(c, ctx.cfg);
    switch (c.hdr.engine) {
      case NPU_ENGINE_DMA_IN:
        r.dma_in_cycles += k.cycles;
        r.bytes_in += k.bytes;
        break;
      case NPU_ENGINE_DMA_OUT:
        r.dma_out_cycles += k.cycles;
        r.bytes_out += k.bytes;
        break;
      case NPU_ENGINE_MATRIX:
      case NPU_ENGINE_VECTOR:
        r.compute_cycles += k.cycles;
        r.macs += k.macs;
        break;
      default:
        break;
    }
  }
  return ok();
}

std::vector<uint32_t> tile_candidates(uint32_t total, uint32_t max_fit, uint32_t align) {
  std::vector<uint32_t> out;
  max_fit = std::min(max_fit, total);
  if (max_fit == 0) return out;
  auto add = [&](uint64_t v) {
    if (align > 1 && v < total) v = round_up(v, align);
    v = std::clamp<uint64_t>(v, 1, max_fit);
    if (align > 1 && v < total && v % align) v = v / align * align;
    if (v == 0) v = std::min<uint32_t>(max_fit, align);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(uint32_t(v));
  };
  add(max_fit);
  for (uint32_t k : {2u, 3u, 4u, 6u, 8u, 12u, 16u, 24u, 32u, 48u, 64u}) add(ceil_div(total, k));
  return out;
}

std::string sram_error(const std::string& op, const std::string& name, const std::string& what,
                       uint64_t need, uint64_t have) {
  return op + " " + name + ": " + what + " does not fit in sram (needs " + std::to_string(need) +
         " bytes, " + std::to_string(have) + " available)";
}

}  // namespace detail
}  // namespace npu::codegen
