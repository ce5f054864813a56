// PackageMetadata -> JSON (metadata_to_json), the enum names, and the metadata's lookups.
#include <nlohmann/json.hpp>

#include "npu/format/package_metadata.h"
#include "package_metadata_names.h"

namespace npu::format {

using namespace detail;  // NOLINT: the name tables

namespace {

using json = nlohmann::json;

json strings_json(const std::vector<std::string>& v) {
  json a = json::array();
  for (const auto& s : v) a.push_back(s);
  return a;
}

}  // namespace

const char* role_name(TensorRole v) {
  return enum_name(kRoles, v);
}
const char* layout_name(Layout v) {
  return enum_name(kLayouts, v);
}
const char* buffer_kind_name(BufferKind v) {
  return enum_name(kBufferKinds, v);
}
const char* access_name(Access v) {
  return enum_name(kAccesses, v);
}
const char* segment_kind_name(SegmentKind v) {
  return enum_name(kSegmentKinds, v);
}

const TensorInfo* PackageMetadata::find_tensor(std::string_view name) const {
  for (const auto& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

const BufferInfo* PackageMetadata::find_buffer(std::string_view name) const {
  for (const auto& b : buffers) {
    if (b.name == name) return &b;
  }
  return nullptr;
}

std::string metadata_to_json(const PackageMetadata& m) {
  json root;
  json model = {{"name", m.model.name}};
  if (!m.model.producer.empty()) model["producer"] = m.model.producer;
  if (!m.model.version.empty()) model["version"] = m.model.version;
  if (!m.model.source.empty()) model["source"] = m.model.source;
  if (!m.model.description.empty()) model["description"] = m.model.description;
  root["model"] = std::move(model);

  json target = {{"isa_version", {m.target.isa_major, m.target.isa_minor}}};
  json features = json::array();
  for (const auto& f : kFeatures) {
    if (m.target.features & f.bit) features.push_back(f.name);
  }
  target["features"] = std::move(features);
  target["sram_size"] = m.target.sram_size;
  if (!m.target.device.empty()) target["device"] = m.target.device;
  root["target"] = std::move(target);

  json tensors = json::array();
  for (const auto& t : m.tensors) {
    json shape = json::array();
    for (const auto& d : t.shape) {
      if (d.symbolic()) {
        shape.push_back(d.symbol);
      } else {
        shape.push_back(static_cast<uint64_t>(std::max<int64_t>(d.size, 0)));
      }
    }
    json jt = {{"name", t.name},
               {"dtype", dtype_name(t.dtype)},
               {"shape", std::move(shape)},
               {"role", role_name(t.role)}};
    if (t.quantization) {
      json q = {{"scale", t.quantization->scale}, {"zero_point", t.quantization->zero_point}};
      if (t.quantization->axis) q["axis"] = std::max<int32_t>(*t.quantization->axis, 0);
      jt["quantization"] = std::move(q);
    }
    if (t.location) {
      const auto& l = *t.location;
      json jl = {{"buffer", l.buffer},
                 {"offset", l.offset},
                 {"size", l.size},
                 {"layout", layout_name(l.layout)}};
      if (!l.strides.empty()) {
        json s = json::array();
        for (int64_t x : l.strides) s.push_back(static_cast<uint64_t>(std::max<int64_t>(x, 0)));
        jl["strides"] = std::move(s);
      }
      jt["location"] = std::move(jl);
    }
    tensors.push_back(std::move(jt));
  }
  root["tensors"] = std::move(tensors);

  json buffers = json::array();
  for (const auto& b : m.buffers) {
    json jb = {{"name", b.name},
               {"kind", buffer_kind_name(b.kind)},
               {"size", b.size},
               {"address", b.address}};
    if (b.section) jb["section"] = *b.section;
    buffers.push_back(std::move(jb));
  }
  root["buffers"] = std::move(buffers);

  json segments = json::array();
  for (const auto& s : m.segments) {
    json js = {{"kind", segment_kind_name(s.kind)},
               {"inputs", strings_json(s.inputs)},
               {"outputs", strings_json(s.outputs)}};
    if (!s.name.empty()) js["name"] = s.name;
    if (s.kind == SegmentKind::kDevice) {
      js["command_buffer"] = s.command_buffer;
      json uses = json::array();
      for (const auto& u : s.buffers) {
        uses.push_back({{"buffer", u.buffer}, {"access", access_name(u.access)}});
      }
      js["buffers"] = std::move(uses);
      json layers = json::array();
      for (const auto& l : s.layers) {
        json jl = {{"op", l.op},
                   {"tiles", l.tiles},
                   {"macs", l.macs},
                   {"bytes", l.bytes},
                   {"cycles", l.cycles}};
        if (l.compute_cycles) jl["compute_cycles"] = l.compute_cycles;
        if (!l.name.empty()) jl["name"] = l.name;
        if (!l.engine.empty()) jl["engine"] = l.engine;
        layers.push_back(std::move(jl));
      }
      js["layers"] = std::move(layers);
      js["estimated_cycles"] = s.estimated_cycles;
    } else {
      js["op_type"] = s.op_type;
      json attrs = json::parse(s.attributes, nullptr, false);
      js["attributes"] = attrs.is_object() ? std::move(attrs) : json::object();
    }
    segments.push_back(std::move(js));
  }
  root["segments"] = std::move(segments);
  root["inputs"] = strings_json(m.inputs);
  root["outputs"] = strings_json(m.outputs);
  return root.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace npu::format
