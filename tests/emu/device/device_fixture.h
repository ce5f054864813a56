// Helpers for device-model tests: raw command construction, a host "DRAM" mapped through an
// Mmu, and a Device with a small config.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../../isa/raw_commands.h"
#include "npu/emu/device.h"
#include "npu/isa/regions.h"

namespace npu::emu::testing {

using npu::testing::dma;
using npu::testing::make;
using npu::testing::sem;

inline isa::Program program(std::vector<npu_cmd> cmds) {
  cmds.push_back(make(NPU_OP_END, NPU_ENGINE_CP));
  isa::Program p;
  p.cmds = std::move(cmds);
  return p;
}

/// `cmds` one after another: each command waits for the one before it (a semaphore between
/// consecutive commands), so the serial order is the program order.
inline isa::Program chain(const std::vector<npu_cmd>& cmds) {
  std::vector<npu_cmd> out;
  for (size_t i = 0; i < cmds.size(); ++i) {
    if (i > 0) out.push_back(sem(NPU_OP_SEM_WAIT, cmds[i].hdr.engine, uint32_t(i % 8)));
    out.push_back(cmds[i]);
    if (i + 1 < cmds.size())
      out.push_back(sem(NPU_OP_SEM_SIGNAL, cmds[i].hdr.engine, uint32_t((i + 1) % 8)));
  }
  return program(std::move(out));
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
