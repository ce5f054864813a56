// Links npu::npuc, npu::runtime and npu::emu from the installed package: a malformed model
// gives a one-line error, and a real model from Debian's libonnx-testdata compiles and runs on
// the emulator.
#include <cstdio>
#include <string>

#include "npu/compiler/compile.h"
#include "npu/device.h"
#include "npu/runtime/model.h"

int main(int argc, char** argv) {
  auto bad = npu::compiler::import_onnx_bytes("not a model", {}, "garbage.onnx");
  if (bad) {
    std::fprintf(stderr, "consumer_compile: garbage imported\n");
    return 1;
  }
  const std::string path =
      argc > 1 ? argv[1] : "/usr/include/onnx/backend/test/data/node/test_relu/model.onnx";
  auto compiled = npu::compiler::compile_onnx(path);
  if (!compiled) {
    std::fprintf(stderr, "consumer_compile: %s\n", compiled.error().message.c_str());
    return 1;
  }
  auto dev = npu::Device::open("emu:");
  if (!dev) return 1;
  auto model = npu::Model::load(*dev, std::move(compiled->package), path);
  if (!model) {
    std::fprintf(stderr, "consumer_compile: %s\n", model.error().message.c_str());
    return 1;
  }
  std::map<std::string, npu::format::NpyArray> inputs;
  for (const auto& in : model->inputs()) {
    std::vector<int64_t> shape;
    for (const auto& d : in.shape) shape.push_back(d.symbolic() ? 1 : d.size);
    inputs[in.name] = npu::format::NpyArray::zeros(in.dtype, shape);
  }
  auto out = model->run(inputs);
  if (!out) {
    std::fprintf(stderr, "consumer_compile: %s\n", out.error().message.c_str());
    return 1;
  }
  std::printf("consumer_compile: compiled and ran %s (%zu ops on the NPU)\n", path.c_str(),
              compiled->device_ops);
  return 0;
}
