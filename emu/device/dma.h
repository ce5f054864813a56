// The DMA engines' data movement: a strided 3-D box between DRAM (already translated by the
// MMU to a host pointer at dram_addr) and SRAM, with padding fill on loads.
#pragma once

#include <cstddef>
#include <span>

#include "npu_isa.h"

namespace npu::emu {

/// DMA_LOAD: DRAM box at `dram` -> padded SRAM box.
void dma_load(const npu_cmd_dma& c, const std::byte* dram, std::span<std::byte> sram);

/// DMA_STORE: SRAM box -> DRAM box at `dram`.
void dma_store(const npu_cmd_dma& c, std::byte* dram, std::span<const std::byte> sram);

}  // namespace npu::emu
