// The compiler's graph IR: Values (tensors: name, dtype, possibly symbolic shape, optional
// constant data, quantization info, chosen layout) and Nodes (an ONNX-style operator with typed
// attributes, inputs and outputs by ValueId) kept in topological order. The ONNX importer
// builds it, passes rewrite it in place and the lowering reads it. A Graph is a plain value
// type with no internal threads; it is not safe to mutate from several threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "npu/expected.h"
#include "npu/format/array_values.h"
#include "npu/format/dtype.h"
#include "npu/format/npy.h"
#include "npu/format/shape.h"

namespace npu::compiler {

/// The IR's element types are the format library's (npu/format/dtype.h): one vocabulary from
/// the importer to the runtime. ONNX import accepts float32, float64, int8, uint8, int32, int64
/// and bool (the TensorProto.DataType mapping in onnx_proto.cpp is that rule); folding keeps
/// to the same set.
using format::DType;
/// Constant tensors (initializers, Constant nodes, TENSOR attributes, folded values,
/// rewritten weights) are NpyArrays, the stack's one tensor type, read and built with the
/// helpers of npu/format/array_values.h. Values own them through shared_ptr<const NpyArray>,
/// so a pass that rewrites a weight adds a new array instead of mutating one that another
/// value (or a copy of the graph) may share.
using format::NpyArray;

/// "float32", ... (format::dtype_name), or "undefined" for an unknown element type.
const char* dtype_name(std::optional<DType> t);
/// Bytes per element (format::dtype_size), 0 for an unknown element type.
size_t dtype_size(std::optional<DType> t);

/// Index of a Value in its Graph; kNoValue marks an omitted optional input.
using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

/// One dimension: static (value >= 0) or symbolic (value == -1, `symbol` names it, e.g.
/// "batch"; an empty symbol is an unknown dim).
struct Dim {
  int64_t value = -1;
  std::string symbol;

  static Dim fixed(int64_t v) { return Dim{v, {}}; }
  static Dim named(std::string s) { return Dim{-1, std::move(s)}; }
  bool is_static() const { return value >= 0; }
  bool operator==(const Dim&) const = default;
};
using Shape = std::vector<Dim>;

/// Shape from static dims.
Shape make_shape(const std::vector<int64_t>& dims);
/// "[1, 3, N, ?]" (N a symbol, ? unknown): format::shape_text() with unknown dims as "?".
std::string shape_to_string(const Shape& s);

/// Quantization parameters of an int8/uint8 tensor (ONNX QuantizeLinear semantics): one
/// scale/zero point per tensor, or one per slice along `axis`.
struct QuantInfo {
  std::vector<float> scales;
  std::vector<int64_t> zero_points;
  int64_t axis = 1;
};

/// Physical element order chosen for a tensor. kOnnx is the order ONNX defines (NCHW for
/// activations, OIHW for conv weights); the layout pass marks device tensors kNHWC (4-D
/// activations) or kOHWI (conv weights); lowering inserts transposes where layouts meet.
enum class Layout : uint8_t { kOnnx, kNHWC, kOHWI };
const char* layout_name(Layout l);

/// A tensor edge of the graph.
struct Value {
  std::string name;
  std::optional<DType> dtype;                // nullopt: element type unknown
  std::optional<Shape> shape;                // nullopt: rank unknown
  std::shared_ptr<const NpyArray> constant;  // set for initializers and folded values
  std::optional<QuantInfo> quant;
  Layout layout = Layout::kOnnx;

  bool is_constant() const { return constant != nullptr; }
  /// Static dims, or nullopt if the rank or any dim is unknown.
  std::optional<std::vector<int64_t>> static_dims() const;
};

/// Typed attribute values (ONNX AttributeProto FLOAT/INT/STRING/TENSOR/FLOATS/INTS/STRINGS).
using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, NpyArray>;

/// An activation fused into a Conv/Gemm/MatMul: the ONNX op it came from ("Relu", "Clip",
/// "LeakyRelu", "Sigmoid", ...) with its parameters (Clip: alpha = min, beta = max;
/// LeakyRelu/Elu: alpha; HardSigmoid: alpha, beta).
struct FusedActivation {
  std::string op_type;
  float alpha = 0.0f;
  float beta = 0.0f;
};

/// Where a node runs, set by the support-check pass.
enum class Target : uint8_t { kUnassigned, kDevice, kHost };
struct Placement {
  Target target = Target::kUnassigned;
  std::string reason;  // why it stays on the host (empty on the device)
};

/// One operator. `opset` is the version of its domain that the model imports.
struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  int64_t opset = 0;
  std::vector<ValueId> inputs;  // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;
  std::map<std::string, AttrValue> attrs;
  std::optional<FusedActivation> activation;
  Placement placement;

