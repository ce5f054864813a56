// NpuJsonRuntime (npu_json_runtime.h): Init compiles once, Run binds buffers and runs.
#include "npu_json_runtime.h"

#include <cstring>
#include <stdexcept>

#include "npu/compiler/compile.h"
#include "npu/compiler/tvm_import.h"

namespace npu_byoc {

namespace {

/// Our element type for a DLPack one (the ones a TVM example_npu graph carries).
npu::format::DType dtype_of(const tvm_stub::DLDataType& t, const std::string& what) {
  using npu::format::DType;
  if (t.lanes == 1) {
    if (t.code == tvm_stub::kDLFloat && t.bits == 32) return DType::kFloat32;
    if (t.code == tvm_stub::kDLInt && t.bits == 8) return DType::kInt8;
    if (t.code == tvm_stub::kDLUInt && t.bits == 8) return DType::kUint8;
    if (t.code == tvm_stub::kDLInt && t.bits == 32) return DType::kInt32;
    if (t.code == tvm_stub::kDLInt && t.bits == 64) return DType::kInt64;
  }
  throw std::invalid_argument(what + ": unsupported DLPack dtype");
}

/// A copy of a (compact, CPU) DLTensor as an NpyArray.
npu::format::NpyArray to_array(const tvm_stub::DLTensor& t, const std::string& what) {
  npu::format::NpyArray a =
      npu::format::NpyArray::zeros(dtype_of(t.dtype, what), {t.shape, t.shape + t.ndim});
  if (!a.data.empty()) std::memcpy(a.data.data(), t.data, a.data.size());
  return a;
}

[[noreturn]] void fail(const std::string& symbol, const npu::Error& e) {
  throw std::runtime_error(symbol + ": " + e.message);
}

}  // namespace

NpuJsonRuntime::NpuJsonRuntime(std::string symbol_name, std::string graph_json,
                               std::vector<std::string> const_names, std::string device)
    : JSONRuntimeBase(std::move(symbol_name), std::move(graph_json), std::move(const_names)),
      device_name_(std::move(device)) {}

void NpuJsonRuntime::Init(const std::vector<const tvm_stub::DLTensor*>& consts) {
  if (consts.size() != const_names_.size()) {
    throw std::invalid_argument(symbol_name_ + ": expected " + std::to_string(const_names_.size()) +
                                " constants");
  }
  auto device = npu::Device::open(device_name_);
  if (!device) fail(symbol_name_, device.error());
  device_.emplace(std::move(*device));
  // The constants become the package's weights (libnpuc binds them like ONNX initializers).
  npu::compiler::CompileOptions options;
  options.device = device_->config();
  options.producer = "tvm_byoc example";
  for (size_t i = 0; i < consts.size(); ++i) {
    options.import.constant_inputs[const_names_[i]] = to_array(*consts[i], const_names_[i]);
  }
  auto graph = npu::compiler::import_tvm_json_text(graph_json_, options.import, symbol_name_);
  if (!graph) fail(symbol_name_, graph.error());
  auto compiled = npu::compiler::compile_graph(std::move(*graph), options, symbol_name_);
  if (!compiled) fail(symbol_name_, compiled.error());
  report_ = compiled->partition_report;
  auto model = npu::Model::load(*device_, std::move(compiled->package), symbol_name_);
  if (!model) fail(symbol_name_, model.error());
  model_.emplace(std::move(*model));
}

void NpuJsonRuntime::Run() {
  if (!model_) throw std::logic_error(symbol_name_ + ": Run() before Init()");
  std::map<std::string, npu::format::NpyArray> inputs;
  for (size_t i = 0; i < input_var_eid_.size(); ++i) {
    inputs.emplace(input_names_[i], to_array(*data_entry_[input_var_eid_[i]], input_names_[i]));
  }
  npu::RunOptions options;
  options.collect_profile = device_->params().has(DRM_NPU_CAP_JOB_PROFILE);
  auto outputs = model_->run(inputs, options);
  if (!outputs) fail(symbol_name_, outputs.error());
  // The compiler names a TVM graph's outputs output_<k> in head order.
  for (size_t k = 0; k < outputs_.size(); ++k) {
    const npu::format::NpyArray& y = outputs->at("output_" + std::to_string(k));
    tvm_stub::DLTensor* out = data_entry_[EntryID(outputs_[k])];
    const std::vector<int64_t> shape(out->shape, out->shape + out->ndim);
    if (dtype_of(out->dtype, "output " + std::to_string(k)) != y.dtype || shape != y.shape) {
      throw std::invalid_argument(symbol_name_ + ": output " + std::to_string(k) +
                                  " buffer does not match the graph's output");
    }
    std::memcpy(out->data, y.data.data(), y.data.size());
  }
}

void NpuJsonRuntime::write_trace(const std::string& path) const {
  if (auto w = model_->write_trace(path); !w) fail(symbol_name_, w.error());
}

}  // namespace npu_byoc
