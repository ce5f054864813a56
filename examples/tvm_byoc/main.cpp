// tvm_byoc: what TVM's Relax VM does with the example NPU's partitioned functions, with our
// runtime module in place of the upstream logging stub. For each function TVM's codegen
// (relax.ext.example_npu) produced a JSON graph and a list of constant names; at load time the
// VM creates the runtime module (runtime.ExampleNPUJSONRuntimeCreate(symbol, json,
// const_names)), calls Init(consts) once, and on each call binds the arguments and calls Run().
// This program plays the VM's part for the tutorial's two models:
//   1. MatmulReLU partitioned with bind_constants=False (the weight is a run-time argument),
//      graph in TVM >= 0.24's native encoding;
//   2. Conv2dReLU with its weight bound as a constant (bind_constants=True), graph in TVM
//      <= 0.23's legacy encoding;
// checks the outputs against a direct computation and prints the device's cycles.
//   tvm_byoc [--trace FILE.json]     exit status 0 when both match
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "npu_json_runtime.h"

namespace {

// The JSON RunCodegen writes for MatmulReLU's fused composite (apache/tvm
// docs/how_to/tutorials/bring_your_own_codegen.py, FuseOpsByPattern + MergeCompositeFunctions).
const char* kMatmulRelu = R"({
  "nodes": [
    {"op": "input", "name": "x", "attrs": {"shape": [[2, 4]], "dtype": ["float32"]}},
    {"op": "input", "name": "w", "attrs": {"shape": [[4, 8]], "dtype": ["float32"]}},
    {"op": "kernel", "name": "example_npu.matmul_relu_fused", "inputs": [[0, 0, 0], [1, 0, 0]],
     "attrs": {"num_inputs": 2, "num_outputs": 1, "shape": [[2, 8]], "dtype": ["float32"]}}],
  "arg_nodes": [0, 1], "heads": [[2, 0, 0]], "node_row_ptr": [0, 1, 2, 3]})";

// Conv2dReLU with the weight a const node, as TVM 0.23's dmlc writer wrote it.
const char* kConvReluLegacy = R"({
  "nodes": [
    {"op": "input", "name": "data", "attrs": {"shape": [[[1, 3, 32, 32]]], "dtype": [["float32"]]}},
    {"op": "const", "name": "example_npu_main_const_0",
     "attrs": {"shape": [[[16, 3, 3, 3]]], "dtype": [["float32"]]}},
    {"op": "kernel", "name": "example_npu.conv2d_relu_fused", "inputs": [[0, 0, 0], [1, 0, 0]],
     "attrs": {"num_inputs": "2", "num_outputs": "1", "shape": [[[1, 16, 30, 30]]],
               "dtype": [["float32"]]}}],
  "arg_nodes": [0, 1], "heads": [[2, 0, 0]], "node_row_ptr": [0, 1, 2, 3]})";

/// A float32 buffer and the DLTensor TVM would pass for it.
struct Buffer {
  std::vector<float> data;
  std::vector<int64_t> shape;
  tvm_stub::DLTensor t{};

  explicit Buffer(std::vector<int64_t> s) : shape(std::move(s)) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    data.resize(n);
    for (size_t i = 0; i < n; ++i) data[i] = std::sin(0.37f * static_cast<float>(i) + shape[0]);
    t = {
        data.data(), static_cast<int32_t>(shape.size()), {tvm_stub::kDLFloat, 32, 1}, shape.data()};
  }
};

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

float max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

bool matmul_relu() {
  Buffer x({2, 4}), w({4, 8}), y({2, 8});
  npu_byoc::NpuJsonRuntime rt("tvmgen_default_example_npu_main_0", kMatmulRelu, {});
  rt.Init({});
  rt.Invoke({&x.t, &w.t, &y.t});
  std::vector<float> want(16);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 8; ++j) {
      float acc = 0;
      for (int k = 0; k < 4; ++k) acc += x.data[i * 4 + k] * w.data[k * 8 + j];
      want[i * 8 + j] = std::max(acc, 0.0f);
    }
  }
  const float diff = max_diff(y.data, want);
  std::printf("MatmulReLU: %s; device %llu cycles, max |diff| %.2g\n",
              first_line(rt.partition_report()).c_str(),
              static_cast<unsigned long long>(rt.last_stats().device_cycles), diff);
  return diff < 1e-5f;
}

bool conv_relu(const std::string& trace) {
  Buffer data({1, 3, 32, 32}), weight({16, 3, 3, 3}), out({1, 16, 30, 30});
  npu_byoc::NpuJsonRuntime rt("tvmgen_default_example_npu_main_1", kConvReluLegacy,
                              {"example_npu_main_const_0"});
  rt.Init({&weight.t});
  rt.Invoke({&data.t, &out.t});
  std::vector<float> want(out.data.size());
  for (int o = 0; o < 16; ++o) {
    for (int i = 0; i < 30; ++i) {
      for (int j = 0; j < 30; ++j) {
        float acc = 0;
        for (int c = 0; c < 3; ++c) {
          for (int u = 0; u < 3; ++u) {
            for (int v = 0; v < 3; ++v) {
              acc += data.data[(c * 32 + i + u) * 32 + j + v] *
                     weight.data[((o * 3 + c) * 3 + u) * 3 + v];
            }
          }
        }
        want[(o * 30 + i) * 30 + j] = std::max(acc, 0.0f);
      }
    }
  }
  const float diff = max_diff(out.data, want);
  std::printf("Conv2dReLU: %s; device %llu cycles, max |diff| %.2g\n",
              first_line(rt.partition_report()).c_str(),
              static_cast<unsigned long long>(rt.last_stats().device_cycles), diff);
  if (!trace.empty()) rt.write_trace(trace);
  return diff < 1e-4f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string trace = argc == 3 && std::string(argv[1]) == "--trace" ? argv[2] : "";
  if (argc != 1 && trace.empty()) {
    std::fprintf(stderr, "usage: tvm_byoc [--trace FILE.json]\n");
    return 1;
  }
  try {
    const bool ok = matmul_relu() & conv_relu(trace);
    if (!ok) std::fprintf(stderr, "tvm_byoc: an output differs from the reference\n");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tvm_byoc: %s\n", e.what());
    return 1;
  }
}
