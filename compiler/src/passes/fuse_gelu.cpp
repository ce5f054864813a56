// fuse-gelu: before opset 20 ONNX had no Gelu, so exporters write GELU as its formula,
// x * 0.5 * (1 + erf(x / sqrt(2))): Div (or Mul by 1/sqrt(2)), Erf, Add 1, and two Muls, which
// on the device are five vector passes over the tensor and four DRAM round trips. The device
// computes the erf form of GELU in one ACTIVATION command (NPU_ACT_GELU), so the pattern
// becomes one Gelu node (opset 20 semantics, approximate="none"). Matched in the three orders
// exporters use for the last two Muls — (x * p) * 0.5 (torch.onnx), (x * 0.5) * p and
// x * (p * 0.5) — with either operand order at each binary node; every intermediate must have
// no other reader and not be a graph output. The tanh approximation is not matched.
#include <cmath>

#include "fusion_pass.h"

namespace npu::compiler {

namespace {

constexpr double kSqrt2 = 1.4142135623730951;

class FuseGeluPass final : public FusionPass {
 public:
  std::string_view name() const override { return "fuse-gelu"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    producers_ = g.producers();
    begin(g);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].op_type == "Erf" && g.nodes[i].domain.empty() && !dead_[i])
        changed = fuse_at(g, i) || changed;
    }
    g.erase_nodes(dead_);
    return changed;
  }

 private:
  bool fuse_at(Graph& g, size_t erf) {
    // x / sqrt(2) or x * (1 / sqrt(2))
    const ValueId scaled = g.nodes[erf].input(0);
    if (scaled < 0 || sole_reader(g, scaled) != static_cast<int>(erf)) return false;
    const int div = producers_[static_cast<size_t>(scaled)];
    if (div < 0 || dead_[static_cast<size_t>(div)]) return false;
    const Node& d = g.nodes[static_cast<size_t>(div)];
    ValueId x = kNoValue;
    if (d.op_type == "Div" && d.domain.empty() && d.inputs.size() == 2 &&
        is_scalar(g, d.inputs[1], kSqrt2)) {
      x = d.inputs[0];
    } else {
      for (size_t k = 0; k < 2 && x < 0; ++k) {
        if (d.op_type == "Mul" && d.domain.empty() && d.inputs.size() == 2 &&
            is_scalar(g, d.inputs[1 - k], 1.0 / kSqrt2))
          x = d.inputs[k];
      }
    }
    if (x < 0 || g.value(x).is_constant()) return false;
    // 1 + erf(...)
    const int add = sole_reader(g, g.nodes[erf].outputs[0]);
    if (add < 0) return false;
    const auto one =
        other_operand(g.nodes[static_cast<size_t>(add)], "Add", g.nodes[erf].outputs[0]);
    if (!one || !is_scalar(g, *one, 1.0)) return false;
    const ValueId p = g.nodes[static_cast<size_t>(add)].outputs[0];
    // The two Muls, in one of three orders.
    const int m1 = sole_reader(g, p);
    if (m1 < 0) return false;
    const auto q = other_operand(g.nodes[static_cast<size_t>(m1)], "Mul", p);
    if (!q) return false;
    std::vector<int> parts = {static_cast<int>(div), static_cast<int>(erf), add, m1};
    int last = -1;
    if (*q == x || is_scalar(g, *q, 0.5)) {  // (x * p) * 0.5 or x * (p * 0.5)
      const ValueId t = g.nodes[static_cast<size_t>(m1)].outputs[0];
      const int m2 = sole_reader(g, t);
      if (m2 < 0) return false;
      const auto r = other_operand(g.nodes[static_cast<size_t>(m2)], "Mul", t);
      if (!r || !(*q == x ? is_scalar(g, *r, 0.5) : *r == x)) return false;
      last = m2;
    } else {  // (x * 0.5) * p
      const int half = producers_[static_cast<size_t>(*q)];
      if (half < 0 || dead_[static_cast<size_t>(half)] || sole_reader(g, *q) != m1) return false;
      const auto r = other_operand(g.nodes[static_cast<size_t>(half)], "Mul", x);
      if (!r || !is_scalar(g, *r, 0.5)) return false;
      parts.push_back(half);
      last = m1;
    }
    for (int n : parts) {
      if (n != last) dead_[static_cast<size_t>(n)] = true;
    }
    Node& gelu = g.nodes[static_cast<size_t>(last)];
    gelu.op_type = "Gelu";
    gelu.opset = 20;  // the first opset with Gelu, whose semantics the node now has
    gelu.inputs = {x};
    gelu.attrs.clear();
    return true;
  }

  std::vector<int> producers_;
};

}  // namespace

std::unique_ptr<Pass> create_FuseGeluPass() {
  return std::make_unique<FuseGeluPass>();
}

}  // namespace npu::compiler
