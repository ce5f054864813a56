// The TVM JSON document: parse, structure checks, the two attribute encodings and the kernel
// order (see tvm_json.h). The checks follow what TVM's JSONRuntimeBase::Load and
// JSONGraphNode::Load accept: unknown keys are errors, entries have two or three integers,
// node_row_ptr (when present) must agree with the nodes' output counts.
#include "tvm/tvm_json.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "npu/format/shape.h"

namespace npu::compiler::tvm {

namespace {

using json = nlohmann::json;

constexpr int kMaxDepth = 64;  // nesting of the document; bounds the work on hostile input
constexpr uint32_t kMaxNodes = 1u << 20;
constexpr int64_t kMaxDim = int64_t{1} << 40;  // as the ONNX importer's element limit

struct TooDeep {};

std::string brief(const json& v) {
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return s;
}

Expected<int64_t> to_int(const json& v, const std::string& what) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_unsigned() && v.get<uint64_t>() <= uint64_t{INT64_MAX})
    return static_cast<int64_t>(v.get<uint64_t>());
  return make_error(EINVAL, what + ": expected an integer, got " + brief(v));
}

Expected<uint32_t> to_index(const json& v, const std::string& what) {
  auto i = to_int(v, what);
  if (!i) return i.error();
  if (*i < 0 || *i > int64_t{UINT32_MAX}) {
    return make_error(EINVAL, what + ": " + std::to_string(*i) + " is not a valid index");
  }
  return static_cast<uint32_t>(*i);
}

/// An integer from its decimal text (legacy encoding).
Expected<int64_t> parse_int(std::string_view s, const std::string& what) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) {
    return make_error(EINVAL, what + ": '" + std::string(s) + "' is not an integer");
  }
  return v;
}

Expected<float> parse_float(std::string_view s, const std::string& what) {
  const std::string text(s);
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    return make_error(EINVAL, what + ": '" + text + "' is not a number");
  }
  return static_cast<float>(v);
}

/// Each string of a legacy list parsed with `parse` (parse_int, parse_float).
template <typename Parse>
Expected<std::optional<AttrValue>> parse_list(const std::vector<std::string>& l,
                                              const std::string& what, Parse parse) {
  std::vector<std::decay_t<decltype(*parse(std::string_view(), what))>> out;
  for (const auto& x : l) {
    auto v = parse(x, what);
    if (!v) return v.error();
    out.push_back(*v);
  }
  return std::optional<AttrValue>(std::move(out));
}

/// The legacy form of an attribute: a list holding one list of strings.
std::optional<std::vector<std::string>> legacy_strings(const json& v) {
  if (!v.is_array() || v.size() != 1 || !v[0].is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const json& s : v[0]) {
    if (!s.is_string()) return std::nullopt;
    out.push_back(s.get<std::string>());
  }
  return out;
}

Expected<Entry> parse_entry(const json& v, const std::string& what) {
  if (!v.is_array() || v.size() < 2 || v.size() > 3) {
    return make_error(EINVAL, what + ": expected [node, index, version], got " + brief(v));
  }
  auto n = to_index(v[0], what);
  if (!n) return n.error();
  auto i = to_index(v[1], what);
  if (!i) return i.error();
  if (v.size() == 3) {
    if (auto ver = to_index(v[2], what); !ver) return ver.error();
  }
  return Entry{*n, *i};
}

/// "shape": native [[d, ...], ...] or legacy [[[d, ...], ...]].
Expected<std::vector<std::vector<int64_t>>> parse_shapes(const json& v, const std::string& what) {
  const bool legacy =
      v.is_array() && v.size() == 1 && v[0].is_array() && !v[0].empty() && v[0][0].is_array();
  const json& list = legacy ? v[0] : v;
  if (!list.is_array()) return make_error(EINVAL, what + ": expected a list of shapes");
  std::vector<std::vector<int64_t>> shapes;
  for (const json& s : list) {
    if (!s.is_array()) return make_error(EINVAL, what + ": expected a list of shapes");
    std::vector<int64_t> dims;
    for (const json& d : s) {
      auto x = to_int(d, what);
      if (!x) return x.error();
      if (*x < -1 || *x > kMaxDim) {
        return make_error(EINVAL, what + ": dim " + std::to_string(*x) + " is out of range");
      }
      dims.push_back(*x);
    }
    shapes.push_back(std::move(dims));
  }
  return shapes;
}

