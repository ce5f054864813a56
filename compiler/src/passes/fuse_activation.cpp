// fuse-activation: a Conv/Gemm/MatMul followed by an activation writes its output to DRAM
// only for the activation to read it back. The device applies the activation to the output
// tile while it is still in SRAM (Relu/Clip as the CONV2D/MATMUL output clamp, the others as
// an ACTIVATION command on the tile), so the activation node is folded into the producer's
// Node::activation. Applies to fp32 ops whose output feeds only the activation.
#include <limits>

#include "npu/compiler/pass.h"
#include "npu/ops/registry.h"

namespace npu::compiler {

namespace {

// The activation `n` computes, or nullopt if it is not one the device fuses.
std::optional<FusedActivation> as_activation(const Graph& g, const Node& n) {
  if (!n.domain.empty()) return std::nullopt;
  const std::string& op = n.op_type;
  FusedActivation a{op, 0.0f, 0.0f};
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish" || op == "LeakyRelu" ||
      op == "Elu" || op == "HardSigmoid") {
    // alpha/beta where the operator has them, with the registry's defaults.
    const ops::OpSchema& s = *ops::find(op);
    if (s.attribute("alpha"))
      a.alpha = n.attr_float("alpha", static_cast<float>(s.number_default("alpha")));
    if (s.attribute("beta"))
      a.beta = n.attr_float("beta", static_cast<float>(s.number_default("beta")));
    return a;
  }
  if (op == "Clip") {
    a.alpha = -std::numeric_limits<float>::infinity();
    a.beta = std::numeric_limits<float>::infinity();
    for (size_t i = 1; i <= 2; ++i) {
      if (n.input(i) < 0) continue;
      const NpyArray* t = g.constant(n.input(i));
      if (!t || t->num_elements() != 1) return std::nullopt;
      (i == 1 ? a.alpha : a.beta) = static_cast<float>(format::number_at(*t, 0));
    }
    return a;
  }
  return std::nullopt;
}

class FuseActivationPass final : public Pass {
 public:
  std::string_view name() const override { return "fuse-activation"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    std::vector<bool> dead(g.nodes.size(), false);
    const auto producers = g.producers();
    const auto consumers = g.consumers();
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& act = g.nodes[i];
      if (act.outputs.empty() || act.input(0) < 0) continue;
      auto fused = as_activation(g, act);
      if (!fused) continue;
      const ValueId y = act.input(0);
      const int p = producers[static_cast<size_t>(y)];
      if (p < 0 || dead[static_cast<size_t>(p)]) continue;
      Node& op = g.nodes[static_cast<size_t>(p)];
      const bool fusable = op.op_type == "Conv" || op.op_type == "Gemm" || op.op_type == "MatMul";
      if (!fusable || !op.domain.empty() || op.activation || op.outputs[0] != y) continue;
      if (consumers[static_cast<size_t>(y)].size() != 1 || g.is_graph_output(y)) continue;
      if (g.value(y).dtype != DType::kFloat32) continue;
      op.activation = *fused;
      op.outputs[0] = act.outputs[0];
      dead[i] = true;
      changed = true;
    }
    g.erase_nodes(dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> create_FuseActivationPass() {
  return std::make_unique<FuseActivationPass>();
}

}  // namespace npu::compiler
