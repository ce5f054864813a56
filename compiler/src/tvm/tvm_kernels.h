// Private: the translation of one TVM kernel (a row of npu/compiler/tvm_ops.def) into
// registry operators of the Graph IR. A KernelCall carries the kernel's input values, the
// types TVM recorded for its inputs and outputs, and its decoded attributes; the Kind's
// function adds the nodes (through a Builder) and returns one value per TVM output entry.
// Attribute inference (docs/tvm.md) lives with the kinds that need it: convolution and pooling
// windows, batch_norm's axis, groups, quantize's out_dtype.
// Threading: the table (find_row) is built once on first use and read-only after; a Builder
// mutates its one Graph and is used by one thread. A KernelCall refers to its row, which is
// static.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npu/compiler/graph.h"
#include "npu/compiler/tvm_import.h"
#include "npu/expected.h"
#include "npu/ops/registry.h"
#include "tvm/tvm_json.h"

namespace npu::compiler::tvm {

/// The opset of the default ONNX domain that translated graphs import: the newest the ONNX
/// library's shape inference knows. A node takes it clamped into its registry row's opsets
/// (Gelu: 20).
inline constexpr int64_t kOpset = 17;

enum class Kind : uint8_t {
  Conv,
  Pool,
  MatMul,
  Dense,
  Softmax,
  BatchNorm,
  Unary,
  Clip,
  Binary,
  Quantize,
  Dequantize
};

/// A row of tvm_ops.def with its schemas parsed.
struct OpRow {
  TvmOpInfo info;
  Kind kind;
  std::vector<ops::AttrSchema> attrs;  // the NPU_TVM_ATTRS schema
  std::vector<ops::AttrSchema> fixed;  // attributes the kernel implies (ONNX names)
};

/// The row for a kernel node's name (prefixes "relax." / "jsonruntime." removed), or nullptr.
const OpRow* find_row(std::string_view kernel_name);
/// The ONNX attribute a TVM attribute's value becomes (NPU_TVM_ATTR), or "".
std::string_view onnx_attr_name(std::string_view tvm_name);

/// A kernel's attributes: the values the graph records, by TVM name, and the schema's defaults.
class Attrs {
 public:
  explicit Attrs(const std::vector<ops::AttrSchema>& schema) : schema_(&schema) {}
  void set(const std::string& name, AttrValue v) { given_[name] = std::move(v); }
  bool given(const std::string& name) const { return given_.count(name) != 0; }
  /// The recorded value or the default (0 / "" without one).
  int64_t i(const std::string& name) const;
  float f(const std::string& name) const;
  std::string s(const std::string& name) const;
  /// The recorded ints, or the default with one value per `count` (Relax expands an int).
  std::vector<int64_t> ints(const std::string& name, size_t count) const;

 private:
  const ops::AttrSchema* schema(const std::string& name) const;
  const std::vector<ops::AttrSchema>* schema_;
  std::map<std::string, AttrValue> given_;
};

struct KernelCall {
  const OpRow& row;
  std::string label;  // "node 3 (example_npu.conv2d)"
  std::vector<ValueId> inputs;
  std::vector<TensorSig> in;   // the recorded types of the input entries
  std::vector<TensorSig> out;  // the recorded output types
  Attrs attrs;

  Error fail(const std::string& message) const {
    return make_error(EINVAL, label + ": " + message);
  }
  /// The element type of input i as recorded ("" when unknown).
  const std::string& in_dtype(size_t i) const { return in.at(i).dtype; }
};

/// Adds the nodes of one kernel to the graph, named after `stem` ("conv2d_3/Conv").
class Builder {
 public:
  Builder(Graph& g, std::string stem) : g_(g), stem_(std::move(stem)) {}
  Graph& graph() { return g_; }

  /// A node of registry operator `op` (opset kOpset clamped to the row), its one output.
  ValueId node(std::string_view op, std::vector<ValueId> inputs,
               std::map<std::string, AttrValue> attrs = {});
  /// Transpose(x, perm), or x itself for the identity permutation.
  ValueId transpose(ValueId x, const std::vector<int64_t>& perm);
  ValueId constant(std::string_view hint, NpyArray a);
  /// Sets the ONNX attribute that TVM attribute `tvm_name` becomes, when operator `op` has it.
  static void set(std::map<std::string, AttrValue>& attrs, std::string_view op,
                  std::string_view tvm_name, AttrValue v);

 private:
  Graph& g_;
  std::string stem_;
};

/// dims permuted: out[i] = dims[perm[i]] (what Transpose(perm) does to a shape).
std::vector<int64_t> permute(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm);
/// The permutation that undoes `perm`.
std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm);
/// The Transpose permutation from layout `from` to layout `to` (both permutations of the same
/// letters, e.g. "NHWC" -> "NCHW"); an error names `what` otherwise.
Expected<std::vector<int64_t>> layout_perm(std::string_view from, std::string_view to,
                                           const std::string& what);

using KernelFn = Expected<std::vector<ValueId>> (*)(Builder&, const KernelCall&);
/// The translation of each Kind.
KernelFn kernel_fn(Kind k);

Expected<std::vector<ValueId>> conv(Builder& b, const KernelCall& c);
Expected<std::vector<ValueId>> pool(Builder& b, const KernelCall& c);
Expected<std::vector<ValueId>> matmul(Builder& b, const KernelCall& c);
Expected<std::vector<ValueId>> dense(Builder& b, const KernelCall& c);
Expected<std::vector<ValueId>> softmax(Builder& b, const KernelCall& c);
Expected<std::vector<ValueId>> batch_norm(Builder& b, const KernelCall& c);
Expected<std::vector<ValueId>> unary(Builder& b, const KernelCall& c);
Expected<std::vector<ValueId>> clip(Builder& b, const KernelCall& c);
Expected<std::vector<ValueId>> binary(Builder& b, const KernelCall& c);
Expected<std::vector<ValueId>> quantize(Builder& b, const KernelCall& c);
Expected<std::vector<ValueId>> dequantize(Builder& b, const KernelCall& c);

}  // namespace npu::compiler::tvm
