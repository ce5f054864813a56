// NpuJsonRuntime: the example NPU's BYOC JSON runtime module (the shape of TVM's
// src/runtime/extra/contrib/example_npu/example_npu_runtime.cc) done for real on our stack.
// Where the upstream stub logs what an NPU would do and leaves the outputs uninitialized, this
// one compiles the partitioned function's JSON graph once with libnpuc (Init: the constants
// become the package's weights), loads the package on a libnpu device, and on every Run()
// copies the bound input buffers in, runs the device (and any host segments) and writes the
// output buffers — real numbers, modeled cycles and an engine trace.
//
// The TVM-facing base class is tvm_json_runtime_stub.h (a stub of ours; in a TVM tree it is
// TVM's JSONRuntimeBase). Threading: one instance serves one Run() at a time, as in TVM.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/runtime/model.h"
#include "tvm_json_runtime_stub.h"

namespace npu_byoc {

class NpuJsonRuntime : public tvm_stub::JSONRuntimeBase {
 public:
  /// `device` is a libnpu device string ("" = $NPU_DEVICE, else the in-process emulator).
  NpuJsonRuntime(std::string symbol_name, std::string graph_json,
                 std::vector<std::string> const_names, std::string device = "");

  const char* kind() const override { return "npu_json"; }
  /// Compiles the graph with the constants as weights and loads it; throws on failure (TVM
  /// turns an exception into a Python error).
  void Init(const std::vector<const tvm_stub::DLTensor*>& consts) override;
  /// Runs the loaded package on the bound buffers; throws on failure.
  void Run() override;

  /// The last run's statistics (device cycles, per-segment times) and the compile's report.
  const npu::RunStats& last_stats() const { return model_->last_stats(); }
  const std::string& partition_report() const { return report_; }
  /// Writes the last run's Chrome/Perfetto trace.
  void write_trace(const std::string& path) const;

 private:
  std::string device_name_;
  std::optional<npu::Device> device_;
  std::optional<npu::Model> model_;
  std::string report_;
};

}  // namespace npu_byoc
