// A small realistic package shared by the package tests: one device segment (DMA in the input
// and a bias, add, DMA out to the activation arena) and one host segment (Softmax).
#pragma once

#include "npu/format/package.h"
#include "npu/isa/builder.h"

namespace npu::format::testing {

inline constexpr uint64_t kConstVa = 0x1'0000'0000ull;
inline constexpr uint64_t kActVa = 0x1'0001'0000ull;
inline constexpr uint64_t kInVa = 0x1'0002'0000ull;

inline std::vector<std::byte> sample_command_buffer() {
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = kInVa, .sram = 0, .elem_size = 4, .size = {16, 1, 1}});
  b.dma_load({.dram = kConstVa, .sram = 1024, .elem_size = 4, .size = {16, 1, 1}});
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_VECTOR, 0);
  b.eltwise({.op = NPU_ELTWISE_ADD,
             .dtype = NPU_DTYPE_FP32,
             .shape = {1, 1, 1, 16},
             .a_addr = 0,
             .b_addr = 1024,
             .out_addr = 2048});
  b.sem_signal(NPU_ENGINE_VECTOR, 1);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  b.dma_store({.dram = kActVa, .sram = 2048, .elem_size = 4, .size = {16, 1, 1}});
  return b.finish();
}

inline Package sample_package() {
  Package p;
  PackageMetadata& m = p.metadata;
  m.model = {.name = "tiny",
             .producer = "npu-compile 0.1.0",
             .version = "1",
             .source = "tiny.onnx",
             .description = "bias add then softmax"};
  m.target = {.isa_major = 1,
              .isa_minor = 0,
              .features = NPU_FEATURE_FP32,
              .sram_size = 1 << 20,
              .device = "npu-emu"};

  Section cmd{SectionKind::kCommandBuffer, "seg0.cmd", sample_command_buffer()};
  std::vector<std::byte> const_bytes(80);
  for (size_t i = 0; i < const_bytes.size(); ++i) const_bytes[i] = std::byte(uint8_t(i * 7));
  Section consts{SectionKind::kConstants, "constants", std::move(const_bytes)};
  Section extra{SectionKind::kExtra, "debug.txt", std::vector{std::byte{'h'}, std::byte{'i'}}};
  p.sections = {cmd, consts, extra};

  m.buffers = {
      {.name = "constants",
       .kind = BufferKind::kConstants,
       .size = 128,
       .address = kConstVa,
       .section = 1},
      {.name = "activations", .kind = BufferKind::kActivations, .size = 4096, .address = kActVa},
      {.name = "io-input", .kind = BufferKind::kInput, .size = 64, .address = kInVa},
  };
  m.tensors = {
      {.name = "input",
       .dtype = DType::kFloat32,
       .shape = {Dim::fixed(1), Dim::fixed(16)},
       .role = TensorRole::kInput,
       .location = TensorLocation{.buffer = "io-input", .offset = 0, .size = 64}},
      {.name = "bias",
       .dtype = DType::kFloat32,
       .shape = {Dim::fixed(16)},
       .role = TensorRole::kConstant,
       .location = TensorLocation{.buffer = "constants", .offset = 0, .size = 64}},
      {.name = "w_q",
       .dtype = DType::kInt8,
       .shape = {Dim::fixed(4), Dim::fixed(1), Dim::fixed(2), Dim::fixed(2)},
       .role = TensorRole::kConstant,
       .quantization =
           Quantization{
               .scale = {0.5, 0.25, 0.125, 0.0625}, .zero_point = {0, 1, -1, 0}, .axis = 0},
       .location = TensorLocation{.buffer = "constants",
                                  .offset = 64,
                                  .size = 16,
                                  .layout = Layout::kNHWC,
                                  .strides = {4, 2, 1, 1}}},
      {.name = "x",
       .dtype = DType::kFloat32,
       .shape = {Dim::fixed(1), Dim::fixed(16)},
       .role = TensorRole::kIntermediate,
       .quantization = Quantization{.scale = {0.1}, .zero_point = {0}},
       .location = TensorLocation{.buffer = "activations", .offset = 0, .size = 64}},
      {.name = "probs",
       .dtype = DType::kFloat32,
       .shape = {Dim::named("N"), Dim::fixed(16)},
       .role = TensorRole::kOutput},
  };
  Segment dev;
  dev.kind = SegmentKind::kDevice;
  dev.name = "npu0";
  dev.inputs = {"input", "bias"};
  dev.outputs = {"x"};
  dev.command_buffer = 0;
  dev.buffers = {{"constants", Access::kRead},
                 {"activations", Access::kReadWrite},
                 {"io-input", Access::kRead}};
  dev.layers = {{.name = "add0",
                 .op = "add",
                 .engine = "vector",
                 .tiles = 1,
                 .macs = 0,
                 .bytes = 192,
                 .cycles = 300}};
  dev.estimated_cycles = 420;
  Segment host;
  host.kind = SegmentKind::kHost;
  host.name = "softmax0";
  host.op_type = "Softmax";
  host.attributes = R"({"axis":-1})";
  host.inputs = {"x"};
  host.outputs = {"probs"};
  m.segments = {dev, host};
  m.inputs = {"input"};
  m.outputs = {"probs"};
  return p;
}

}  // namespace npu::format::testing
