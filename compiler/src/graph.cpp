// Graph bookkeeping: value table, use-def queries, rewiring helpers, topological order and
// the verifier every pass is checked against.
#include "npu/compiler/graph.h"

#include <algorithm>
#include <deque>
#include <set>

#include "shape_rule.h"

namespace npu::compiler {

Shape make_shape(const std::vector<int64_t>& dims) {
  Shape s;
  s.reserve(dims.size());
  for (int64_t d : dims) s.push_back(Dim::fixed(d));
  return s;
}

std::string shape_to_string(const Shape& s) {
  std::vector<format::Dim> dims;
  dims.reserve(s.size());
  for (const Dim& d : s) {
    dims.push_back(d.is_static() ? format::Dim::fixed(d.value)
                                 : format::Dim::named(d.symbol.empty() ? "?" : d.symbol));
  }
  return format::shape_text(dims);
}

const char* dtype_name(std::optional<DType> t) {
  return t ? format::dtype_name(*t) : "undefined";
}

size_t dtype_size(std::optional<DType> t) {
  return t ? format::dtype_size(*t) : 0;
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kNHWC:
      return "nhwc";
    case Layout::kOHWI:
      return "ohwi";
    case Layout::kOnnx:
      break;
  }
  return "onnx";
}

std::optional<std::vector<int64_t>> Value::static_dims() const {
  if (!shape) return std::nullopt;
  std::vector<int64_t> d;
  d.reserve(shape->size());
  for (const Dim& x : *shape) {
    if (!x.is_static()) return std::nullopt;
    d.push_back(x.value);
  }
  return d;
}

std::string Node::label() const {
  return "node '" + name + "' (" + op_type + ")";
}

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<int64_t>(&it->second)) return *v;
  if (auto* f = std::get_if<float>(&it->second)) return static_cast<int64_t>(*f);
  return fallback;
}

float Node::attr_float(const std::string& key, float fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<float>(&it->second)) return *v;
  if (auto* i = std::get_if<int64_t>(&it->second)) return static_cast<float>(*i);
  return fallback;
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<std::string>(&it->second)) return *v;
  return fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& key,
                                     const std::vector<int64_t>& fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  return fallback;
}

const NpyArray* Node::attr_tensor(const std::string& key) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return nullptr;
  return std::get_if<NpyArray>(&it->second);
}

ValueId Graph::add_value(Value v) {
  const auto id = static_cast<ValueId>(values_.size());
  by_name_[v.name] = id;
  values_.push_back(std::move(v));
  return id;
}

ValueId Graph::add_constant(std::string_view hint, NpyArray data) {
  Value v;
  v.name = unique_name(hint);
  v.dtype = data.dtype;
  v.shape = make_shape(data.shape);
  v.constant = std::make_shared<const NpyArray>(std::move(data));
  return add_value(std::move(v));
}

ValueId Graph::find_value(std::string_view key) const {
  auto it = by_name_.find(std::string(key));
  return it == by_name_.end() ? kNoValue : it->second;
}

std::string Graph::unique_name(std::string_view hint) const {
  std::string base(hint.empty() ? "v" : hint);
  if (!by_name_.count(base)) return base;
  for (size_t i = 1;; ++i) {
    std::string n = base + "_" + std::to_string(i);
    if (!by_name_.count(n)) return n;
  }
}

void Graph::rename_value(ValueId id, const std::string& new_name) {
  Value& v = value(id);
  auto it = by_name_.find(v.name);
  if (it != by_name_.end() && it->second == id) by_name_.erase(it);
  v.name = new_name;
  by_name_[new_name] = id;
}

bool Graph::release_if_unread(ValueId id) {
  if (id < 0 || !value(id).constant || is_graph_output(id)) return false;
  for (const Node& n : nodes) {
    if (std::find(n.inputs.begin(), n.inputs.end(), id) != n.inputs.end()) return false;
  }
  value(id).constant.reset();
  return true;
}

const NpyArray* Graph::constant(ValueId id) const {
  if (id < 0 || static_cast<size_t>(id) >= values_.size()) return nullptr;
  return values_[static_cast<size_t>(id)].constant.get();
}

bool Graph::is_graph_input(ValueId id) const {
  return std::find(inputs.begin(), inputs.end(), id) != inputs.end();
}

bool Graph::is_graph_output(ValueId id) const {
  return std::find(outputs.begin(), outputs.end(), id) != outputs.end();
}

std::vector<int> Graph::producers() const {
  std::vector<int> p(values_.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId o : nodes[n].outputs) {
      if (o >= 0) p[static_cast<size_t>(o)] = static_cast<int>(n);
    }
  }
  return p;
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> c(values_.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (ValueId i : nodes[n].inputs) {
      if (i < 0) continue;
      auto& list = c[static_cast<size_t>(i)];
      if (list.empty() || list.back() != static_cast<int>(n)) list.push_back(static_cast<int>(n));
    }
  }
  return c;
}

bool Graph::bypass(ValueId out, ValueId in) {
  if (is_graph_output(out)) {
    if (is_graph_input(in) || is_graph_output(in) || value(in).is_constant()) return false;
    const std::string out_name = value(out).name;
    rename_value(out, unique_name(out_name + "_bypassed"));
    rename_value(in, out_name);
  }
  for (Node& n : nodes) {
    for (ValueId& i : n.inputs) {
      if (i == out) i = in;
    }
  }
  for (ValueId& o : outputs) {
    if (o == out) o = in;
  }
  return true;
}

