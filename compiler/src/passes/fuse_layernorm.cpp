// fuse-layernorm: before opset 17 ONNX had no LayerNormalization, so exporters (torch.onnx at
// opsets 11-16 for nn.LayerNorm) write it as its formula over the trailing axes:
//   mean = ReduceMean(x, axes, keepdims=1)    d = Sub(x, mean)
//   v = ReduceMean(Pow(d, 2), axes)           (or Mul(d, d))
//   n = Div(d, Sqrt(Add(v, eps)))             y = Add(Mul(n, gamma), beta)   (Mul, Add optional)
// nine nodes that are placed, stored and lowered one by one (in the storage precision: fp16
// statistics under --precision fp16). The chain becomes one LayerNormalization node, as an
// opset-17 export has it (opset 17 semantics: axis = the first reduced axis, epsilon from the
// constant, Scale = gamma or ones, B = beta or none), which the layernorm lowering emits as
// one unit with its statistics in fp32.
// Matched only where that is exactly the same function: the reduced axes (ReduceMean's
// attribute before opset 18, its constant input from 18) are the trailing axes of x without a
// gap, both ReduceMeans reduce the same axes with keepdims=1, eps is a one-element constant,
// gamma/beta are constants of x's normalized dims (leading 1s allowed), no operand broadcasts
// the result beyond x's shape, the normalized dims are static (a batch may be symbolic), and
// every intermediate has no reader outside the chain and is not a graph output — d is read
// by exactly the squaring node and the Div. Either operand order is accepted where the op
// commutes (the Adds, the Muls), never for Sub or Div. float32 only: LayerNormalization
// computes its statistics in float32 (stash_type 1), which would change a float64 chain, and
// the host implementation has no float16. A gamma (beta) that does not qualify stays a Mul
// (Add) after the fused normalization.
#include <cmath>
#include <set>

#include "fusion_pass.h"

namespace npu::compiler {

namespace {

class FuseLayerNormPass final : public FusionPass {
 public:
  std::string_view name() const override { return "fuse-layernorm"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    begin(g);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (g.nodes[i].op_type == "ReduceMean" && g.nodes[i].domain.empty() && !dead_[i])
        changed = fuse_at(g, i) || changed;
    }
    g.erase_nodes(dead_);
    return changed;
  }

 private:
  /// Node `n` is `op` (default domain) computing `a op b` in that order.
  static bool is_binary(const Node& n, const char* op, ValueId a, ValueId b) {
    return n.op_type == op && n.domain.empty() && n.inputs.size() == 2 && n.inputs[0] == a &&
           n.inputs[1] == b;
  }

  /// The first reduced axis of ReduceMean `n` over an input of rank `rank` when it reduces
  /// the trailing axes without a gap and keeps them, else -1.
  int64_t trailing_axis(const Graph& g, const Node& n, int64_t rank) const {
    if (n.attr_int("keepdims", 1) != 1) return -1;
    std::vector<int64_t> axes;
    if (n.has_attr("axes")) {
      axes = n.attr_ints("axes");
    } else if (n.input(1) >= 0) {
      const NpyArray* c = g.constant(n.input(1));
      if (!c) return -1;
      axes = format::to_ints(*c);
    }
    if (axes.empty()) return -1;  // all axes, or none with noop_with_empty_axes: not matched
    std::set<int64_t> norm;
    for (int64_t a : axes) {
      if (a < -rank || a >= rank) return -1;
      norm.insert(a < 0 ? a + rank : a);
    }
    if (norm.size() != axes.size()) return -1;  // a repeated axis
    const int64_t first = *norm.begin();
    return *norm.rbegin() == rank - 1 && static_cast<int64_t>(norm.size()) == rank - first ? first
                                                                                           : -1;
  }

  /// `p` as a Scale/B operand: a constant of x's dtype whose dims, after leading 1s, are
  /// `normalized` (x's dims from the axis on) and whose rank does not exceed x's (so the
  /// broadcast does not change the output's shape). The constant itself, or a copy of shape
  /// `normalized`; kNoValue when `p` does not qualify.
  static ValueId affine_param(Graph& g, ValueId p, const std::vector<int64_t>& normalized,
                              size_t x_rank, std::optional<DType> x_type) {
    const NpyArray* c = g.constant(p);
    if (!c || c->dtype != x_type || c->shape.size() > x_rank) return kNoValue;
    std::vector<int64_t> dims = c->shape;
    while (dims.size() > normalized.size() && dims.front() == 1) dims.erase(dims.begin());
    while (dims.size() < normalized.size()) dims.insert(dims.begin(), 1);
    if (dims != normalized) return kNoValue;
    if (c->shape == normalized) return p;
    NpyArray reshaped = *c;
    reshaped.shape = normalized;
    return g.add_constant(g.value(p).name, std::move(reshaped));
  }

