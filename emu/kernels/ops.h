// Private to npu_emu_kernels: the entry point of every data command's kernel, declared from the
// opcode table (npu/isa/opcodes.def), whose KERNEL column names it. run_command()
// (dispatch.cpp) calls them through the table after the device checked every operand region;
// they live in dma.cpp, matrix_*.cpp and vector_*.cpp. `dram` is the host pointer of the
// command's MMU-translated DRAM operand (DMA only; nullptr otherwise).
#pragma once

#include <cstddef>
#include <span>

#include "npu_isa.h"

namespace npu::emu::kern {

#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, FEATURES, REGIONS, COST, \
                 REF, KERNEL)                                                                  \
  void KERNEL(const decltype(npu_cmd::PAYLOAD)& c, std::span<std::byte> sram, std::byte* dram);
#include "npu/isa/opcodes.def"

}  // namespace npu::emu::kern
