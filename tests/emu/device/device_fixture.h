// Helpers for device-model tests: raw command construction, a host "DRAM" mapped through an
// Mmu, and a Device with a small config.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "npu/emu/device.h"
#include "npu/isa/regions.h"

namespace npu::emu::testing {

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

inline isa::Program program(std::vector<npu_cmd> cmds) {
  cmds.push_back(make(NPU_OP_END, NPU_ENGINE_CP));
  isa::Program p;
  p.cmds = std::move(cmds);
  return p;
}

/// Host buffers standing in for BOs.
struct Dram {
  static constexpr uint64_t kBase = 0x1'0000'0000ull;
  std::vector<std::vector<std::byte>> bufs;
  Mmu mmu;
  uint64_t add(size_t bytes, uint8_t access = isa::kRead | isa::kWrite) {
    uint64_t va = kBase + bufs.size() * 0x100000ull;
    bufs.emplace_back(bytes);
    EXPECT_TRUE(mmu.map({va, bytes, bufs.back().data(), access}));
    return va;
  }
  std::vector<std::byte>& at(size_t i) { return bufs[i]; }
};

inline isa::DeviceConfig small_config() {
  isa::DeviceConfig cfg;
  cfg.sram_size = 256 * 1024;
  return cfg;
}

}  // namespace npu::emu::testing
