// Raw npu_cmd construction for tests that build command buffers by hand, below the builder
// (the device model's tests, the schedule replay's): zeroed commands, semaphore commands and
// contiguous 1-D DMAs. Header-only.
#pragma once

#include <cstdint>
#include <cstring>

#include "npu_isa.h"

namespace npu::testing {

inline npu_cmd make(uint8_t op, uint8_t engine) {
  npu_cmd c;
  std::memset(&c, 0, sizeof c);
  c.hdr.opcode = op;
  c.hdr.engine = engine;
  return c;
}

inline npu_cmd sem(uint8_t op, uint8_t engine, uint32_t id, uint32_t count = 1) {
  npu_cmd c = make(op, engine);
  c.sem.sem = id;
  c.sem.count = count;
  return c;
}

/// A contiguous 1-D DMA of `bytes` bytes.
inline npu_cmd dma(uint8_t op, uint64_t dram, uint32_t sram, uint32_t bytes) {
  npu_cmd c = make(op, op == NPU_OP_DMA_LOAD ? NPU_ENGINE_DMA_IN : NPU_ENGINE_DMA_OUT);
  c.dma.dram_addr = dram;
  c.dma.sram_addr = sram;
  c.dma.elem_size = 1;
  c.dma.size[0] = bytes;
  c.dma.size[1] = c.dma.size[2] = 1;
  c.dma.dram_stride[0] = 1;
  c.dma.dram_stride[1] = c.dma.dram_stride[2] = bytes;
  c.dma.sram_stride[0] = c.dma.sram_stride[1] = bytes;
  return c;
}

}  // namespace npu::testing
