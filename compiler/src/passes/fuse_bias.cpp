// fuse-bias: exporters often write a layer's bias as a separate Add of a constant (Conv
// without B followed by Add, MatMul followed by Add). The device adds a per-output-channel
// bias inside CONV2D/MATMUL for free, so a constant Add whose value varies only along the
// output-channel axis is folded into the op: Conv's B input, Gemm's C (beta = 1), and for
// MatMul an IR extension — a third input holding a bias per output column.
#include "npu/compiler/pass.h"

namespace npu::compiler {

namespace {

// Per-channel values of `c` broadcast against an output of rank `rank` whose channel axis
// is `axis` with `channels` entries; nullopt if `c` varies along any other axis.
std::optional<std::vector<double>> per_channel(const NpyArray& c, size_t rank, size_t axis,
                                               int64_t channels) {
  if (c.shape.size() > rank) return std::nullopt;
  const size_t lead = rank - c.shape.size();
  int64_t along = 1;
  for (size_t i = 0; i < c.shape.size(); ++i) {
    if (i + lead == axis) {
      along = c.shape[i];
    } else if (c.shape[i] != 1) {
      return std::nullopt;
    }
  }
  if (along != 1 && along != channels) return std::nullopt;
  std::vector<double> v(static_cast<size_t>(channels));
  for (int64_t k = 0; k < channels; ++k)
    v[static_cast<size_t>(k)] = format::number_at(c, along == 1 ? 0 : k);
  return v;
}

class FuseBiasPass final : public Pass {
 public:
  std::string_view name() const override { return "fuse-bias"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    std::vector<bool> dead(g.nodes.size(), false);
    const auto producers = g.producers();
    const auto consumers = g.consumers();
    for (size_t a = 0; a < g.nodes.size(); ++a) {
      const Node& add = g.nodes[a];
      if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2) continue;
      for (int side = 0; side < 2; ++side) {
        const ValueId y = add.inputs[static_cast<size_t>(side)];
        const NpyArray* c = g.constant(add.inputs[static_cast<size_t>(1 - side)]);
        if (y < 0 || !c || c->dtype != DType::kFloat32 || g.value(y).is_constant()) continue;
        const int p = producers[static_cast<size_t>(y)];
        if (p < 0 || dead[static_cast<size_t>(p)] ||
            consumers[static_cast<size_t>(y)].size() != 1 || g.is_graph_output(y)) {
          continue;
        }
        if (!same_shape(g, y, add.outputs[0])) continue;
        if (fuse(g, g.nodes[static_cast<size_t>(p)], *c)) {
          g.nodes[static_cast<size_t>(p)].outputs[0] = add.outputs[0];
          dead[a] = true;
          changed = true;
          break;
        }
      }
    }
    g.erase_nodes(dead);
    return changed;
  }

 private:
  static bool same_shape(const Graph& g, ValueId a, ValueId b) {
    const auto da = g.value(a).static_dims();
    return da && da == g.value(b).static_dims();
  }

  // Adds the per-channel constant `c` to op's bias; false if the pattern does not apply.
  static bool fuse(Graph& g, Node& op, const NpyArray& c) {
    if (!op.domain.empty() || op.activation || op.outputs.empty()) return false;
    const Value& out = g.value(op.outputs[0]);
    const auto dims = out.static_dims();
    if (!dims || dims->size() < 2 || out.dtype != DType::kFloat32) return false;
    size_t bias_input = 0;
    size_t axis = 0;
    if (op.op_type == "Conv") {
      bias_input = 2;
      axis = 1;
    } else if (op.op_type == "Gemm" || op.op_type == "MatMul") {
      bias_input = 2;
      axis = dims->size() - 1;
    } else {
      return false;
    }
    const int64_t channels = (*dims)[axis];
    auto add = per_channel(c, dims->size(), axis, channels);
    if (!add) return false;
    std::vector<double> bias(static_cast<size_t>(channels), 0.0);
    if (op.input(bias_input) >= 0) {
      const NpyArray* old = g.constant(op.input(bias_input));
      if (!old || old->dtype != DType::kFloat32) return false;
      const double beta = op.op_type == "Gemm" ? op.attr_float("beta", 1.0f) : 1.0;
      auto prev =
          per_channel(*old, op.op_type == "Conv" ? 1 : 2, op.op_type == "Conv" ? 0 : 1, channels);
      if (!prev) return false;  // a Gemm C that is not a per-column vector
      for (size_t k = 0; k < bias.size(); ++k) bias[k] = beta * (*prev)[k];
    }
    NpyArray b = NpyArray::zeros(DType::kFloat32, {channels});
    for (size_t k = 0; k < bias.size(); ++k)
      format::set_number(b, static_cast<int64_t>(k), bias[k] + (*add)[k]);
    if (op.inputs.size() <= bias_input) op.inputs.resize(bias_input + 1, kNoValue);
    op.inputs[bias_input] = g.add_constant(op.name + "_bias", std::move(b));
    if (op.op_type == "Gemm") op.attrs["beta"] = 1.0f;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> create_FuseBiasPass() {
  return std::make_unique<FuseBiasPass>();
}

}  // namespace npu::compiler
