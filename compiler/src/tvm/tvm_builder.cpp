// Building blocks of the kernel translations: attribute lookup with the schema's defaults,
// node creation with the registry's opsets, transposes for layouts.
#include <algorithm>
#include <cstdlib>

#include "tvm/tvm_kernels.h"

namespace npu::compiler::tvm {

namespace {

std::vector<int64_t> parse_ints(const std::string& text) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    out.push_back(std::strtoll(text.substr(pos, comma - pos).c_str(), nullptr, 10));
    pos = comma + 1;
  }
  return out;
}

}  // namespace

const ops::AttrSchema* Attrs::schema(const std::string& name) const {
  for (const ops::AttrSchema& s : *schema_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

int64_t Attrs::i(const std::string& name) const {
  if (auto it = given_.find(name); it != given_.end()) {
    if (const auto* v = std::get_if<int64_t>(&it->second)) return *v;
  }
  const ops::AttrSchema* s = schema(name);
  return s ? static_cast<int64_t>(s->number_default()) : 0;
}

float Attrs::f(const std::string& name) const {
  if (auto it = given_.find(name); it != given_.end()) {
    if (const auto* v = std::get_if<float>(&it->second)) return *v;
  }
  const ops::AttrSchema* s = schema(name);
  return s ? static_cast<float>(s->number_default()) : 0.0f;
}

std::string Attrs::s(const std::string& name) const {
  if (auto it = given_.find(name); it != given_.end()) {
    if (const auto* v = std::get_if<std::string>(&it->second)) return *v;
  }
  const ops::AttrSchema* s = schema(name);
  return s && s->default_value ? *s->default_value : std::string();
}

std::vector<int64_t> Attrs::ints(const std::string& name, size_t count) const {
  if (auto it = given_.find(name); it != given_.end()) {
    if (const auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  }
  const ops::AttrSchema* s = schema(name);
  std::vector<int64_t> d =
      s && s->default_value ? parse_ints(*s->default_value) : std::vector<int64_t>{};
  if (d.size() == 1) d.assign(count, d[0]);
  return d;
}

ValueId Builder::node(std::string_view op, std::vector<ValueId> inputs,
                      std::map<std::string, AttrValue> attrs) {
  Node n;
  n.name = g_.unique_name(stem_ + "/" + std::string(op));
  n.op_type = std::string(op);
  const ops::OpSchema* row = ops::find(op);
  n.opset = row ? std::clamp(kOpset, row->since, row->until) : kOpset;
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  Value v;
  v.name = n.name;
  n.outputs.push_back(g_.add_value(std::move(v)));
  g_.nodes.push_back(std::move(n));
  return g_.nodes.back().outputs[0];
}

ValueId Builder::transpose(ValueId x, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i)
    identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity) return x;
  return node("Transpose", {x}, {{"perm", perm}});
}

ValueId Builder::constant(std::string_view hint, NpyArray a) {
  return g_.add_constant(stem_ + "/" + std::string(hint), std::move(a));
}

void Builder::set(std::map<std::string, AttrValue>& attrs, std::string_view op,
                  std::string_view tvm_name, AttrValue v) {
  const std::string_view onnx = onnx_attr_name(tvm_name);
  const ops::OpSchema* row = ops::find(op);
  if (onnx.empty() || !row || !row->attribute(onnx)) return;
  attrs[std::string(onnx)] = std::move(v);
}

std::vector<int64_t> permute(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  std::vector<int64_t> out;
  for (int64_t p : perm) {
    out.push_back(p >= 0 && static_cast<size_t>(p) < dims.size() ? dims[static_cast<size_t>(p)]
                                                                 : -1);
  }
  return out;
}

std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

Expected<std::vector<int64_t>> layout_perm(std::string_view from, std::string_view to,
                                           const std::string& what) {
  std::string a(from), b(to);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b || std::adjacent_find(a.begin(), a.end()) != a.end()) {
    return make_error(EINVAL, what + " '" + std::string(from) +
                                  "' is not supported (a permutation of " + std::string(to) +
                                  " is)");
  }
  std::vector<int64_t> perm;
  for (char c : to) perm.push_back(static_cast<int64_t>(from.find(c)));
  return perm;
}

}  // namespace npu::compiler::tvm
