// TVM BYOC JSON import: reads the graph a TVM JSON codegen writes for one partitioned function
// (relax.ext.example_npu, the generic JSONSerializer: `nodes`, `arg_nodes`, `heads`,
// `node_row_ptr`, optionally `symbol`), in both attribute encodings — native (TVM >= 0.24:
// "shape": [[1, 16, 30, 30]], "padding": [1, 1, 1, 1]) and legacy (<= 0.23, dmlc: every
// attribute a list holding one list of strings) — and builds the same Graph IR as ONNX import,
// which compile_graph() then compiles. Each kernel (an example_npu composite or a Relax
// operator) becomes operators of the registry through the table npu/compiler/tvm_ops.def;
// layouts other than NCHW/OIHW become Transpose nodes; missing attributes take Relax's defaults
// or are inferred from the recorded shapes where exactly one natural assignment fits. Run-time
// inputs are the `input` nodes in arg_nodes order; outputs are named output_0, output_1, ...
// in head order. docs/tvm.md describes the format, the table and the inference rules.
//
// Errors are one line naming the source, the node (its index and kernel name) and the
// problem, e.g. "g.json: node 3 (example_npu.max_pool2d): attribute 'pool_size' is missing and
// the shapes do not determine it (input [1, 16, 32, 32], output [1, 16, 10, 10])".
// Pure functions; safe from any thread.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "npu/compiler/graph.h"
#include "npu/compiler/onnx_import.h"
#include "npu/expected.h"

namespace npu::compiler {

/// Reads and imports the TVM JSON graph at `path`. `options.constant_inputs` are the params:
/// the values of the graph's `const` nodes (each one is required) and of `input` nodes bound as
/// compile-time constants (packed like ONNX initializers); a name that is neither is an error.
/// `options.input_shapes` gives the sizes of an input's dynamic (-1) dims and must agree with
/// its static ones. The other options do not apply to TVM graphs.
[[nodiscard]] Expected<Graph> import_tvm_json(const std::string& path,
                                              const ImportOptions& options = {});
/// Imports the JSON text of a graph; `source` names it in error messages.
[[nodiscard]] Expected<Graph> import_tvm_json_text(std::string_view text,
                                                   const ImportOptions& options = {},
                                                   const std::string& source = "<memory>");

/// One row of npu/compiler/tvm_ops.def (for the docs, the tests and tools).
struct TvmOpInfo {
  std::string_view name;        // "example_npu.conv2d", "nn.conv2d", ...
  std::string_view kind;        // "Conv", "Pool", ...
  std::string_view op;          // the registry operator
  std::string_view activation;  // "" or a registry activation
  int inputs = 0, outputs = 0;
  std::string_view attrs;  // the NPU_TVM_ATTRS id ("Conv2D")
  std::string_view fixed;  // attributes the kernel implies (schema syntax)
};
/// Every row, in the table's order.
std::span<const TvmOpInfo> tvm_ops();
/// The row for a kernel node's name ("relax." and "jsonruntime." prefixes removed), or nullptr.
const TvmOpInfo* find_tvm_op(std::string_view kernel_name);

}  // namespace npu::compiler
