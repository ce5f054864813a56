// split-recurrence: RNN, GRU and LSTM are host ops, but most of their arithmetic does not
// depend on the recurrence: the input projections X[t] W^T + Wb of all time steps and both
// directions are one matrix product [seq * batch, input] x [input, dirs * gates * hidden].
// This pass moves that product onto the device's matrix engine as a MatMul with its bias
// (the IR's third MatMul input, as fuse-bias writes it) and leaves the sequential part (the
// H R^T products and the gate arithmetic) to the host op npu.<Op>Recurrence, which runs the
// same recurrence code as the original op on the precomputed gates (ops/src/recurrent.cpp).
// Per layout the gates keep X's order: [seq, batch, dirs * gates * hidden] (layout 0) or
// [batch, seq, dirs * gates * hidden] (layout 1); direction d's gates are columns
// [d * gates * hidden, (d + 1) * gates * hidden). Float32 results differ from the unsplit op
// only by the product's summation order (and by Wb + Rb being added in two steps).
//
// Left on the host, unchanged (the original op's checks then report what is wrong): W or B
// not constant, anything but float32, a quantized graph (an int8 compile or a QDQ model, whose
// precision the float product would not follow), X of unknown rank, and nodes whose shapes or
// attributes do not agree (direction vs W, hidden_size vs W and R, layout other than 0 or 1 or
// before opset 14, more inputs or outputs than the op has).
#include <cstring>
#include <string>

#include "npu/compiler/pass.h"

namespace npu::compiler {

namespace {

/// Whether the graph is quantized: some value carries quantization parameters or some node
/// (de)quantizes or computes in integers.
bool is_quantized(const Graph& g) {
  for (size_t v = 0; v < g.num_values(); ++v) {
    if (g.value(static_cast<ValueId>(v)).quant) return true;
  }
  for (const Node& n : g.nodes) {
    const std::string& op = n.op_type;
    if (op == "QuantizeLinear" || op == "DequantizeLinear" || op == "DynamicQuantizeLinear" ||
        op.rfind("QLinear", 0) == 0 || op == "MatMulInteger" || op == "ConvInteger") {
      return true;
    }
  }
  return false;
}

int64_t gate_count(const std::string& op) {
  return op == "RNN" ? 1 : op == "GRU" ? 3 : op == "LSTM" ? 4 : 0;
}

/// The float32 constant of `v` with `want` as its shape, or nullptr.
const NpyArray* float_constant(const Graph& g, ValueId v, const std::vector<int64_t>& want) {
  const NpyArray* c = g.constant(v);
  if (!c || c->dtype != DType::kFloat32 || c->shape != want) return nullptr;
  return c;
}

class SplitRecurrencePass final : public Pass {
 public:
  std::string_view name() const override { return "split-recurrence"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    const bool quantized = is_quantized(g);
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size());
    for (Node& n : g.nodes) {
      if (!quantized && n.domain.empty() && gate_count(n.op_type) > 0) {
        if (auto matmul = split(g, n)) {
          nodes.push_back(std::move(*matmul));
          changed = true;
        }
      }
      nodes.push_back(std::move(n));
    }
    g.nodes = std::move(nodes);
    return changed;
  }

 private:
  /// Rewrites `n` into its recurrence and returns the projection MatMul that feeds it, or
  /// nullopt (n unchanged) when the node is left to the host.
  static std::optional<Node> split(Graph& g, Node& n) {
    const int64_t gates = gate_count(n.op_type);
    const ValueId x = n.input(0);
    const size_t max_inputs = n.op_type == "LSTM" ? 8 : 6;
    if (x < 0 || n.input(1) < 0 || n.input(2) < 0 || n.inputs.size() > max_inputs ||
        n.outputs.size() > (n.op_type == "LSTM" ? 3u : 2u) || n.activation) {
      return std::nullopt;
    }
    const Value& xv = g.value(x);
    if (xv.dtype != DType::kFloat32 || !xv.shape || xv.shape->size() != 3 || xv.quant) {
      return std::nullopt;
    }
    const std::string direction = n.attr_string("direction", "forward");
    const int64_t dirs = direction == "bidirectional" ? 2 : 1;
    if (direction != "forward" && direction != "reverse" && dirs != 2) return std::nullopt;
    const int64_t layout = n.attr_int("layout", 0);
    if ((layout != 0 && layout != 1) || (n.has_attr("layout") && n.opset < 14)) {
      return std::nullopt;
    }
    // W [dirs, gates * hidden, input] with hidden from hidden_size or R [dirs, gh, hidden].
    const NpyArray* w_any = g.constant(n.input(1));
    const auto rd = g.value(n.input(2)).static_dims();
    if (!w_any || w_any->shape.size() != 3 || !rd || rd->size() != 3) return std::nullopt;
    const int64_t hidden = n.has_attr("hidden_size") ? n.attr_int("hidden_size", 0) : (*rd)[2];
    const int64_t gh = gates * hidden, input = w_any->shape[2];
    if (hidden < 1 || *rd != std::vector<int64_t>{dirs, gh, hidden}) return std::nullopt;
    const NpyArray* w = float_constant(g, n.input(1), {dirs, gh, input});
    if (!w) return std::nullopt;
    const Dim& x_input = (*xv.shape)[2];
    if (!x_input.is_static() || x_input.value != input) return std::nullopt;
    const NpyArray* b = nullptr;
    if (n.input(3) >= 0) {
      b = float_constant(g, n.input(3), {dirs, 2 * gh});
      if (!b) return std::nullopt;
    }

    Shape g_shape = *xv.shape;  // (xv dangles once values are added below)
    g_shape[2] = Dim::fixed(dirs * gates * hidden);
    // W^T of both directions side by side: [input, dirs * gh]; the bias is Wb of each.
    const int64_t cols = dirs * gh;
    NpyArray wt = NpyArray::zeros(DType::kFloat32, {input, cols});
    const float* wsrc = w->view<float>().data();
    float* wdst = wt.view<float>().data();
    for (int64_t row = 0; row < cols; ++row) {  // row = d * gh + j of W
      for (int64_t k = 0; k < input; ++k) wdst[k * cols + row] = wsrc[row * input + k];
    }
    const std::string base =
        n.name.empty() ? g.value(n.outputs.empty() ? x : n.outputs[0]).name : n.name;
    Node mm;
    mm.name = g.unique_name(base + "/input_projection");
    mm.op_type = "MatMul";
    mm.opset = n.opset;
    mm.inputs = {x, g.add_constant(base + "/W_t", std::move(wt))};
    if (b) {
      NpyArray wb = NpyArray::zeros(DType::kFloat32, {cols});
      const float* bsrc = b->view<float>().data();
      float* bdst = wb.view<float>().data();
      for (int64_t d = 0; d < dirs; ++d) std::memcpy(bdst + d * gh, bsrc + d * 2 * gh, gh * 4);
      mm.inputs.push_back(g.add_constant(base + "/Wb", std::move(wb)));
    }
    Value gv;
    gv.name = g.unique_name(base + "/gates");
    gv.dtype = DType::kFloat32;
    gv.shape = std::move(g_shape);
    mm.outputs = {g.add_value(std::move(gv))};

    n.op_type += "Recurrence";
    n.domain = "npu";
    n.opset = 1;
    n.inputs[0] = mm.outputs[0];
    n.inputs[1] = kNoValue;
    return mm;
  }
};

}  // namespace

std::unique_ptr<Pass> create_SplitRecurrencePass() {
  return std::make_unique<SplitRecurrencePass>();
}

}  // namespace npu::compiler
