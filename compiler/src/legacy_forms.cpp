// Older opsets pass some operands as attributes that later opsets take as inputs (Clip's
// bounds, Pad's pads, Squeeze's axes, ...). Passes and lowering should see one form, so the
// importer moves these attributes to constant inputs of the newer form. Node::opset keeps the
// imported version for the few semantic differences that remain (e.g. Softmax before 13).
#include <limits>

#include "import_steps.h"

namespace npu::compiler::detail {

namespace {

ValueId ints_constant(Graph& g, const Node& n, const std::string& what,
                      const std::vector<int64_t>& v) {
  return g.add_constant(n.name + "_" + what,
                        NpyArray::of<int64_t>({static_cast<int64_t>(v.size())}, v));
}

ValueId scalar_constant(Graph& g, const Node& n, const std::string& what, DType dtype, double x) {
  NpyArray t = NpyArray::zeros(dtype, {});
  format::set_number(t, 0, x);
  return g.add_constant(n.name + "_" + what, std::move(t));
}

void set_input(Node& n, size_t i, ValueId id) {
  if (n.inputs.size() <= i) n.inputs.resize(i + 1, kNoValue);
  n.inputs[i] = id;
}

// Moves ints attribute `attr` to input `index` if present.
void ints_attr_to_input(Graph& g, Node& n, const std::string& attr, size_t index) {
  if (!n.has_attr(attr)) return;
  set_input(n, index, ints_constant(g, n, attr, n.attr_ints(attr)));
  n.attrs.erase(attr);
}

}  // namespace

Expected<void> upgrade_legacy_forms(Graph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (!n.domain.empty() || n.inputs.empty()) continue;
    // An unknown element type (rare: ONNX shape inference types Clip/Pad inputs) gives a
    // float32 bound, as the operator's default type.
    const DType data_type =
        n.inputs[0] >= 0 ? g.value(n.inputs[0]).dtype.value_or(DType::kFloat32) : DType::kFloat32;
    const std::string& op = n.op_type;
    if (op == "Clip" && n.opset < 11) {
      if (n.has_attr("min"))
        set_input(n, 1, scalar_constant(g, n, "min", data_type, n.attr_float("min", 0)));
      if (n.has_attr("max"))
        set_input(n, 2, scalar_constant(g, n, "max", data_type, n.attr_float("max", 0)));
      n.attrs.erase("min");
      n.attrs.erase("max");
    } else if (op == "Pad" && n.opset < 11) {
      ints_attr_to_input(g, n, "pads", 1);
      if (n.has_attr("value")) {
        set_input(n, 2, scalar_constant(g, n, "value", data_type, n.attr_float("value", 0)));
        n.attrs.erase("value");
      }
    } else if (op == "Slice" && n.opset < 10) {
      ints_attr_to_input(g, n, "starts", 1);
      ints_attr_to_input(g, n, "ends", 2);
      ints_attr_to_input(g, n, "axes", 3);
    } else if ((op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum") && n.opset < 13) {
      ints_attr_to_input(g, n, "axes", 1);
    } else if (op == "Split" && n.opset < 13) {
      ints_attr_to_input(g, n, "split", 1);
    }
  }
  return ok();
}

void annotate_quantization(Graph& g) {
  // (quantized value, scale, zero point) triples per op, by input/output position.
  auto annotate = [&](ValueId v, ValueId scale, ValueId zp, int64_t axis) {
    const NpyArray* s = g.constant(scale);
    if (v < 0 || !s || s->dtype != DType::kFloat32) return;
    QuantInfo q;
    q.scales = format::to_floats(*s);
    q.axis = axis;
    if (const NpyArray* z = g.constant(zp)) {
      q.zero_points = format::to_ints(*z);
    } else {
      q.zero_points.assign(q.scales.size(), 0);
    }
    g.value(v).quant = std::move(q);
  };
  for (const Node& n : g.nodes) {
    if (!n.domain.empty()) continue;
    const int64_t axis = n.attr_int("axis", 1);
    if (n.op_type == "QuantizeLinear" && !n.outputs.empty()) {
      annotate(n.outputs[0], n.input(1), n.input(2), axis);
    } else if (n.op_type == "DequantizeLinear") {
      annotate(n.input(0), n.input(1), n.input(2), axis);
    } else if (n.op_type == "QLinearConv" && !n.outputs.empty()) {
      annotate(n.input(0), n.input(1), n.input(2), 1);
      annotate(n.input(3), n.input(4), n.input(5), 0);
      annotate(n.outputs[0], n.input(6), n.input(7), 1);
    } else if (n.op_type == "QLinearMatMul" && !n.outputs.empty()) {
      annotate(n.input(0), n.input(1), n.input(2), 1);
      annotate(n.input(3), n.input(4), n.input(5), 1);
      annotate(n.outputs[0], n.input(6), n.input(7), 1);
    }
  }
}

}  // namespace npu::compiler::detail
