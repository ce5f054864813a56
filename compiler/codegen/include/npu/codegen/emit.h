// The per-op tilers/emitters: each lowers one device op (op.h) to ISA commands appended to a
// CommandBufferBuilder, tiled to the SRAM budget and double-buffered (docs/codegen.md), and
// returns a layer report with the modeled cycles. Emitted layers are self-contained: their
// semaphores end balanced at zero; put a FENCE between layers that depend on each other.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "npu/codegen/op.h"
#include "npu/expected.h"
#include "npu/isa/builder.h"
#include "npu/isa/device_config.h"

namespace npu::codegen {

/// Hands out one semaphore id per (signalling engine, waiting engine, channel), so the ISA's
/// one-signaller/one-waiter rule holds across every layer of a command buffer.
class SemAllocator {
 public:
  explicit SemAllocator(uint32_t num_semaphores) : limit_(num_semaphores) {}
  Expected<uint32_t> get(uint8_t from_engine, uint8_t to_engine, uint32_t channel = 0);
  uint32_t used() const { return next_; }

 private:
  uint32_t limit_;
  uint32_t next_ = 0;
  std::map<std::tuple<uint8_t, uint8_t, uint32_t>, uint32_t> ids_;
};

/// Where and how an emitter appends its commands.
struct EmitContext {
  isa::CommandBufferBuilder& builder;
  const isa::DeviceConfig& cfg;
  SemAllocator& sems;
  uint32_t sram_base = 0;   // SRAM the layer may use: [sram_base, sram_base + sram_bytes)
  uint64_t sram_bytes = 0;  // 0: up to cfg.sram_size
  bool search = true;       // pick tile sizes by replaying candidate schedules

  uint64_t budget() const {
    return sram_bytes ? sram_bytes : (cfg.sram_size > sram_base ? cfg.sram_size - sram_base : 0);
  }
};

/// One layer's line in the compiler report (a Vela-like table).
struct LayerReport {
  std::string name;
  std::string op;      // "conv2d", "matmul", ...
  uint8_t engine = 0;  // compute engine (NPU_ENGINE_MATRIX/VECTOR); NPU_ENGINE_DMA_OUT: DMA only
  uint32_t tiles = 0;
  std::string tiling;  // e.g. "rows 8 x oc 64"
  uint64_t macs = 0;
  uint64_t bytes_in = 0, bytes_out = 0;
  uint64_t compute_cycles = 0, dma_in_cycles = 0, dma_out_cycles = 0;
  uint64_t cycles = 0;  // replayed cycles of the layer's commands on their own
  uint32_t first_cmd = 0, num_cmds = 0;
  double utilization() const { return cycles ? double(compute_cycles) / double(cycles) : 0.0; }
};

/// max(compute cycles, dma_in cycles, dma_out cycles) of the layer.
uint64_t roofline(const LayerReport& layer);
/// cycles / roofline (1.0 = at the bound).
double roofline_ratio(const LayerReport& layer);

Expected<LayerReport> emit_conv2d(const Conv2dOp& op, EmitContext& ctx);
Expected<LayerReport> emit_matmul(const MatMulOp& op, EmitContext& ctx);
Expected<LayerReport> emit_pool(const PoolOp& op, EmitContext& ctx);
Expected<LayerReport> emit_eltwise(const EltwiseOp& op, EmitContext& ctx);
Expected<LayerReport> emit_activation(const ActivationOp& op, EmitContext& ctx);
Expected<LayerReport> emit_softmax(const SoftmaxOp& op, EmitContext& ctx);
Expected<LayerReport> emit_quantize(const QuantizeOp& op, EmitContext& ctx);
Expected<LayerReport> emit_requantize(const RequantizeOp& op, EmitContext& ctx);
Expected<LayerReport> emit_transpose(const TransposeOp& op, EmitContext& ctx);
Expected<LayerReport> emit_reduce(const ReduceOp& op, EmitContext& ctx);
Expected<LayerReport> emit_scale_shift(const ScaleShiftOp& op, EmitContext& ctx);
Expected<LayerReport> emit_copy(const CopyOp& op, EmitContext& ctx);
Expected<LayerReport> emit_pad(const PadOp& op, EmitContext& ctx);

/// "layer | op | engine | tiles | MACs | bytes | cycles | roofline | ratio | util" lines.
std::string format_report_header();
std::string format_report_line(const LayerReport& layer);

}  // namespace npu::codegen
