// compile: the whole compiler in one call. Import (onnx_import.h, tvm_import.h), the pass pipeline
// (pass_registry.def), partition into device and host segments (support.h), lowering of each
// device segment to a tiled, double-buffered command buffer (npu/codegen), memory planning
// (one constants buffer, one activation arena reused by liveness) and the model package
// (.npub, docs/package.md) that npu::Model runs. Errors are one line naming the model and the
// node, op type and reason.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npu/compiler/graph.h"
#include "npu/compiler/onnx_import.h"
#include "npu/compiler/pass_manager.h"
#include "npu/expected.h"
#include "npu/format/npy.h"
#include "npu/format/package.h"
#include "npu/isa/device_config.h"

namespace npu::compiler {

/// The type float32 tensors compute in on the device (npu-compile --precision): fp32 as in the
/// graph, or fp16/bf16 (weights converted once, activations between layers stored in half
/// precision, convolutions and matrix products on the half-precision array with fp32
/// accumulation, vector ops such as softmax computed in fp32). Graph inputs and outputs, and
/// tensors the host reads, keep float32.
enum class Precision { kFp32, kFp16, kBf16 };
/// "fp32", "fp16", "bf16" -> Precision, or nullopt.
std::optional<Precision> precision_from_name(std::string_view name);

struct CompileOptions {
  ImportOptions import;      // run-time shapes, symbolic dims, inputs bound as constants
  PassOptions passes;        // --print-after, --disable
  isa::DeviceConfig device;  // the target (tiling budget, timing model)
  /// Place every node on the host (a reference run of the same package machinery).
  bool host_only = false;
  /// Post-training int8 quantization (npu/compiler/quantize.h): after fuse-activation the
  /// graph's calibration_graph() is handed to `calibrate`, which runs it in float on
  /// representative inputs and returns its outputs by name; their ranges drive
  /// quantize_int8(), then the remaining passes run. Requires `calibrate`.
  bool quantize_int8 = false;
  Precision precision = Precision::kFp32;
  std::function<Expected<std::map<std::string, format::NpyArray>>(const Graph&)> calibrate;
  std::string producer = "npuc";
};

struct CompileResult {
  format::Package package;
  std::string partition_report;  // "N ops on the NPU, M on the host (S segments)" + reasons
  size_t device_ops = 0, host_ops = 0;
};

/// Imports the model at `path`: a TVM BYOC JSON graph when the name ends in ".json"
/// (npu/compiler/tvm_import.h), an ONNX model otherwise.
[[nodiscard]] Expected<Graph> import_model(const std::string& path,
                                           const ImportOptions& options = {});
/// Imports (import_model) and compiles the model at `path`: compile_onnx() for ONNX, the TVM
/// graph through compile_graph() otherwise.
[[nodiscard]] Expected<CompileResult> compile_model(const std::string& path,
                                                    const CompileOptions& options = {});
/// import_model() and compile_model() of a model in memory: a TVM BYOC JSON graph when the
/// text starts with '{' (after whitespace), a serialized ONNX ModelProto otherwise; `source`
/// names it in errors and in the package's metadata.
[[nodiscard]] Expected<Graph> import_model_bytes(std::string_view bytes,
                                                 const ImportOptions& options = {},
                                                 const std::string& source = "<memory>");
[[nodiscard]] Expected<CompileResult> compile_model_bytes(std::string_view bytes,
                                                          const CompileOptions& options = {},
                                                          const std::string& source = "<memory>");
/// Imports and compiles the model at `path` (.onnx).
[[nodiscard]] Expected<CompileResult> compile_onnx(const std::string& path,
                                                   const CompileOptions& options = {});
/// Compiles an imported graph (runs the passes, partitions, lowers); `source` names the model
/// in errors and in the package's metadata.
[[nodiscard]] Expected<CompileResult> compile_graph(Graph g, const CompileOptions& options,
                                                    const std::string& source);

/// Graph inputs that only parameterize an operator (weights and biases of Conv/Gemm/MatMul
/// second operands, quantization scales and zero points, BatchNormalization statistics, the
/// other normalizations' scale and bias, RNN/GRU/LSTM W, R, B and peepholes, a Reshape's shape,
/// Pad's pads, Clip's bounds, Squeeze/Unsqueeze/Reduce axes, TopK's K, CumSum's axis, Trilu's k,
/// Resize's roi, scales and sizes, ...): the inputs npu-run binds as constants when it is given
/// their values (BRIEF §3); also through a Transpose, Reshape, Cast or Identity on the way (a TVM
/// graph's HWIO weights). An input also read as data (input 0 of an elementwise op, say) is not
/// listed.
std::vector<std::string> parameter_inputs(const Graph& g);

/// The Vela-like per-layer table of a package's device segments (npu-compile --report):
/// layer, op, engine, tiles, MACs, bytes moved, estimated cycles, utilization, and totals;
/// host segments are listed with their op type.
std::string format_layer_report(const format::Package& package);

/// The cycles a lower precision saves (npu-compile --report with --precision fp16|bf16): each
/// device layer of `half` with its estimated cycles next to the layer of the same name in
/// `fp32` (the same model compiled at fp32), the cycles saved, and the totals. Layers only one
/// compile has (a conversion copy) show "-" on the other side.
std::string format_precision_report(const format::Package& half, const format::Package& fp32,
                                    std::string_view precision);

}  // namespace npu::compiler
