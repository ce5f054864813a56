// Builds the IR from a checked, shape-inferred GraphProto: values from initializers, inputs
// and inferred value_info; nodes with typed attributes; Constant nodes folded into values.
#include <set>
#include <unordered_map>

#include "import_steps.h"
#include "onnx_proto.h"

namespace npu::compiler::detail {

namespace {

std::string label(const onnx::NodeProto& n) {
  return "node '" + n.name() + "' (" + n.op_type() + ")";
}

Expected<AttrValue> convert_attr(const onnx::AttributeProto& a, const std::string& where) {
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      return AttrValue(static_cast<int64_t>(a.i()));
    case onnx::AttributeProto::FLOAT:
      return AttrValue(a.f());
    case onnx::AttributeProto::STRING:
      return AttrValue(a.s());
    case onnx::AttributeProto::INTS:
      return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case onnx::AttributeProto::FLOATS:
      return AttrValue(std::vector<float>(a.floats().begin(), a.floats().end()));
    case onnx::AttributeProto::STRINGS:
      return AttrValue(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case onnx::AttributeProto::TENSOR: {
      auto t = tensor_from_proto(a.t(), where + ": attribute '" + a.name() + "'");
      if (!t) return t.error();
      return AttrValue(std::move(*t));
    }
    default:
      return make_error(ENOTSUP, where + ": attribute '" + a.name() + "' of type " +
                                     onnx::AttributeProto_AttributeType_Name(a.type()) +
                                     " is not supported");
  }
}

// The value of a Constant node.
Expected<NpyArray> constant_value(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value") return tensor_from_proto(a.t(), label(n) + ": value");
    if (a.name() == "value_float") return NpyArray::of<float>({}, std::vector<float>{a.f()});
    if (a.name() == "value_floats") {
      std::vector<float> v(a.floats().begin(), a.floats().end());
      return NpyArray::of<float>({static_cast<int64_t>(v.size())}, v);
    }
    if (a.name() == "value_int") return NpyArray::of<int64_t>({}, std::vector<int64_t>{a.i()});
    if (a.name() == "value_ints") {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      return NpyArray::of<int64_t>({static_cast<int64_t>(v.size())}, v);
    }
    return make_error(ENOTSUP,
                      label(n) + ": constant attribute '" + a.name() + "' is not supported");
  }
  return make_error(EINVAL, label(n) + ": no value attribute");
}

}  // namespace

Expected<Graph> build_graph(const onnx::GraphProto& gp,
                            const std::map<std::string, int64_t>& opsets, const CutWeights& cut) {
  Graph g;
  g.name = gp.name();
  g.opsets = opsets;
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  for (const auto& v : gp.value_info()) types[v.name()] = &v.type();
  for (const auto& v : gp.output()) types[v.name()] = &v.type();
  for (const auto& v : gp.input()) types[v.name()] = &v.type();

  std::set<std::string> defined;
  for (const auto& t : gp.initializer()) {
    const auto c = cut.find(&t);
    auto data = tensor_from_proto(t, "initializer '" + t.name() + "'",
                                  c == cut.end() ? std::nullopt : std::optional(c->second));
    if (!data) return data.error();
    if (g.find_value(t.name()) != kNoValue) continue;  // duplicate initializer: first wins
    Value v;
    v.name = t.name();
    v.dtype = data->dtype;
    v.shape = make_shape(data->shape);
    v.constant = std::make_shared<const NpyArray>(std::move(*data));
    g.add_value(std::move(v));
    defined.insert(t.name());
  }
  for (const auto& in : gp.input()) {
    // An input with an initializer is a default value (and, before IR version 4, every
    // initializer had to be listed as an input): it is a constant.
    if (const ValueId id = g.find_value(in.name()); id != kNoValue && g.value(id).is_constant())
      continue;
    Value v;
    v.name = in.name();
    if (auto r = type_from_proto(in.type(), "input '" + in.name() + "'", v); !r) return r.error();
    if (!v.dtype) {
      return make_error(EINVAL, "input '" + in.name() + "': no element type");
    }
    g.inputs.push_back(g.add_value(std::move(v)));
    defined.insert(in.name());
  }
  for (const auto& n : gp.node()) {
    for (const auto& o : n.output()) defined.insert(o);
  }

  auto new_output = [&](const onnx::NodeProto& n, const std::string& name) -> Expected<ValueId> {
    if (g.find_value(name) != kNoValue) {
      return make_error(EINVAL, label(n) + ": output '" + name + "' is defined more than once");
    }
    Value v;
    v.name = name;
    if (auto it = types.find(name); it != types.end()) {
      if (auto r = type_from_proto(*it->second, label(n) + ": output '" + name + "'", v); !r)
        return r.error();
    }
    return g.add_value(std::move(v));
  };

  for (const auto& n : gp.node()) {
    const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
    if (n.op_type() == "Constant" && domain.empty()) {
      auto data = constant_value(n);
      if (!data) return data.error();
      if (n.output_size() != 1) return make_error(EINVAL, label(n) + ": expected one output");
      auto id = new_output(n, n.output(0));
      if (!id) return id.error();
      Value& v = g.value(*id);
      v.dtype = data->dtype;
      v.shape = make_shape(data->shape);
      v.constant = std::make_shared<const NpyArray>(std::move(*data));
      continue;
    }
    Node node;
    node.name = n.name();
    node.op_type = n.op_type();
    node.domain = domain;
    node.opset = opsets.count(domain) ? opsets.at(domain) : 0;
    for (const auto& a : n.attribute()) {
      auto v = convert_attr(a, label(n));
      if (!v) return v.error();
      node.attrs[a.name()] = std::move(*v);
    }
    for (const auto& in : n.input()) {
      if (in.empty()) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      if (!defined.count(in)) {
        return make_error(EINVAL, label(n) + ": input '" + in + "' is not defined");
      }
      ValueId id = g.find_value(in);
      if (id == kNoValue) {  // produced by a later node: the graph is not sorted
        Value v;
        v.name = in;
        if (auto it = types.find(in); it != types.end()) {
          if (auto r = type_from_proto(*it->second, label(n) + ": input '" + in + "'", v); !r)
            return r.error();
        }
        id = g.add_value(std::move(v));
      }
      node.inputs.push_back(id);
    }
    for (const auto& out : n.output()) {
      if (out.empty()) {
        node.outputs.push_back(kNoValue);
        continue;
      }
      ValueId id = g.find_value(out);
      if (id != kNoValue && (g.value(id).is_constant() || g.is_graph_input(id))) {
        return make_error(EINVAL, label(n) + ": output '" + out + "' is defined more than once");
      }
      if (id == kNoValue) {
        auto r = new_output(n, out);
        if (!r) return r.error();
        id = *r;
      }
      node.outputs.push_back(id);
    }
    g.nodes.push_back(std::move(node));
  }
  for (const auto& out : gp.output()) {
    const ValueId id = g.find_value(out.name());
    if (id == kNoValue)
      return make_error(EINVAL, "graph output '" + out.name() + "' is not defined");
    g.outputs.push_back(id);
  }
  if (auto r = g.topological_sort(); !r) return r.error();
  return g;
}

}  // namespace npu::compiler::detail
