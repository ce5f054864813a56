// Writing the model package: tensor table, locations, constant outputs, buffers and metadata
// (see package_builder.h).
#include "lower/package_builder.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "lower/lowering.h"

namespace npu::compiler::detail {

namespace {

/// The package dtype of a value (an unknown one is written as float32).
DType package_dtype(const Value& v) {
  return v.dtype.value_or(DType::kFloat32);
}

/// Where a storage lives in the package's buffers, with its layout when not ONNX order.
format::TensorLocation location_of(const Storage& s, const std::vector<int64_t>& dims,
                                   size_t elem) {
  format::TensorLocation loc;
  const bool in_arena = s.va >= kArenaVa && s.va < kConstantsVa;
  loc.buffer = in_arena ? "activations" : "constants";
  loc.offset = s.va - (in_arena ? kArenaVa : kConstantsVa);
  loc.size = std::max<uint64_t>(s.bytes, 1);
  if (s.perm == identity_perm(s.perm.size())) return loc;
  if (s.perm == Perm{0, 2, 3, 1}) {
    loc.layout = format::Layout::kNHWC;
    return loc;
  }
  // Logical-dim strides of the permuted storage.
  std::vector<int64_t> strides(dims.size());
  int64_t acc = static_cast<int64_t>(elem);
  for (size_t j = s.perm.size(); j-- > 0;) {
    strides[static_cast<size_t>(s.perm[j])] = acc;
    acc *= dims[static_cast<size_t>(s.perm[j])];
  }
  loc.strides = std::move(strides);
  return loc;
}

}  // namespace

std::vector<format::Dim> PackageBuilder::shape_of(const Value& v) {
  std::vector<format::Dim> s;
  if (!v.shape) return s;
  for (const Dim& d : *v.shape) {
    if (d.is_static()) {
      s.push_back(format::Dim::fixed(d.value));
    } else {
      s.push_back(
          format::Dim::named(d.symbol.empty() ? "?" + std::to_string(unknown_dims_++) : d.symbol));
    }
  }
  return s;
}

void PackageBuilder::touch(ValueId v) {
  const Value& val = g.value(v);
  if (tensor_index.count(val.name)) return;
  format::TensorInfo t;
  t.name = val.name;
  t.dtype = package_dtype(val);
  t.shape = shape_of(val);
  t.role = g.is_graph_input(v)    ? format::TensorRole::kInput
           : g.is_graph_output(v) ? format::TensorRole::kOutput
           : val.is_constant()    ? format::TensorRole::kConstant
                                  : format::TensorRole::kIntermediate;
  tensor_index[val.name] = md.tensors.size();
  md.tensors.push_back(std::move(t));
}

void PackageBuilder::touch_extra(const std::string& name, const Value& like) {
  if (tensor_index.count(name)) return;
  format::TensorInfo t;
  t.name = name;
  t.dtype = package_dtype(like);
  t.shape = shape_of(like);
  tensor_index[name] = md.tensors.size();
  md.tensors.push_back(std::move(t));
}

void PackageBuilder::add_constant_tensor(const std::string& name, format::TensorLocation loc) {
  format::TensorInfo t;
  t.name = name;
  t.role = format::TensorRole::kConstant;
  t.location = std::move(loc);
  tensor_index[name] = md.tensors.size();
  md.tensors.push_back(std::move(t));
}

std::optional<LowerError> PackageBuilder::add_constant_outputs(Lowering& L) {
  for (ValueId v : g.outputs) {
    if (!g.value(v).is_constant()) continue;
    const Value& val = g.value(v);
    touch(v);
    auto c = L.constant_storage(v);
    if (!c) return LowerError{c.error(), -1};
    const std::string name = g.unique_name(val.name + "/value");
    touch_extra(name, val);
    format::TensorInfo& ct = md.tensors[tensor_index[name]];
    ct.role = format::TensorRole::kConstant;
    ct.location = location_of(*c, *val.static_dims(), dtype_size(val.dtype));
    format::Segment e;
    e.kind = format::SegmentKind::kHost;
    e.name = val.name + "/identity";
    e.op_type = "Identity";
    e.attributes = nlohmann::json{{"_opset", 13}}.dump();
    e.inputs = {name};
    e.outputs = {val.name};
    md.segments.push_back(std::move(e));
  }
  return std::nullopt;
}

void PackageBuilder::locate_tensors(Lowering& L) {
  for (auto& t : md.tensors) {
    const ValueId v = g.find_value(t.name);
    if (v < 0 || t.location) continue;
    auto& s = L.storage[static_cast<size_t>(v)];
    if (g.is_graph_output(v) && g.value(v).is_constant()) continue;
    if (!s && g.value(v).is_constant()) {
      if (auto c = L.constant_storage(v); c) s = *c;
    }
    if (!s) continue;
    auto d = g.value(v).static_dims();
    if (!d) continue;
    t.location = location_of(*s, *d, dtype_size(g.value(v).dtype));
  }
}

void PackageBuilder::list_graph_io() {
  for (ValueId v : g.inputs) md.inputs.push_back(g.value(v).name);
  for (ValueId v : g.outputs) {
    touch(v);
    md.outputs.push_back(g.value(v).name);
  }
}

format::Package PackageBuilder::finish(Lowering& L) && {
  const LowerOptions& o = L.opt;
  format::Package pkg;
  pkg.metadata = std::move(md);
  pkg.sections = std::move(sections);
  auto& m = pkg.metadata;
  m.model.name = o.model_name.empty() ? "model" : o.model_name;
  m.model.producer = o.producer;
  m.model.source = o.source;
  m.target.sram_size = o.cfg.sram_size;
  m.target.device = o.cfg.name;
  // Buffers: the constants section and the arena.
  format::BufferInfo cb;
  cb.name = "constants";
  cb.kind = format::BufferKind::kConstants;
  cb.size = align64(L.constants.size()) + 64;  // room for empty tensors at the end
  cb.address = kConstantsVa;
  cb.section = static_cast<uint32_t>(pkg.sections.size());
  pkg.sections.push_back({format::SectionKind::kConstants, "constants", L.constants.take()});
  m.buffers.push_back(std::move(cb));
  format::BufferInfo ab;
  ab.name = "activations";
  ab.kind = format::BufferKind::kActivations;
  ab.size = L.arena.extent();
  ab.address = kArenaVa;
  m.buffers.push_back(std::move(ab));
  return pkg;
}

}  // namespace npu::compiler::detail
