// Small model packages built in the runtime tests (buffers at fixed VAs, device segments from
// isa::CommandBufferBuilder, host segments) and the values they compute, shared by
// model_test.cpp, batch_test.cpp and npu_submit_model_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "npu/format/package.h"

namespace npu::runtime_test {

/// The first buffer's VA and the distance between buffers.
constexpr uint64_t kVa = 0x100000000ull;
constexpr uint64_t kStep = 0x100000ull;

/// Softmax of one row, computed here.
std::vector<float> softmax(std::vector<float> v);

/// A command-buffer section named "cb0".
format::Section cmdbuf_section(std::vector<std::byte> bytes);

/// x [1, n] fp32 (input buffer) -> device: relu into r (activations) -> host: Softmax -> y.
/// `x_shape` replaces x's shape (e.g. a symbolic batch), `host_op` the host op.
format::Package relu_softmax_package(uint32_t n = 8, std::string out_name = "y",
                                     std::string host_op = "Softmax",
                                     std::vector<format::Dim> x_shape = {});

}  // namespace npu::runtime_test
