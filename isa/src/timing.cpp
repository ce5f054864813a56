// command_cost: the per-command cycle formulas of docs/timing.md. Integer-only and
// deterministic; arithmetic saturates instead of wrapping.
#include "npu/isa/timing.h"

#include <algorithm>
#include <initializer_list>

#include "common.h"

namespace npu::isa {
namespace {

using detail::ceil_div;
using detail::sat_add;
using detail::sat_mul;

uint64_t prod(std::initializer_list<uint64_t> v) {
  uint64_t p = 1;
  for (uint64_t x : v) p = sat_mul(p, x);
  return p;
}

CommandCost dma_cost(const npu_cmd_dma& c, bool load, const DeviceConfig& cfg) {
  CommandCost cost;
  const uint64_t bpc = cfg.dma.bytes_per_cycle ? cfg.dma.bytes_per_cycle : 1;
  const uint64_t elem = c.elem_size;
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
    pad_bytes = sat_mul(padded - elems, elem);
  }
  cost.cycles = sat_add(sat_add(cfg.dma.latency, transfer), ceil_div(pad_bytes, bpc));
  return cost;
}

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
  return detail::act_needs_transcendental(func) || func == NPU_ACT_SQRT ||
         func == NPU_ACT_RECIPROCAL;
}

}  // namespace

CommandCost command_cost(const npu_cmd& cmd, const DeviceConfig& cfg) {
  CommandCost cost;
  const uint64_t tc = cfg.vector.transcendental_cost;
  switch (cmd.hdr.opcode) {
    case NPU_OP_SEM_SIGNAL:
    case NPU_OP_MARKER:
    case NPU_OP_NOP:
      cost.cycles = 1;
      return cost;
    case NPU_OP_END:
    case NPU_OP_FENCE:
    case NPU_OP_SEM_WAIT:
      return cost;
    case NPU_OP_DMA_LOAD:
      return dma_cost(cmd.dma, true, cfg);
    case NPU_OP_DMA_STORE:
      return dma_cost(cmd.dma, false, cfg);
    case NPU_OP_CONV2D: {
      const auto& c = cmd.conv2d;
      const bool fp = c.in_dtype == NPU_DTYPE_FP32;
      const uint64_t rows = fp ? cfg.matrix.fp32_rows : cfg.matrix.int8_rows;
      const uint64_t cols = fp ? cfg.matrix.fp32_cols : cfg.matrix.int8_cols;
      const uint64_t groups = c.groups ? c.groups : 1;
      const uint64_t kg = prod({c.k_h, c.k_w, c.in_c / groups});
      const uint64_t ocg = c.out_c / groups;
      const uint64_t pixels = prod({c.out_h, c.out_w});
      cost.cycles = sat_add(cfg.matrix.fill_latency,
                            prod({groups, ceil_div(ocg, cols), ceil_div(kg, rows), pixels}));
      cost.macs = prod({pixels, c.out_c, kg});
      return cost;
    }
    case NPU_OP_MATMUL: {
      const auto& c = cmd.matmul;
      const bool fp = c.a_dtype == NPU_DTYPE_FP32;
      const uint64_t rows = fp ? cfg.matrix.fp32_rows : cfg.matrix.int8_rows;
      const uint64_t cols = fp ? cfg.matrix.fp32_cols : cfg.matrix.int8_cols;
      cost.cycles = sat_add(cfg.matrix.fill_latency,
                            prod({c.batch, ceil_div(c.n, cols), ceil_div(c.k, rows), c.m}));
      cost.macs = prod({c.batch, c.m, c.n, c.k});
      return cost;
    }
    case NPU_OP_ELTWISE: {
      const auto& c = cmd.eltwise;
      const auto& s = c.shape;
      cost.elements = prod({s[0], s[1], s[2], s[3]});
      const bool heavy = c.op == NPU_ELTWISE_POW || c.op == NPU_ELTWISE_DIV;
      cost.cycles = vec_cycles(cost.elements, lanes_for(detail::dtype_size(c.dtype), cfg),
                               heavy ? tc : 1, cfg);
      return cost;
    }
    case NPU_OP_ACTIVATION: {
      const auto& c = cmd.activation;
      const auto& s = c.shape;
      cost.elements = prod({s[0], s[1], s[2], s[3]});
      cost.cycles = vec_cycles(cost.elements, lanes_for(detail::dtype_size(c.dtype), cfg),
                               act_is_transcendental(c.func) ? tc : 1, cfg);
      return cost;
    }
    case NPU_OP_POOL: {
      const auto& c = cmd.pool;
      cost.elements = prod({c.out_h, c.out_w, c.channels});
      cost.cycles = vec_cycles(prod({cost.elements, c.k_h, c.k_w}),
                               lanes_for(detail::dtype_size(c.dtype), cfg), 1, cfg);
      return cost;
    }
    case NPU_OP_SOFTMAX: {
      const auto& c = cmd.softmax;
      cost.elements = prod({c.rows, c.len});
      cost.cycles = vec_cycles(cost.elements, lanes_for(4, cfg), sat_add(2, tc), cfg);
      return cost;
    }
    case NPU_OP_SCALE_SHIFT: {
      const auto& c = cmd.scale_shift;
      cost.elements = prod({c.outer, c.channels});
      cost.cycles = vec_cycles(cost.elements, lanes_for(4, cfg), 1, cfg);
      return cost;
    }
    case NPU_OP_QUANTIZE:
    case NPU_OP_DEQUANTIZE: {
      const auto& c = cmd.quant;
      cost.elements = c.count;
      const uint32_t widest =
          std::max(detail::dtype_size(c.in_dtype), detail::dtype_size(c.out_dtype));
      cost.cycles = vec_cycles(cost.elements, lanes_for(widest, cfg), 1, cfg);
      return cost;
    }
    case NPU_OP_REQUANTIZE: {
      const auto& c = cmd.requant;
      cost.elements = c.count;
      const uint32_t widest =
          std::max(detail::dtype_size(c.in_dtype), detail::dtype_size(c.out_dtype));
      cost.cycles = vec_cycles(cost.elements, lanes_for(widest, cfg), 1, cfg);
      return cost;
    }
    case NPU_OP_TRANSPOSE: {
      const auto& c = cmd.transpose;
      const auto& s = c.in_shape;
      cost.elements = prod({s[0], s[1], s[2], s[3]});
      cost.cycles = vec_cycles(cost.elements, lanes_for(c.elem_size, cfg), 1, cfg);
      return cost;
    }
    case NPU_OP_REDUCE: {
      const auto& c = cmd.reduce;
      cost.elements = prod({c.outer, c.inner});
      cost.cycles = vec_cycles(prod({c.outer, c.len, c.inner}), lanes_for(4, cfg), 1, cfg);
      return cost;
    }
    default:
      return cost;
  }
}

}  // namespace npu::isa
