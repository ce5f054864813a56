// instance-norm-to-layernorm: InstanceNormalization normalizes each channel of each instance
// over its spatial dims. For X [N, C, spatial...] that is a LayerNormalization over the axes
// from 2 on (each row one (n, c) pair: same mean, same population variance, same epsilon),
// followed by the per-channel affine y * scale[c] + B[c], which the device runs as a Mul and an
// Add with scale and B as [C, 1, ...] constants broadcast over the spatial dims. Above rank 4 X
// is viewed as [N, C, spatial] around the three (Reshapes, no data moved). The
// LayerNormalization gets a Scale of ones over the normalized shape (a product by one is
// exact) and no B, and is lowered like any other (the vector steps of lower_layernorm.cpp,
// statistics in float32, ONNX's stash type). Float32 results differ from the host op only by
// the statistics' float32 accumulation (the host sums in double).
//
// Left on the host, unchanged, with the reason in `npu-compile --report`: X not float32, rank
// below 3, dims not static, scale or B not constant float32 [C].
#include "instance_norm_to_layernorm.h"

#include <vector>

#include "npu/compiler/pass.h"

namespace npu::compiler {

namespace {

/// The constant float32 [C] parameter `v`, or nullptr.
const NpyArray* channel_param(const Graph& g, ValueId v, int64_t channels) {
  const NpyArray* a = v >= 0 ? g.constant(v) : nullptr;
  if (!a || a->dtype != DType::kFloat32 || a->shape != std::vector<int64_t>{channels})
    return nullptr;
  return a;
}

/// `a` [C] reshaped to [C, 1, ...] (rank - 1 dims: it broadcasts over X's [N, C, spatial...]).
NpyArray per_channel(const NpyArray& a, size_t rank) {
  NpyArray r = a;
  r.shape.resize(rank - 1, 1);
  return r;
}

class InstanceNormToLayerNormPass final : public Pass {
 public:
  std::string_view name() const override { return "instance-norm-to-layernorm"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size());
    for (Node& n : g.nodes) {
      if (n.op_type != "InstanceNormalization" || !instance_norm_host_reason(g, n).empty()) {
        nodes.push_back(std::move(n));
        continue;
      }
      rewrite(g, std::move(n), nodes);
      changed = true;
    }
    g.nodes = std::move(nodes);
    return changed;
  }

 private:
  /// Appends LayerNormalization(X, ones; axis 2) -> Mul(scale) -> Add(B) computing `n`'s Y.
  /// Above rank 4 (beyond the vector engine's elementwise views) X is first viewed as
  /// [N, C, spatial] and the result viewed back (Reshapes: no data moves).
  static void rewrite(Graph& g, Node n, std::vector<Node>& nodes) {
    const ValueId x = n.input(0), y = n.outputs[0];
    const std::vector<int64_t> dims = *g.value(x).static_dims();
    const bool flat = dims.size() > 4;
    std::vector<int64_t> work = dims;  // the shape the three steps see
    if (flat) {
      int64_t spatial = 1;
      for (size_t d = 2; d < dims.size(); ++d) spatial *= dims[d];
      work = {dims[0], dims[1], spatial};
    }
    const NpyArray& scale = *g.constant(n.input(1));
    const NpyArray& bias = *g.constant(n.input(2));
    auto temp = [&](const char* suffix) {
      Value v;
      v.name = g.unique_name(g.value(y).name + suffix);
      v.dtype = DType::kFloat32;
      v.shape = make_shape(work);
      return g.add_value(std::move(v));
    };
    auto reshape = [&](ValueId from, ValueId to, const std::vector<int64_t>& shape,
                       const char* suffix) {
      Node r;
      r.name = g.unique_name(n.name + suffix);
      r.op_type = "Reshape";
      r.opset = 14;
      r.inputs = {
          from, g.add_constant(r.name + "_shape",
                               NpyArray::of<int64_t>({static_cast<int64_t>(shape.size())}, shape))};
      r.outputs = {to};
      nodes.push_back(std::move(r));
    };
    ValueId in = x;
    if (flat) {
      in = temp("_flat");
      reshape(x, in, work, "_flatten");
    }
    const ValueId normalized = temp("_normalized"), scaled = temp("_scaled");
    const ValueId out = flat ? temp("_flat_out") : y;

    NpyArray ones =
        NpyArray::zeros(DType::kFloat32, std::vector<int64_t>(work.begin() + 2, work.end()));
    for (int64_t i = 0; i < ones.num_elements(); ++i) format::set_number(ones, i, 1.0);
    Node ln;
    ln.name = g.unique_name(n.name + "_layernorm");
    ln.op_type = "LayerNormalization";
    ln.opset = 17;  // the first opset with LayerNormalization
    ln.inputs = {in, g.add_constant(n.name + "_ones", std::move(ones))};
    ln.outputs = {normalized};
    ln.attrs["axis"] = int64_t{2};
    ln.attrs["epsilon"] = n.attr_float("epsilon", 1e-5f);
    nodes.push_back(std::move(ln));

    Node mul;
    mul.name = g.unique_name(n.name + "_scale");
    mul.op_type = "Mul";
    mul.opset = 14;
    mul.inputs = {normalized, g.add_constant(n.name + "_scale_c", per_channel(scale, work.size()))};
    mul.outputs = {scaled};
    nodes.push_back(std::move(mul));

    Node add;
    add.name = flat ? g.unique_name(n.name + "_bias") : n.name;
    add.op_type = "Add";
    add.opset = 14;
    add.inputs = {scaled, g.add_constant(n.name + "_bias_c", per_channel(bias, work.size()))};
    add.outputs = {out};
    nodes.push_back(std::move(add));
    if (flat) reshape(out, y, dims, "_unflatten");
  }
};

}  // namespace

std::string instance_norm_host_reason(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.inputs.size() != 3 || n.outputs.size() != 1 || n.outputs[0] < 0)
    return "InstanceNormalization with unexpected inputs or outputs";
  const Value& x = g.value(n.input(0));
  if (x.dtype != DType::kFloat32)
    return std::string("InstanceNormalization of ") + dtype_name(x.dtype);
  const std::optional<std::vector<int64_t>> dims = x.static_dims();
  if (!dims) return "InstanceNormalization of dynamic shape";
  if (dims->size() < 3) return "InstanceNormalization of rank below 3";
  for (int64_t d : *dims)
    if (d <= 0) return "InstanceNormalization of an empty tensor";
  if (!channel_param(g, n.input(1), (*dims)[1]) || !channel_param(g, n.input(2), (*dims)[1]))
    return "InstanceNormalization scale or B not constant float32 [C]";
  return "";
}

std::unique_ptr<Pass> create_InstanceNormToLayerNormPass() {
  return std::make_unique<InstanceNormToLayerNormPass>();
}

}  // namespace npu::compiler
