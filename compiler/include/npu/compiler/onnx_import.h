// ONNX import: parses a model with the official ONNX library, applies the caller's bindings
// (run-time input shapes, symbolic dims, inputs fixed as constants), checks every node
// against the ONNX schemas and the supported operator set, runs ONNX shape inference and
// builds the Graph IR. Legacy attribute forms (Clip min/max, Squeeze/Unsqueeze axes, Pad
// pads, Slice starts/ends/axes, Split split, ReduceSum axes) become the newer constant inputs.
// Any failure is one line naming the file and the node, op type and reason.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "npu/compiler/graph.h"
#include "npu/expected.h"

namespace npu::compiler {

struct ImportOptions {
  /// Full shapes of graph inputs known at run time (e.g. from the .npy files given to
  /// npu-run): a symbolic dim takes the given size everywhere that symbol appears; a static
  /// dim must match.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  /// Sizes of symbolic dims by name (e.g. {"batch", 4}).
  std::map<std::string, int64_t> dim_values;
  /// Graph inputs fixed as constants (an input that sets a Reshape's shape, a Pad's pads or a
  /// Clip's bounds): they become initializers and leave the graph's input list. An array of an
  /// element type the IR does not accept (float16, ...) or whose data does not match its shape
  /// is an error naming the input.
  std::map<std::string, NpyArray> constant_inputs;
  /// Import operators outside the supported set instead of failing (they stay on the host
  /// with the reason "unsupported operator").
  bool allow_unsupported_ops = false;
};

/// Reads and imports the model at `path`.
[[nodiscard]] Expected<Graph> import_onnx(const std::string& path,
                                          const ImportOptions& options = {});
/// Imports a serialized ModelProto; `source` names it in error messages.
[[nodiscard]] Expected<Graph> import_onnx_bytes(std::string_view bytes,
                                                const ImportOptions& options = {},
                                                const std::string& source = "<memory>");

}  // namespace npu::compiler
