// The data work of the DMA, matrix and vector engines on SRAM tiles, one kernel per data
// command (the KERNEL column of npu/isa/opcodes.def). Pure functions: no timing, no threads.
// The device calls them after checking every operand region of the command lies inside the
// SRAM and translating its DRAM operand (isa::command_regions), so they may trust addresses
// and shapes of a command that passed isa::validate's structural checks.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>

#include "npu_isa.h"

namespace npu::emu {

/// Executes any data command: `dram` is the host pointer of its DRAM operand after MMU
/// translation (DMA_LOAD / DMA_STORE; unused by the others). Control commands do nothing.
/// When `cancel` becomes true (a device reset) the command stops early, its output partly
/// written.
void run_command(const npu_cmd& cmd, std::span<std::byte> sram, std::byte* dram,
                 const std::atomic<bool>* cancel = nullptr);

/// run_command() for CONV2D and MATMUL (other commands are ignored).
void run_matrix(const npu_cmd& cmd, std::span<std::byte> sram,
                const std::atomic<bool>* cancel = nullptr);

/// run_command() for a VECTOR-engine command, ELTWISE .. MOMENTS (others are ignored).
void run_vector(const npu_cmd& cmd, std::span<std::byte> sram,
                const std::atomic<bool>* cancel = nullptr);

}  // namespace npu::emu
