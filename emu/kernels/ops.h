// Private: one entry point per command of the matrix and vector engines, called by
// dispatch.cpp (run_matrix / run_vector) after the opcode switch.
#pragma once

#include <cstddef>
#include <span>

#include "npu_isa.h"

namespace npu::emu::kern {

void conv2d(const npu_cmd_conv2d& c, std::span<std::byte> sram);
void matmul(const npu_cmd_matmul& c, std::span<std::byte> sram);

void eltwise(const npu_cmd_eltwise& c, std::span<std::byte> sram);
void activation(const npu_cmd_activation& c, std::span<std::byte> sram);
void pool(const npu_cmd_pool& c, std::span<std::byte> sram);
void softmax(const npu_cmd_softmax& c, std::span<std::byte> sram);
void scale_shift(const npu_cmd_scale_shift& c, std::span<std::byte> sram);
void quantize(const npu_cmd_quant& c, std::span<std::byte> sram);
void dequantize(const npu_cmd_quant& c, std::span<std::byte> sram);
void requantize(const npu_cmd_requant& c, std::span<std::byte> sram);
void transpose(const npu_cmd_transpose& c, std::span<std::byte> sram);
void reduce(const npu_cmd_reduce& c, std::span<std::byte> sram);

}  // namespace npu::emu::kern
