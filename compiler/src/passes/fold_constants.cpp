// fold-constants: exporters leave arithmetic on constants in the graph — above all the shape
// subgraphs PyTorch emits around Reshape/Flatten (Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape) and weight preprocessing (Transpose/Cast of an initializer). None of it should
// reach the device or the host fallback, so this pass evaluates every node whose inputs are
// constants (Shape and Size need only a static input shape) and replaces its outputs by
// constant values. It computes them with the operator library (npu::ops::run), the same code
// the runtime's host segments run, so a folded value is exactly what the host would compute.
// A result larger than kMaxFoldBytes, or an operator or dtype the library does not have,
// leaves the node alone; any other failure is an invalid model and fails the compilation.
#include "npu/compiler/op_set.h"
#include "npu/compiler/pass.h"
#include "npu/ops/ops.h"
#include "onnx_proto.h"
#include "op_attributes.h"

namespace npu::compiler {

namespace {

/// The largest folded result (the evaluator this replaces stopped at 2^26 elements).
constexpr uint64_t kMaxFoldBytes = uint64_t{1} << 28;

class FoldConstantsPass final : public Pass {
 public:
  std::string_view name() const override { return "fold-constants"; }

  // A Shape or Size can read a value whose shape only ONNX shape inference can tell, e.g. the
  // output of a Resize whose sizes this pass has just folded (torchvision's segmentation
  // heads). So while a round folds something and such a node is left, shapes are inferred and
  // the graph folded again (a few rounds at most; a graph without such nodes runs one round).
  Expected<bool> run(Graph& g) override {
    bool changed = false;
    for (int round = 0; round < kMaxRounds; ++round) {
      auto folded = fold_once(g);
      if (!folded) return folded;
      changed |= *folded;
      if (!*folded || !shape_of_unknown_left(g)) break;
      auto inferred = create_InferShapesPass()->run(g);
      if (!inferred) return inferred;
      if (!*inferred) break;
    }
    return changed;
  }

 private:
  static constexpr int kMaxRounds = 4;

  static bool shape_of_unknown_left(const Graph& g) {
    for (const Node& n : g.nodes) {
      if ((n.op_type == "Shape" || n.op_type == "Size") && n.domain.empty() && n.input(0) >= 0 &&
          !g.value(n.input(0)).static_dims()) {
        return true;
      }
    }
    return false;
  }

  static Expected<bool> fold_once(Graph& g) {
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

  using Results = std::optional<std::vector<NpyArray>>;

  /// The node's outputs computed by the operator library, nullopt when it cannot be folded.
  static Expected<Results> evaluate(const Graph& g, const Node& n) {
    std::vector<const NpyArray*> inputs;
    inputs.reserve(n.inputs.size());
    bool all_constant = true;
    for (ValueId in : n.inputs) {
      const NpyArray* c = g.constant(in);
      if (in != kNoValue && !c) all_constant = false;
      inputs.push_back(c);
    }
    const std::string attrs = detail::op_attributes(n);
    Expected<std::vector<NpyArray>> out = make_error(ENOTSUP, "not folded");
    if (all_constant) {
      out = ops::run(n.op_type, attrs, inputs, n.outputs.size(), {kMaxFoldBytes});
    } else if ((n.op_type == "Shape" || n.op_type == "Size") && n.input(0) >= 0) {
      // Shape/Size of a non-constant input: its static shape is enough.
      const Value& x = g.value(n.input(0));
      const auto dims = x.static_dims();
      if (!dims || !x.dtype) return Results{};
      out = ops::run_on_type(n.op_type, attrs, *x.dtype, *dims);
    } else {
      return Results{};
    }
    if (!out) {
      if (out.error().code == ENOTSUP || out.error().code == EFBIG) return Results{};
      return out.error();
    }
    for (const NpyArray& a : *out) {
      // A dtype the IR does not hold (float16, uint16, ...): leave the node to the host.
      if (!detail::accepted_dtype(a.dtype)) return Results{};
    }
    return Results{std::move(*out)};
  }

  static void apply(Graph& g, const Node& n, std::vector<NpyArray> results) {
    for (size_t o = 0; o < n.outputs.size() && o < results.size(); ++o) {
      if (n.outputs[o] < 0) continue;
      Value& v = g.value(n.outputs[o]);
      v.dtype = results[o].dtype;
      v.shape = make_shape(results[o].shape);
      v.constant = std::make_shared<const NpyArray>(std::move(results[o]));
    }
  }
};

}  // namespace

std::unique_ptr<Pass> create_FoldConstantsPass() {
  return std::make_unique<FoldConstantsPass>();
}

}  // namespace npu::compiler