/// "dtype": native ["float32", ...] or legacy [["float32", ...]].
Expected<std::vector<std::string>> parse_dtypes(const json& v, const std::string& what) {
  if (auto legacy = legacy_strings(v)) return *legacy;
  std::vector<std::string> out;
  if (v.is_array()) {
    for (const json& s : v) {
      if (!s.is_string()) break;
      out.push_back(s.get<std::string>());
    }
    if (out.size() == v.size()) return out;
  }
  return make_error(EINVAL, what + ": expected a list of dtype names, got " + brief(v));
}

/// num_inputs / num_outputs: an integer (native), its text (legacy) or [["N"]].
Expected<int64_t> parse_count(const json& v, const std::string& what) {
  if (v.is_string()) return parse_int(v.get<std::string>(), what);
  if (auto legacy = legacy_strings(v); legacy && legacy->size() == 1)
    return parse_int((*legacy)[0], what);
  return to_int(v, what);
}

Expected<JsonNode> parse_node(const json& v, size_t id) {
  const std::string where = "node " + std::to_string(id);
  if (!v.is_object()) return make_error(EINVAL, where + ": expected an object");
  JsonNode n;
  const json* attrs = nullptr;
  for (const auto& [key, value] : v.items()) {
    if (key == "op" && value.is_string()) {
      n.op = value.get<std::string>();
    } else if (key == "name" && value.is_string()) {
      n.name = value.get<std::string>();
    } else if (key == "inputs" && value.is_array()) {
      for (const json& e : value) {
        auto entry = parse_entry(e, where + ": input " + std::to_string(n.inputs.size()));
        if (!entry) return entry.error();
        n.inputs.push_back(*entry);
      }
    } else if ((key == "attrs" || key == "attr") && value.is_object()) {
      attrs = &value;
    } else {
      return make_error(EINVAL, where + ": unexpected key '" + key + "' (" + brief(value) + ")");
    }
  }
  if (n.op != "input" && n.op != "const" && n.op != "kernel") {
    return make_error(EINVAL, where + ": op '" + n.op + "' is not input, const or kernel");
  }
  if ((n.op == "kernel") == n.inputs.empty()) {
    return make_error(EINVAL, where + " (" + n.name + "): " +
                                  (n.op == "kernel" ? "a kernel without inputs"
                                                    : "an " + n.op + " node with inputs"));
  }
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::string> dtypes;
  std::optional<int64_t> num_inputs, num_outputs;
  const std::string attr_where = where + " (" + n.name + "): attribute";
  if (attrs) {
    for (const auto& [key, value] : attrs->items()) {
      const std::string what = attr_where + " '" + key + "'";
      if (key == "shape") {
        auto s = parse_shapes(value, what);
        if (!s) return s.error();
        shapes = std::move(*s);
      } else if (key == "dtype") {
        auto d = parse_dtypes(value, what);
        if (!d) return d.error();
        dtypes = std::move(*d);
      } else if (key == "num_inputs" || key == "num_outputs") {
        auto c = parse_count(value, what);
        if (!c) return c.error();
        (key == "num_inputs" ? num_inputs : num_outputs) = *c;
      } else {
        n.attrs[key] = value;
      }
    }
  }
  const std::string label = where + " (" + n.name + ")";
  if (shapes.empty() || dtypes.size() != shapes.size()) {
    return make_error(EINVAL, label +
                                  ": needs 'shape' and 'dtype' attributes of one entry per "
                                  "output (has " +
                                  std::to_string(shapes.size()) + " and " +
                                  std::to_string(dtypes.size()) + ")");
  }
  if (num_inputs && *num_inputs != static_cast<int64_t>(n.inputs.size())) {
    return make_error(EINVAL, label + ": num_inputs is " + std::to_string(*num_inputs) +
                                  " but it lists " + std::to_string(n.inputs.size()));
  }
  if (num_outputs && *num_outputs != static_cast<int64_t>(shapes.size())) {
    return make_error(EINVAL, label + ": num_outputs is " + std::to_string(*num_outputs) +
                                  " but it records " + std::to_string(shapes.size()) + " shapes");
  }
  for (size_t i = 0; i < shapes.size(); ++i) n.outputs.push_back({dtypes[i], shapes[i]});
  return n;
}

