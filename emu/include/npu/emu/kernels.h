// The arithmetic of the matrix and vector engines on SRAM tiles. Pure functions: no timing,
// no threads. The device calls them after checking every operand region of the command lies
// inside the SRAM (isa::command_regions), so they may trust addresses and shapes of a command
// that passed isa::validate's structural checks.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>

#include "npu_isa.h"

namespace npu::emu {

/// Executes CONV2D or MATMUL on `sram`. When `cancel` becomes true (a device reset) the
/// command stops early, its output partly written.
void run_matrix(const npu_cmd& cmd, std::span<std::byte> sram,
                const std::atomic<bool>* cancel = nullptr);

/// Executes a VECTOR-engine command (ELTWISE .. REDUCE) on `sram`; `cancel` as run_matrix.
void run_vector(const npu_cmd& cmd, std::span<std::byte> sram,
                const std::atomic<bool>* cancel = nullptr);

}  // namespace npu::emu
