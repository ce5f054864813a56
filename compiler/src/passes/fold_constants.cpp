// fold-constants: exporters leave arithmetic on constants in the graph — above all the shape
// subgraphs PyTorch emits around Reshape/Flatten (Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape) and weight preprocessing (Transpose/Cast of an initializer). None of it should
// reach the device or the host fallback, so this pass evaluates every node whose inputs are
// constants (Shape and Size need only a static input shape) and replaces its outputs by
// constant values. It computes them with the operator library (npu::ops::run), the same code
// the runtime's host segments run, so a folded value is exactly what the host would compute.
// A result larger than kMaxFoldBytes, or an operator or dtype the library does not have,
// leaves the node alone; any other failure is an invalid model and fails the compilation.
#include "npu/compiler/onnx_tensor.h"
#include "npu/compiler/op_set.h"
#include "npu/compiler/pass.h"
#include "npu/ops/ops.h"
#include "op_attributes.h"

namespace npu::compiler {

namespace {

/// The largest folded result (the evaluator this replaces stopped at 2^26 elements).
constexpr uint64_t kMaxFoldBytes = uint64_t{1} << 28;

class FoldConstantsPass final : public Pass {
 public:
  std::string_view name() const override { return "fold-constants"; }

  Expected<bool> run(Graph& g) override {
    std::vector<bool> folded(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (!n.domain.empty() || n.outputs.empty() || n.activation || !find_op(n.op_type)) continue;
      auto out = evaluate(g, n);
      if (!out) return make_error(out.error().code, n.label() + ": " + out.error().message);
      if (!*out) continue;
      apply(g, n, std::move(**out));
      folded[i] = true;
      changed = true;
    }
    g.erase_nodes(folded);
    return changed;
  }

 private:
  using Results = std::optional<std::vector<TensorData>>;

  /// The node's outputs computed by the operator library, nullopt when it cannot be folded.
  static Expected<Results> evaluate(const Graph& g, const Node& n) {
    std::vector<format::NpyArray> arrays;
    arrays.reserve(n.inputs.size());
    std::vector<const format::NpyArray*> inputs;
    bool all_constant = true;
    for (ValueId in : n.inputs) {
      const TensorData* c = g.constant(in);
      if (in != kNoValue && !c) all_constant = false;
      arrays.push_back(c ? to_npy(*c) : format::NpyArray{});
    }
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      inputs.push_back(n.inputs[k] == kNoValue ? nullptr : &arrays[k]);
    }
    const std::string attrs = detail::op_attributes(n);
    Expected<std::vector<format::NpyArray>> out = make_error(ENOTSUP, "not folded");
    if (all_constant) {
      out = ops::run(n.op_type, attrs, inputs, n.outputs.size(), {kMaxFoldBytes});
    } else if ((n.op_type == "Shape" || n.op_type == "Size") && n.input(0) >= 0) {
      // Shape/Size of a non-constant input: its static shape is enough.
      const Value& x = g.value(n.input(0));
      const auto dims = x.static_dims();
      const auto dtype = to_format_dtype(x.dtype);
      if (!dims || !dtype) return Results{};
      out = ops::run_on_type(n.op_type, attrs, *dtype, *dims);
    } else {
      return Results{};
    }
    if (!out) {
      if (out.error().code == ENOTSUP || out.error().code == EFBIG) return Results{};
      return out.error();
    }
    std::vector<TensorData> results;
    for (const format::NpyArray& a : *out) {
      auto t = from_npy(a, "result");
      if (!t) return Results{};  // a dtype the IR does not represent: leave it to the host
      results.push_back(std::move(*t));
    }
    return Results{std::move(results)};
  }

  static void apply(Graph& g, const Node& n, std::vector<TensorData> results) {
    for (size_t o = 0; o < n.outputs.size() && o < results.size(); ++o) {
      if (n.outputs[o] < 0) continue;
      Value& v = g.value(n.outputs[o]);
      v.dtype = results[o].dtype;
      v.shape = make_shape(results[o].dims);
      v.constant = std::make_shared<const TensorData>(std::move(results[o]));
    }
  }
};

}  // namespace

std::unique_ptr<Pass> create_FoldConstantsPass() {
  return std::make_unique<FoldConstantsPass>();
}

}  // namespace npu::compiler