// Checks entries, arg_nodes and node_row_ptr against the nodes; orders the kernels.
Expected<void> check_graph(Document& d, const std::optional<std::vector<uint32_t>>& row_ptr) {
  const auto count = static_cast<uint32_t>(d.nodes.size());
  auto check_entry = [&](const Entry& e, const std::string& what) -> Expected<void> {
    if (e.node >= count) {
      return make_error(EINVAL, what + ": entry [" + std::to_string(e.node) + ", " +
                                    std::to_string(e.index) + "] names no node (the graph has " +
                                    std::to_string(count) + ")");
    }
    if (e.index >= d.nodes[e.node].outputs.size()) {
      return make_error(
          EINVAL, what + ": entry [" + std::to_string(e.node) + ", " + std::to_string(e.index) +
                      "] reads output " + std::to_string(e.index) + " of " + label(d, e.node) +
                      ", which has " + std::to_string(d.nodes[e.node].outputs.size()));
    }
    return ok();
  };
  for (uint32_t id = 0; id < count; ++id) {
    for (size_t i = 0; i < d.nodes[id].inputs.size(); ++i) {
      NPU_TRY(check_entry(d.nodes[id].inputs[i], label(d, id) + ": input " + std::to_string(i)));
    }
  }
  for (size_t k = 0; k < d.heads.size(); ++k) {
    NPU_TRY(check_entry(d.heads[k], "head " + std::to_string(k)));
  }
  if (d.heads.empty()) return make_error(EINVAL, "the graph has no heads (outputs)");
  std::set<uint32_t> args;
  for (uint32_t a : d.arg_nodes) {
    if (a >= count || d.nodes[a].op == "kernel") {
      return make_error(EINVAL,
                        "arg_nodes: " + std::to_string(a) + " is not an input or const node");
    }
    if (!args.insert(a).second) {
      return make_error(EINVAL, "arg_nodes lists " + label(d, a) + " twice");
    }
  }
  for (uint32_t id = 0; id < count; ++id) {
    if (d.nodes[id].op != "kernel" && !args.count(id)) {
      return make_error(EINVAL, label(d, id) + " is not listed in arg_nodes");
    }
  }
  if (row_ptr) {
    uint32_t rows = 0;
    bool fits = row_ptr->size() == count + size_t{1} && (*row_ptr)[0] == 0;
    for (uint32_t id = 0; fits && id < count; ++id) {
      rows += static_cast<uint32_t>(d.nodes[id].outputs.size());
      fits = (*row_ptr)[id + 1] == rows;
    }
    if (!fits) {
      return make_error(EINVAL,
                        "node_row_ptr does not match the nodes' output counts (it must start at "
                        "0 and add each node's outputs)");
    }
  }
  // Kahn's algorithm over kernels; whatever remains sits on a cycle.
  std::vector<uint32_t> pending(count, 0);
  std::vector<std::vector<uint32_t>> readers(count);
  for (uint32_t id = 0; id < count; ++id) {
    for (const Entry& e : d.nodes[id].inputs) {
      ++pending[id];
      readers[e.node].push_back(id);
    }
  }
  std::vector<uint32_t> ready;
  for (uint32_t id = count; id-- > 0;) {
    if (pending[id] == 0) ready.push_back(id);
  }
  while (!ready.empty()) {
    const uint32_t id = ready.back();
    ready.pop_back();
    if (d.nodes[id].op == "kernel") d.kernel_order.push_back(id);
    for (uint32_t r : readers[id]) {
      if (--pending[r] == 0) ready.push_back(r);
    }
  }
  for (uint32_t id = 0; id < count; ++id) {
    if (pending[id] != 0) return make_error(EINVAL, label(d, id) + " is on a cycle");
  }
  return ok();
}

}  // namespace

std::string label(const Document& d, uint32_t id) {
  const JsonNode& n = d.nodes.at(id);
  if (n.op == "kernel") return "node " + std::to_string(id) + " (" + n.name + ")";
  return n.op + " node " + std::to_string(id) + " '" + n.name + "'";
}

