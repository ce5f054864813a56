// Small model packages built in the runtime tests (buffers at fixed VAs, device segments from
// isa::CommandBufferBuilder, host segments), the values they compute and the fixture with an
// emulated device, shared by model_test.cpp, batch_test.cpp and npu_submit_model_test.cpp.
// `using namespace npu::runtime_test;` also brings the package vocabulary (format::...).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <optional>

#include "npu/device.h"
#include "npu/format/npy.h"
#include "npu/format/package.h"

namespace npu::runtime_test {

using format::Access;
using format::BufferInfo;
using format::BufferKind;
using format::Dim;
using format::DType;
using format::Layout;
using format::NpyArray;
using format::Package;
using format::Section;
using format::SectionKind;
using format::Segment;
using format::SegmentKind;
using format::TensorInfo;
using format::TensorLocation;
using format::TensorRole;

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

/// x -> ops[0] -> t1 -> ops[1] -> ... -> y, every op a host segment ("op0", "op1", ...) with
/// default attributes; every tensor is float32 of `shape` with no location (no buffers).
format::Package host_package(std::vector<format::Dim> shape, std::vector<std::string> ops);

/// A test with a fresh emulated device ("emu:") in dev_.
class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dev = Device::open("emu:");
    ASSERT_TRUE(dev) << dev.error().message;
    dev_.emplace(std::move(*dev));
  }
  std::optional<Device> dev_;
};

}  // namespace npu::runtime_test
