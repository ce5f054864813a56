// fold-constants: exporters leave arithmetic on constants in the graph — above all the shape
// subgraphs PyTorch emits around Reshape/Flatten (Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape) and weight preprocessing (Transpose/Cast of an initializer). None of it should
// reach the device or the host fallback, so this pass evaluates every node whose inputs are
// constants (Shape and Size need only a static input shape) and replaces its outputs by
// constant values. It uses the host evaluator; ops it cannot evaluate are left alone.
#include "npu/compiler/evaluator.h"
#include "npu/compiler/pass.h"

namespace npu::compiler {

namespace {

class FoldConstantsPass final : public Pass {
 public:
  std::string_view name() const override { return "fold-constants"; }

  Expected<bool> run(Graph& g) override {
    std::vector<bool> folded(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (!can_evaluate(n) || n.outputs.empty()) continue;
      std::vector<const TensorData*> inputs;
      std::optional<TensorData> shape_only;  // Shape/Size of a static, non-constant input
      bool all_constant = true;
      for (ValueId in : n.inputs) {
        inputs.push_back(g.constant(in));
        if (in != kNoValue && !g.constant(in)) all_constant = false;
      }
      if (!all_constant && (n.op_type == "Shape" || n.op_type == "Size") && n.input(0) >= 0) {
        const auto dims = g.value(n.input(0)).static_dims();
        if (!dims) continue;
        shape_only = TensorData::zeros(g.value(n.input(0)).dtype, *dims);
        shape_only->bytes.clear();  // only the dims matter; no data
        inputs[0] = &*shape_only;
        all_constant = true;
      }
      if (!all_constant) continue;
      if (shape_only && n.op_type == "Size") {
        const int64_t c = shape_only->element_count();
        apply(g, n, {TensorData::from_ints(DType::kInt64, {}, std::span<const int64_t>(&c, 1))});
      } else {
        auto out = evaluate_node(n, inputs);
        if (!out) {
          if (out.error().code == ENOTSUP || out.error().code == EFBIG) continue;
          return out.error();
        }
        apply(g, n, std::move(*out));
      }
      folded[i] = true;
      changed = true;
    }
    g.erase_nodes(folded);
    return changed;
  }

 private:
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