Expected<Document> parse(std::string_view text) {
  json root;
  try {
    root = json::parse(text.begin(), text.end(), [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxDepth) throw TooDeep{};
      return true;
    });
  } catch (const TooDeep&) {
    return make_error(EINVAL, "not a TVM JSON graph: nested deeper than " +
                                  std::to_string(kMaxDepth) + " levels");
  } catch (const json::exception& e) {
    return make_error(EINVAL, std::string("not JSON: ") + e.what());
  }
  if (!root.is_object()) return make_error(EINVAL, "not a TVM JSON graph (not an object)");
  Document d;
  std::optional<std::vector<uint32_t>> row_ptr;
  bool has_nodes = false, has_heads = false, has_args = false;
  for (const auto& [key, value] : root.items()) {
    if (key == "nodes" && value.is_array()) {
      has_nodes = true;
      if (value.size() > kMaxNodes) return make_error(EINVAL, "too many nodes");
      for (const json& n : value) {
        auto node = parse_node(n, d.nodes.size());
        if (!node) return node.error();
        d.nodes.push_back(std::move(*node));
      }
    } else if (key == "arg_nodes" && value.is_array()) {
      has_args = true;
      for (const json& a : value) {
        auto i = to_index(a, "arg_nodes");
        if (!i) return i.error();
        d.arg_nodes.push_back(*i);
      }
    } else if (key == "heads" && value.is_array()) {
      has_heads = true;
      for (const json& h : value) {
        auto e = parse_entry(h, "head " + std::to_string(d.heads.size()));
        if (!e) return e.error();
        d.heads.push_back(*e);
      }
    } else if (key == "node_row_ptr" && value.is_array()) {
      row_ptr.emplace();
      for (const json& r : value) {
        auto i = to_index(r, "node_row_ptr");
        if (!i) return i.error();
        row_ptr->push_back(*i);
      }
    } else if (key != "symbol") {
      return make_error(
          EINVAL, "not a TVM JSON graph: unexpected key '" + key + "' (" + brief(value) + ")");
    }
  }
  if (!has_nodes || !has_heads || !has_args) {
    return make_error(EINVAL, "not a TVM JSON graph: it needs 'nodes', 'arg_nodes' and 'heads'");
  }
  NPU_TRY(check_graph(d, row_ptr));
  return d;
}

Expected<std::optional<AttrValue>> decode_attr(const json& v, const ops::AttrSchema& s,
                                               const std::string& where) {
  using T = ops::AttrType;
  const std::string what = where + " '" + s.name + "'";
  auto mismatch = [&]() {
    return make_error(EINVAL,
                      what + ": expected " + ops::attr_type_name(s.type) + ", got " + brief(v));
  };
  if (auto legacy = legacy_strings(v)) {
    const std::vector<std::string>& l = *legacy;
    if (l.size() == 1 && l[0].empty()) return std::optional<AttrValue>{};  // None
    switch (s.type) {
      case T::kInt:
      case T::kFloat:
      case T::kString: {
        if (l.size() != 1) return mismatch();
        if (s.type == T::kString) return std::optional<AttrValue>(l[0]);
        if (s.type == T::kInt) {
          auto i = parse_int(l[0], what);
          if (!i) return i.error();
          return std::optional<AttrValue>(*i);
        }
        auto f = parse_float(l[0], what);
        if (!f) return f.error();
        return std::optional<AttrValue>(*f);
      }
      case T::kInts:
        return parse_list(l, what, parse_int);
      case T::kFloats:
        return parse_list(l, what, parse_float);
      case T::kStrings:
        return std::optional<AttrValue>(l);
      default:
        return mismatch();
    }
  }
  if (v.is_string() && v.get<std::string>().empty()) return std::optional<AttrValue>{};
  switch (s.type) {
    case T::kInt:
      if (v.is_boolean()) return std::optional<AttrValue>(int64_t{v.get<bool>()});
      if (!v.is_number_integer()) return mismatch();
      return std::optional<AttrValue>(v.get<int64_t>());
    case T::kFloat:
      if (!v.is_number()) return mismatch();
      return std::optional<AttrValue>(v.get<float>());
    case T::kString:
      if (!v.is_string()) return mismatch();
      return std::optional<AttrValue>(v.get<std::string>());
    case T::kInts: {
      if (v.is_number_integer()) return std::optional<AttrValue>(std::vector{v.get<int64_t>()});
      std::vector<int64_t> out;
      for (const json& x : v.is_array() ? v : json::array()) {
        if (!x.is_number_integer()) return mismatch();
        out.push_back(x.get<int64_t>());
      }
      if (!v.is_array()) return mismatch();
      return std::optional<AttrValue>(std::move(out));
    }
    case T::kFloats: {
      if (!v.is_array()) return mismatch();
      std::vector<float> out;
      for (const json& x : v) {
        if (!x.is_number()) return mismatch();
        out.push_back(x.get<float>());
      }
      return std::optional<AttrValue>(std::move(out));
    }
    case T::kStrings: {
      if (!v.is_array()) return mismatch();
      std::vector<std::string> out;
      for (const json& x : v) {
        if (!x.is_string()) return mismatch();
        out.push_back(x.get<std::string>());
      }
      return std::optional<AttrValue>(std::move(out));
    }
    default:
      return mismatch();
  }
}

}  // namespace npu::compiler::tvm
