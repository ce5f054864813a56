// Text dump of a Graph: the format --print-after and test failure messages show.
//
//   graph "name" opset(ai.onnx)=13
//     input  %x : float32[N, 3, 8, 8]
//     const  %w : float32[4, 3, 3, 3]
//     %y = Conv(%x, %w, _) {pads=[1,1,1,1]} +Relu @device  # conv1
//     output %y : float32[N, 4, 8, 8] nhwc
#include <sstream>
#include <type_traits>

#include "npu/compiler/graph.h"

namespace npu::compiler {

namespace {

std::string value_type(const Value& v) {
  std::string s = dtype_name(v.dtype);
  s += v.shape ? shape_to_string(*v.shape) : "[*]";
  if (v.layout != Layout::kOnnx) s += std::string(" ") + layout_name(v.layout);
  if (v.quant) s += " quant";
  return s;
}

template <typename T>
std::string join(const std::vector<T>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
  os << "]";
  return os.str();
}

std::string attr_to_string(const AttrValue& a) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, float>) {
          std::ostringstream os;
          os << x;
          return os.str();
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + x + "\"";
        } else if constexpr (std::is_same_v<T, NpyArray>) {
          return std::string("tensor<") + dtype_name(x.dtype) + format::shape_text(x.shape) + ">";
        } else {
          return join(x);
        }
      },
      a);
}

}  // namespace

std::string to_string(const Graph& g) {
  std::ostringstream os;
  os << "graph \"" << g.name << "\"";
  for (const auto& [domain, version] : g.opsets) {
    os << " opset(" << (domain.empty() ? "ai.onnx" : domain) << ")=" << version;
  }
  os << "\n";
  for (ValueId i : g.inputs)
    os << "  input  %" << g.value(i).name << " : " << value_type(g.value(i)) << "\n";
  std::vector<bool> used(g.num_values(), false);
  for (const Node& n : g.nodes) {
    for (ValueId i : n.inputs) {
      if (i >= 0) used[static_cast<size_t>(i)] = true;
    }
  }
  for (size_t id = 0; id < g.num_values(); ++id) {
    const Value& v = g.value(static_cast<ValueId>(id));
    if (v.is_constant() && (used[id] || g.is_graph_output(static_cast<ValueId>(id)))) {
      os << "  const  %" << v.name << " : " << value_type(v) << "\n";
    }
  }
  for (const Node& n : g.nodes) {
    os << "  ";
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      os << (o ? ", " : "") << (n.outputs[o] >= 0 ? "%" + g.value(n.outputs[o]).name : "_");
    }
    os << " = " << (n.domain.empty() ? "" : n.domain + ".") << n.op_type << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      os << (i ? ", " : "") << (n.inputs[i] >= 0 ? "%" + g.value(n.inputs[i]).name : "_");
    }
    os << ")";
    if (!n.attrs.empty()) {
      os << " {";
      bool first = true;
      for (const auto& [k, a] : n.attrs) {
        os << (first ? "" : ", ") << k << "=" << attr_to_string(a);
        first = false;
      }
      os << "}";
    }
    if (n.activation) os << " +" << n.activation->op_type;
    if (n.placement.target == Target::kDevice) os << " @device";
    if (n.placement.target == Target::kHost) os << " @host(" << n.placement.reason << ")";
    os << "  # " << n.name << "\n";
  }
  for (ValueId o : g.outputs)
    os << "  output %" << g.value(o).name << " : " << value_type(g.value(o)) << "\n";
  return os.str();
}

}  // namespace npu::compiler