  bool fuse_at(Graph& g, size_t r1) {
    // mean = ReduceMean(x), d = x - mean
    const ValueId x = g.nodes[r1].input(0), mean = g.nodes[r1].outputs[0];
    if (x < 0 || g.value(x).is_constant() || !g.value(x).shape) return false;
    const std::optional<DType> type = g.value(x).dtype;
    if (type != DType::kFloat32) return false;
    const auto rank = static_cast<int64_t>(g.value(x).shape->size());
    const int64_t axis = trailing_axis(g, g.nodes[r1], rank);
    if (axis < 0) return false;
    const int sub = sole_reader(g, mean);
    if (sub < 0 || !is_binary(g.nodes[static_cast<size_t>(sub)], "Sub", x, mean)) return false;
    const ValueId d = g.nodes[static_cast<size_t>(sub)].outputs[0];
    // d is read by the squaring node and by the Div, nothing else.
    if (g.is_graph_output(d)) return false;
    const auto& d_readers = consumers_[static_cast<size_t>(d)];
    if (d_readers.size() != 2) return false;
    int square = -1, div = -1;
    for (int n : d_readers) {
      if (dead_[static_cast<size_t>(n)]) return false;
      const Node& node = g.nodes[static_cast<size_t>(n)];
      if ((node.op_type == "Pow" && node.domain.empty() && node.inputs.size() == 2 &&
           node.inputs[0] == d && is_scalar(g, node.inputs[1], 2.0)) ||
          is_binary(node, "Mul", d, d)) {
        square = n;
      } else if (node.op_type == "Div") {
        div = n;
      }
    }
    if (square < 0 || div < 0) return false;
    // v = ReduceMean(d^2) over the same axes
    const int r2 = sole_reader(g, g.nodes[static_cast<size_t>(square)].outputs[0]);
    if (r2 < 0) return false;
    const Node& var = g.nodes[static_cast<size_t>(r2)];
    if (var.op_type != "ReduceMean" || !var.domain.empty() || trailing_axis(g, var, rank) != axis)
      return false;
    // s = Sqrt(v + eps)
    const ValueId v = var.outputs[0];
    const int add_eps = sole_reader(g, v);
    if (add_eps < 0) return false;
    const auto eps = other_operand(g.nodes[static_cast<size_t>(add_eps)], "Add", v);
    const NpyArray* eps_c = eps ? g.constant(*eps) : nullptr;
    if (!eps_c || eps_c->num_elements() != 1) return false;
    const ValueId ve = g.nodes[static_cast<size_t>(add_eps)].outputs[0];
    const int sqrt = sole_reader(g, ve);
    if (sqrt < 0 || g.nodes[static_cast<size_t>(sqrt)].op_type != "Sqrt" ||
        !g.nodes[static_cast<size_t>(sqrt)].domain.empty())
      return false;
    // n = d / s
    const ValueId s = g.nodes[static_cast<size_t>(sqrt)].outputs[0];
    if (sole_reader(g, s) != div || !is_binary(g.nodes[static_cast<size_t>(div)], "Div", d, s))
      return false;
    // n has x's shape (no operand broadcast it further), and the normalized dims are static
    // (leading ones, a batch, may be symbolic).
    ValueId last_out = g.nodes[static_cast<size_t>(div)].outputs[0];
    if (g.value(last_out).shape != g.value(x).shape) return false;
    const Shape& x_shape = *g.value(x).shape;
    std::vector<int64_t> normalized;
    for (auto it = x_shape.begin() + axis; it != x_shape.end(); ++it) {
      if (!it->is_static()) return false;
      normalized.push_back(it->value);
    }
    std::vector<int> parts = {static_cast<int>(r1), sub, square, r2, add_eps, sqrt, div};
    // Optional * gamma, then optional + beta.
    ValueId scale = kNoValue, bias = kNoValue;
    if (const int mul = sole_reader(g, last_out); mul >= 0) {
      const auto gamma = other_operand(g.nodes[static_cast<size_t>(mul)], "Mul", last_out);
      if (gamma && (scale = affine_param(g, *gamma, normalized, x_shape.size(), type)) >= 0) {
        parts.push_back(mul);
        last_out = g.nodes[static_cast<size_t>(mul)].outputs[0];
      }
    }
    if (const int add = sole_reader(g, last_out); add >= 0) {
      const auto beta = other_operand(g.nodes[static_cast<size_t>(add)], "Add", last_out);
      if (beta && (bias = affine_param(g, *beta, normalized, x_shape.size(), type)) >= 0)
        parts.push_back(add);
    }
    if (scale < 0) {  // LayerNormalization's Scale is not optional: ones
      NpyArray ones = NpyArray::zeros(*type, normalized);
      for (int64_t i = 0; i < ones.num_elements(); ++i) format::set_number(ones, i, 1.0);
      scale = g.add_constant(g.nodes[static_cast<size_t>(div)].name + "_scale", std::move(ones));
    }
    const int last = parts.back();
    for (int n : parts) {
      if (n != last) dead_[static_cast<size_t>(n)] = true;
    }
    Node& ln = g.nodes[static_cast<size_t>(last)];
    ln.op_type = "LayerNormalization";
    ln.opset = 17;  // the first opset with LayerNormalization, whose semantics the node has
    ln.inputs = {x, scale};
    if (bias >= 0) ln.inputs.push_back(bias);
    ln.attrs.clear();
    ln.attrs["axis"] = axis;
    ln.attrs["epsilon"] = static_cast<float>(format::number_at(*eps_c, 0));
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> create_FuseLayerNormPass() {
  return std::make_unique<FuseLayerNormPass>();
}

}  // namespace npu::compiler