void Graph::erase_nodes(const std::vector<bool>& dead) {
  std::vector<Node> kept;
  kept.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i >= dead.size() || !dead[i]) kept.push_back(std::move(nodes[i]));
  }
  nodes = std::move(kept);
}

size_t Graph::remove_dead_nodes() {
  size_t removed = 0;
  for (;;) {
    std::vector<bool> used(values_.size(), false);
    for (const Node& n : nodes) {
      for (ValueId i : n.inputs) {
        if (i >= 0) used[static_cast<size_t>(i)] = true;
      }
    }
    for (ValueId o : outputs) used[static_cast<size_t>(o)] = true;
    std::vector<bool> dead(nodes.size(), false);
    size_t count = 0;
    for (size_t n = 0; n < nodes.size(); ++n) {
      bool any = false;
      for (ValueId o : nodes[n].outputs) any = any || (o >= 0 && used[static_cast<size_t>(o)]);
      if (!any) {
        dead[n] = true;
        ++count;
      }
    }
    if (count == 0) return removed;
    erase_nodes(dead);
    removed += count;
  }
}

Expected<void> Graph::topological_sort() {
  const std::vector<int> prod = producers();
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<int>> users(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    std::set<int> deps;
    for (ValueId i : nodes[n].inputs) {
      if (i >= 0 && prod[static_cast<size_t>(i)] >= 0) deps.insert(prod[static_cast<size_t>(i)]);
    }
    for (int d : deps) users[static_cast<size_t>(d)].push_back(static_cast<int>(n));
    pending[n] = static_cast<int>(deps.size());
  }
  // Kahn's algorithm, always taking the ready node that came first (stable order).
  std::set<int> ready;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (pending[n] == 0) ready.insert(static_cast<int>(n));
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int n = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(n);
    for (int u : users[static_cast<size_t>(n)]) {
      if (--pending[static_cast<size_t>(u)] == 0) ready.insert(u);
    }
  }
  if (order.size() != nodes.size()) {
    for (size_t n = 0; n < nodes.size(); ++n) {
      if (pending[n] > 0) return make_error(EINVAL, nodes[n].label() + ": the graph has a cycle");
    }
  }
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (int n : order) sorted.push_back(std::move(nodes[static_cast<size_t>(n)]));
  nodes = std::move(sorted);
  return ok();
}

namespace {

/// An error when output 0 of a standard node has a static shape that its operator's shape rule
/// (npu/ops/registry.h: elementwise, broadcasting, comparison) contradicts, the inputs being
/// static: a declared output shape the importers keep (ONNX's inference leaves some opset
/// versions alone) would otherwise reach the lowering, which sizes the output by it.
Expected<void> check_shape_rule(const Graph& g, const Node& n) {
  if (n.outputs.empty() || n.outputs[0] < 0) return ok();
  const Value& y = g.value(n.outputs[0]);
  const auto out = y.static_dims();
  if (!out) return ok();
  const auto rule = detail::shape_rule_output(g, n);
  if (!rule || rule->shape == *out) return ok();
  std::string ins;
  for (ValueId v : n.inputs) ins += (ins.empty() ? "" : ", ") + shape_to_string(*g.value(v).shape);
  return make_error(EINVAL, n.label() + ": output '" + y.name + "' has shape " +
                                shape_to_string(*y.shape) + ", but " + n.op_type + " of " + ins +
                                " gives " + shape_to_string(make_shape(rule->shape)));
}

}  // namespace

Expected<void> Graph::verify() const {
  std::vector<bool> defined(values_.size(), false);
  auto valid = [&](ValueId id) { return id >= 0 && static_cast<size_t>(id) < values_.size(); };
  for (ValueId i : inputs) {
    if (!valid(i)) return make_error(EINVAL, "graph input has an invalid value id");
    defined[static_cast<size_t>(i)] = true;
  }
  for (size_t id = 0; id < values_.size(); ++id) {
    const Value& v = values_[id];
    if (!v.constant) continue;
    defined[id] = true;
    NPU_TRY(format::check_npy(*v.constant, "constant '" + v.name + "'"));
    if (auto d = v.static_dims(); d && *d != v.constant->shape) {
      return make_error(EINVAL, "constant '" + v.name + "': shape " + shape_to_string(*v.shape) +
                                    " differs from its data");
    }
  }
  for (const Node& n : nodes) {
    for (ValueId i : n.inputs) {
      if (i == kNoValue) continue;
      if (!valid(i)) return make_error(EINVAL, n.label() + ": invalid input id");
      if (!defined[static_cast<size_t>(i)]) {
        return make_error(EINVAL,
                          n.label() + ": input '" + value(i).name + "' is not defined before use");
      }
    }
    for (ValueId o : n.outputs) {
      if (o == kNoValue) continue;
      if (!valid(o)) return make_error(EINVAL, n.label() + ": invalid output id");
      if (defined[static_cast<size_t>(o)]) {
        return make_error(EINVAL,
                          n.label() + ": output '" + value(o).name + "' is defined more than once");
      }
      defined[static_cast<size_t>(o)] = true;
    }
    NPU_TRY(check_shape_rule(*this, n));
  }
  for (ValueId o : outputs) {
    if (!valid(o) || !defined[static_cast<size_t>(o)]) {
      return make_error(EINVAL, "graph output '" + (valid(o) ? value(o).name : std::string("?")) +
                                    "' is not defined");
    }
  }
  for (const auto& [key, id] : by_name_) {
    if (!valid(id) || values_[static_cast<size_t>(id)].name != key) {
      return make_error(EINVAL, "value table: name '" + key + "' is stale");
    }
  }
  return ok();
}

}  // namespace npu::compiler
