// Packages built for the runtime tests (test_packages.h).
#include "test_packages.h"

#include <algorithm>
#include <cmath>

#include "npu/isa/builder.h"

namespace npu::runtime_test {

std::vector<float> softmax(std::vector<float> v) {
  float m = v[0];
  for (float x : v) m = std::max(m, x);
  float sum = 0;
  for (float& x : v) sum += (x = std::exp(x - m));
  for (float& x : v) x /= sum;
  return v;
}

Section cmdbuf_section(std::vector<std::byte> bytes) {
  return Section{SectionKind::kCommandBuffer, "cb0", std::move(bytes)};
}

Package relu_softmax_package(uint32_t n, std::string out_name, std::string host_op,
                             std::vector<Dim> x_shape) {
  if (x_shape.empty()) x_shape = {Dim::fixed(1), Dim::fixed(n)};
  const uint64_t bytes = uint64_t{n} * 4;
  npu::isa::CommandBufferBuilder b;
  npu::isa::DmaArgs in;
  in.dram = kVa;
  in.sram = 0;
  in.elem_size = 4;
  in.size = {n, 1, 1};
  b.dma_load(in);
  // The engines run concurrently: order them with semaphores.
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_VECTOR, 0);
  npu::isa::ActivationArgs act;
  act.func = NPU_ACT_RELU;
  act.shape = {1, 1, 1, n};
  act.in_addr = 0;
  act.out_addr = 4096;
  b.activation(act);
  b.sem_signal(NPU_ENGINE_VECTOR, 1);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  npu::isa::DmaArgs out = in;
  out.dram = kVa + kStep;
  out.sram = 4096;
  b.dma_store(out);

  Package p;
  auto& m = p.metadata;
  m.model.name = "relu_softmax";
  m.target.features = NPU_FEATURE_FP32;
  m.buffers = {
      BufferInfo{"in", BufferKind::kInput, bytes, kVa, {}},
      BufferInfo{"act", BufferKind::kActivations, bytes, kVa + kStep, {}},
  };
  m.tensors = {
      TensorInfo{"x",
                 DType::kFloat32,
                 x_shape,
                 TensorRole::kInput,
                 {},
                 TensorLocation{"in", 0, bytes, Layout::kPlain, {}}},
      TensorInfo{"r",
                 DType::kFloat32,
                 {Dim::fixed(1), Dim::fixed(n)},
                 TensorRole::kIntermediate,
                 {},
                 TensorLocation{"act", 0, bytes, Layout::kPlain, {}}},
      TensorInfo{
          out_name, DType::kFloat32, {x_shape[0], Dim::fixed(n)}, TensorRole::kOutput, {}, {}},
  };
  Segment dev;
  dev.kind = SegmentKind::kDevice;
  dev.name = "relu0";
  dev.inputs = {"x"};
  dev.outputs = {"r"};
  dev.command_buffer = 0;
  dev.buffers = {{"in", Access::kRead}, {"act", Access::kWrite}};
  Segment host;
  host.kind = SegmentKind::kHost;
  host.name = "softmax0";
  host.inputs = {"r"};
  host.outputs = {out_name};
  host.op_type = std::move(host_op);
  host.attributes = R"({"axis":-1})";
  m.segments = {dev, host};
  m.inputs = {"x"};
  m.outputs = {out_name};
  p.sections = {cmdbuf_section(b.finish())};
  return p;
}

Package host_package(std::vector<Dim> shape, std::vector<std::string> ops) {
  Package p;
  auto& m = p.metadata;
  m.model.name = "host";
  m.tensors.push_back(TensorInfo{"x", DType::kFloat32, shape, TensorRole::kInput, {}, {}});
  std::string in = "x";
  for (size_t i = 0; i < ops.size(); ++i) {
    const bool last = i + 1 == ops.size();
    const std::string out = last ? "y" : "t" + std::to_string(i + 1);
    const TensorRole role = last ? TensorRole::kOutput : TensorRole::kIntermediate;
    m.tensors.push_back(TensorInfo{out, DType::kFloat32, shape, role, {}, {}});
    Segment s;
    s.kind = SegmentKind::kHost;
    s.name = "op" + std::to_string(i);
    s.op_type = ops[i];
    s.inputs = {in};
    s.outputs = {out};
    m.segments.push_back(std::move(s));
    in = out;
  }
  m.inputs = {"x"};
  m.outputs = {"y"};
  return p;
}

}  // namespace npu::runtime_test
