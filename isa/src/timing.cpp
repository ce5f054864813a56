// The COST column of the opcode table: the per-command cycle formulas of docs/timing.md.
// Integer-only and deterministic; arithmetic saturates instead of wrapping. command_cost()
// dispatches through npu/isa/opcodes.def.
#include "npu/isa/timing.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "common.h"
#include "semantics.h"

namespace npu::isa {
namespace detail {
namespace {

uint64_t prod(std::initializer_list<uint64_t> v) {
  uint64_t p = 1;
  for (uint64_t x : v) p = sat_mul(p, x);
  return p;
}

}  // namespace

CommandCost cost_dma(const npu_cmd_dma& c, const DeviceConfig& cfg) {
  const bool load = c.hdr.opcode == NPU_OP_DMA_LOAD;
  CommandCost cost;
  const uint64_t bpc = cfg.dma.bytes_per_cycle ? cfg.dma.bytes_per_cycle : 1;
  // A converting DMA (since 1.1) moves dram_dtype-sized elements over the bus: its transfer
  // counts the DRAM-side bytes; padding is written in SRAM elements (elem_size).
  const uint64_t elem = c.dram_dtype != 0 ? dtype_size(c.dram_dtype) : c.elem_size;
  const uint64_t rows = sat_mul(c.size[1], c.size[2]);
  const uint64_t elems = sat_mul(c.size[0], rows);
  cost.bytes = sat_mul(elems, elem);
  uint64_t transfer;
  if (c.dram_stride[0] == elem) {
    transfer = sat_mul(rows, ceil_div(sat_mul(c.size[0], elem), bpc));  // contiguous rows
  } else {
    transfer = sat_mul(elems, ceil_div(elem, bpc));  // every element is its own run
  }
  uint64_t pad_bytes = 0;
  if (load) {
    uint64_t padded = 1;
    for (int i = 0; i < 3; ++i) {
      padded = sat_mul(padded, uint64_t{c.size[i]} + c.pad_before[i] + c.pad_after[i]);
    }
    pad_bytes = sat_mul(padded - elems, c.elem_size);
  }
  cost.cycles = sat_add(sat_add(cfg.dma.latency, transfer), ceil_div(pad_bytes, bpc));
  return cost;
}

namespace {

uint32_t lanes_for(uint32_t elem_bytes, const DeviceConfig& cfg) {
  const uint32_t l = elem_bytes == 1 ? cfg.vector.int8_lanes : cfg.vector.fp32_lanes;
  return l ? l : 1;
}

/// Vector cycles: latency + ceil(work / lanes) * op_cost.
uint64_t vec_cycles(uint64_t work, uint32_t lanes, uint64_t op_cost, const DeviceConfig& cfg) {
  return sat_add(cfg.vector.latency, sat_mul(ceil_div(work, lanes), op_cost));
}

bool act_is_transcendental(uint8_t func) {
  // Cost class: the feature-gated functions plus sqrt and reciprocal (division-like).
  return act_needs_transcendental(func) || func == NPU_ACT_SQRT || func == NPU_ACT_RECIPROCAL;
}

/// Matrix array rows and columns of the datapath `in_dtype` selects (fp16 and bf16 share the
/// half array).
std::pair<uint64_t, uint64_t> array_of(uint8_t in_dtype, const DeviceConfig& cfg) {
  if (in_dtype == NPU_DTYPE_FP32) return {cfg.matrix.fp32_rows, cfg.matrix.fp32_cols};
  if (dtype_is_half(in_dtype)) return {cfg.matrix.fp16_rows, cfg.matrix.fp16_cols};
  return {cfg.matrix.int8_rows, cfg.matrix.int8_cols};
}

/// Elementwise work of `elements` outputs, at the lanes of `elem_bytes`-wide elements.
CommandCost vec_cost(uint64_t elements, uint64_t work, uint32_t elem_bytes, uint64_t op_cost,
                     const DeviceConfig& cfg) {
  CommandCost cost;
  cost.elements = elements;
  cost.cycles = vec_cycles(work, lanes_for(elem_bytes, cfg), op_cost, cfg);
  return cost;
}

uint64_t count4(const uint32_t (&s)[4]) {
  return prod({s[0], s[1], s[2], s[3]});
}

}  // namespace

CommandCost cost_conv2d(const npu_cmd_conv2d& c, const DeviceConfig& cfg) {
  const auto [rows, cols] = array_of(c.in_dtype, cfg);
  const uint64_t groups = c.groups ? c.groups : 1;
  const uint64_t kg = prod({c.k_h, c.k_w, c.in_c / groups});
  const uint64_t ocg = c.out_c / groups;
  const uint64_t pixels = prod({c.out_h, c.out_w});
  CommandCost cost;
  cost.cycles = sat_add(cfg.matrix.fill_latency,
                        prod({groups, ceil_div(ocg, cols), ceil_div(kg, rows), pixels}));
  cost.macs = prod({pixels, c.out_c, kg});
  return cost;
}

CommandCost cost_matmul(const npu_cmd_matmul& c, const DeviceConfig& cfg) {
  const auto [rows, cols] = array_of(c.a_dtype, cfg);
  CommandCost cost;
  cost.cycles = sat_add(cfg.matrix.fill_latency,
                        prod({c.batch, ceil_div(c.n, cols), ceil_div(c.k, rows), c.m}));
  cost.macs = prod({c.batch, c.m, c.n, c.k});
  return cost;
}

CommandCost cost_eltwise(const npu_cmd_eltwise& c, const DeviceConfig& cfg) {
  const bool heavy = c.op == NPU_ELTWISE_POW || c.op == NPU_ELTWISE_DIV;
  const uint64_t n = count4(c.shape);
  return vec_cost(n, n, dtype_size(c.dtype), heavy ? cfg.vector.transcendental_cost : 1, cfg);
}

CommandCost cost_activation(const npu_cmd_activation& c, const DeviceConfig& cfg) {
  const uint64_t n = count4(c.shape);
  return vec_cost(n, n, dtype_size(c.dtype),
                  act_is_transcendental(c.func) ? cfg.vector.transcendental_cost : 1, cfg);
}

CommandCost cost_pool(const npu_cmd_pool& c, const DeviceConfig& cfg) {
  const uint64_t n = prod({c.out_h, c.out_w, c.channels});
  return vec_cost(n, prod({n, c.k_h, c.k_w}), dtype_size(c.dtype), 1, cfg);
}

CommandCost cost_softmax(const npu_cmd_softmax& c, const DeviceConfig& cfg) {
  const uint64_t n = prod({c.rows, c.len});
  return vec_cost(n, n, 4, sat_add(2, cfg.vector.transcendental_cost), cfg);
}

CommandCost cost_scale_shift(const npu_cmd_scale_shift& c, const DeviceConfig& cfg) {
  const uint64_t n = prod({c.outer, c.channels});
  return vec_cost(n, n, 4, 1, cfg);
}

CommandCost cost_quant(const npu_cmd_quant& c, const DeviceConfig& cfg) {
  return vec_cost(c.count, c.count, std::max(dtype_size(c.in_dtype), dtype_size(c.out_dtype)), 1,
                  cfg);
}

CommandCost cost_requant(const npu_cmd_requant& c, const DeviceConfig& cfg) {
  return vec_cost(c.count, c.count, std::max(dtype_size(c.in_dtype), dtype_size(c.out_dtype)), 1,
                  cfg);
}

CommandCost cost_transpose(const npu_cmd_transpose& c, const DeviceConfig& cfg) {
  const uint64_t n = count4(c.in_shape);
  return vec_cost(n, n, c.elem_size, 1, cfg);
}

CommandCost cost_reduce(const npu_cmd_reduce& c, const DeviceConfig& cfg) {
  return vec_cost(prod({c.outer, c.inner}), prod({c.outer, c.len, c.inner}), 4, 1, cfg);
}

// One pass over the input with two accumulations (x and x * x) per element: the cost of two
// unit vector ops per input element, against REDUCE's one (ELTWISE MUL + REDUCE MEAN, the
// sequence it replaces, costs a write and a second read of the squares on top).
CommandCost cost_moments(const npu_cmd_moments& c, const DeviceConfig& cfg) {
  return vec_cost(2 * prod({c.outer, c.inner}), prod({c.outer, c.len, c.inner}), 4, 2, cfg);
}

}  // namespace detail

CommandCost command_cost(const npu_cmd& cmd, const DeviceConfig& cfg) {
  switch (cmd.hdr.opcode) {
#define NPU_CONTROL(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, CYCLES) \
  case NPU_OP_##ID:                                                              \
    return CommandCost{.cycles = CYCLES};
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, FEATURES, REGIONS, COST, \
                 ...)                                                                          \
  case NPU_OP_##ID:                                                                            \
    return detail::COST(cmd.PAYLOAD, cfg);
#include "npu/isa/opcodes.def"
    default:
      return {};
  }
}

}  // namespace npu::isa