  /// Input i, or kNoValue when absent.
  ValueId input(size_t i) const { return i < inputs.size() ? inputs[i] : kNoValue; }
  /// "node 'conv1' (Conv)" for error messages.
  std::string label() const;

  bool has_attr(const std::string& key) const { return attrs.count(key) != 0; }
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback = {}) const;
  std::vector<int64_t> attr_ints(const std::string& key,
                                 const std::vector<int64_t>& fallback = {}) const;
  const NpyArray* attr_tensor(const std::string& key) const;
};

/// A model graph. Nodes are kept in topological order (verify() checks it); Values live in
/// a table indexed by ValueId that only grows (unused values are simply not referenced).
class Graph {
 public:
  std::string name;
  std::map<std::string, int64_t> opsets;  // domain -> imported version ("" = ai.onnx)
  std::vector<ValueId> inputs;            // runtime inputs (not constants)
  std::vector<ValueId> outputs;
  std::vector<Node> nodes;

  /// Adds a value; its name must be unique (use unique_name()).
  ValueId add_value(Value v);
  /// Adds a constant value named after `hint` (made unique).
  ValueId add_constant(std::string_view hint, NpyArray data);
  Value& value(ValueId id) { return values_.at(static_cast<size_t>(id)); }
  const Value& value(ValueId id) const { return values_.at(static_cast<size_t>(id)); }
  size_t num_values() const { return values_.size(); }
  /// The value named `name`, or kNoValue.
  ValueId find_value(std::string_view name) const;
  /// `hint` if unused, else hint + "_N".
  std::string unique_name(std::string_view hint) const;
  void rename_value(ValueId id, const std::string& new_name);

  /// Drops this graph's reference to the data of constant `id` when no node reads it and it
  /// is not a graph output, so a pass that replaced a weight frees the old array at once
  /// rather than when the graph dies (the memory then serves the next replacement). The value
  /// stays in the table, no longer constant; an array another owner shares lives on with it.
  /// O(nodes). Returns whether the data was dropped.
  bool release_if_unread(ValueId id);
  /// The constant data of `id`, or nullptr (also for kNoValue).
  const NpyArray* constant(ValueId id) const;
  bool is_graph_input(ValueId id) const;
  bool is_graph_output(ValueId id) const;

  /// Per value: index of the node producing it, or -1.
  std::vector<int> producers() const;
  /// Per value: indices of the nodes reading it (each node once).
  std::vector<std::vector<int>> consumers() const;

  /// Removes a node whose output `out` equals its input `in`: readers of `out` read `in`.
  /// If `out` is a graph output, `in` takes over its name so the model's output names stay
  /// the same; returns false (changing nothing) when that is impossible because `in` is
  /// itself a graph input or output.
  bool bypass(ValueId out, ValueId in);
  /// Erases the nodes flagged in `dead` (indexed like `nodes`).
  void erase_nodes(const std::vector<bool>& dead);
  /// Erases nodes none of whose outputs is read or a graph output; returns how many.
  size_t remove_dead_nodes();
  /// Reorders `nodes` topologically (stable); an error names a node on a cycle.
  Expected<void> topological_sort();
  /// Checks the invariants: every input defined before use, each value produced once,
  /// constants well formed and consistent with their shape, outputs defined.
  Expected<void> verify() const;

 private:
  std::vector<Value> values_;
  std::unordered_map<std::string, ValueId> by_name_;
};

/// A readable dump of the graph (one line per value/node), for --print-after and tests.
std::string to_string(const Graph& g);

}  // namespace npu::compiler
