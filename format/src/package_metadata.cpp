// JSON -> PackageMetadata (metadata_from_json; the writer is package_metadata_write.cpp). The
// reader checks structure only: every required key present, every value of the right JSON
// type and range, enum names known, unknown keys rejected (or ignored for newer minor
// versions). It never throws: nlohmann exceptions stay inside.
#include <cmath>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <span>

#include "npu/format/package_metadata.h"
#include "npu_isa.h"
#include "package_metadata_names.h"

namespace npu::format {

using namespace detail;  // NOLINT: the name tables

namespace {

using json = nlohmann::json;

constexpr size_t kMaxDepth = 64;

// Maximum nesting of arrays/objects in JSON text (strings skipped), to bound recursion in
// nlohmann's destructor and dump().
size_t json_depth(std::string_view t) {
  size_t depth = 0, max_depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return max_depth;
}

// Structural reader: every error is "<where>: <path>: <what>".
class Reader {
 public:
  Reader(std::string_view where, bool allow_unknown)
      : where_(where), allow_unknown_(allow_unknown) {}

  Error error(const std::string& path, const std::string& what) const {
    return make_error(EINVAL, where_ + ": " + (path.empty() ? "" : path + ": ") + what);
  }

  static std::string got(const json& v) {
    std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (s.size() > 40) s = s.substr(0, 37) + "...";
    return std::string(v.type_name()) + " " + s;
  }

  Expected<void> object(const json& v, const std::string& path,
                        std::initializer_list<const char*> known) const {
    if (!v.is_object()) return error(path, "expected an object, got " + got(v));
    if (allow_unknown_) return ok();
    for (auto it = v.begin(); it != v.end(); ++it) {
      bool found = false;
      for (const char* k : known) found = found || it.key() == k;
      if (!found) return error(path, "unknown key '" + it.key() + "'");
    }
    return ok();
  }

  static std::string sub(const std::string& path, const char* key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string idx(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  // Returns the member or nullptr (absent, optional) / an error (absent, required).
  Expected<const json*> member(const json& obj, const std::string& path, const char* key,
                               bool required) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) return error(path, "missing required key '" + std::string(key) + "'");
      return static_cast<const json*>(nullptr);
    }
    return &*it;
  }

  Expected<void> str(const json& obj, const std::string& path, const char* key, std::string& out,
                     bool required) const {
    auto m = member(obj, path, key, required);
    if (!m) return m.error();
    if (!*m) return ok();
    if (!(*m)->is_string()) return error(sub(path, key), "expected a string, got " + got(**m));
    out = (*m)->get<std::string>();
    return ok();
  }

  Expected<void> u64(const json& v, const std::string& path, uint64_t& out,
                     uint64_t max = UINT64_MAX) const {
    if (!v.is_number_unsigned()) {
      return error(path, "expected a non-negative integer, got " + got(v));
    }
    out = v.get<uint64_t>();
    if (out > max)
      return error(path, "value " + std::to_string(out) + " above " + std::to_string(max));
    return ok();
  }

  Expected<void> u64(const json& obj, const std::string& path, const char* key, uint64_t& out,
                     bool required, uint64_t max = UINT64_MAX) const {
    auto m = member(obj, path, key, required);
    if (!m) return m.error();
    if (!*m) return ok();
    return u64(**m, sub(path, key), out, max);
  }

  Expected<void> i64(const json& v, const std::string& path, int64_t& out) const {
    if (v.is_number_unsigned()) {
      if (v.get<uint64_t>() > uint64_t(INT64_MAX)) return error(path, "integer out of range");
      out = static_cast<int64_t>(v.get<uint64_t>());
      return ok();
    }
    if (!v.is_number_integer()) return error(path, "expected an integer, got " + got(v));
    out = v.get<int64_t>();
    return ok();
  }

  Expected<const json*> array(const json& obj, const std::string& path, const char* key,
                              bool required) const {
    auto m = member(obj, path, key, required);
    if (!m) return m.error();
    if (*m && !(*m)->is_array()) return error(sub(path, key), "expected an array, got " + got(**m));
    return *m;
  }

  Expected<void> strings(const json& obj, const std::string& path, const char* key,
                         std::vector<std::string>& out, bool required) const {
    auto a = array(obj, path, key, required);
    if (!a) return a.error();
    if (!*a) return ok();
    for (size_t i = 0; i < (*a)->size(); ++i) {
      const json& v = (**a)[i];
      if (!v.is_string()) return error(idx(sub(path, key), i), "expected a string, got " + got(v));
      out.push_back(v.get<std::string>());
    }
    return ok();
  }

  template <typename E, size_t N>
  Expected<void> enumeration(const json& obj, const std::string& path, const char* key,
                             const EnumName<E> (&table)[N], E& out, bool required) const {
    std::string s;
    bool present = obj.contains(key);
    NPU_TRY(str(obj, path, key, s, required));
    if (!present) return ok();
    for (const auto& e : table) {
      if (s == e.name) {
        out = e.value;
        return ok();
      }
    }
    return error(sub(path, key),
                 "unknown value '" + s + "' (expected one of: " + enum_choices(table) + ")");
  }

 private:
  std::string where_;
  bool allow_unknown_;
};

Expected<void> read_model(const Reader& r, const json& v, ModelInfo& m) {
  const std::string p = "model";
  NPU_TRY(r.object(v, p, {"name", "producer", "version", "source", "description"}));
  NPU_TRY(r.str(v, p, "name", m.name, true));
  NPU_TRY(r.str(v, p, "producer", m.producer, false));
  NPU_TRY(r.str(v, p, "version", m.version, false));
  NPU_TRY(r.str(v, p, "source", m.source, false));
  NPU_TRY(r.str(v, p, "description", m.description, false));
  return ok();
}

Expected<void> read_target(const Reader& r, const json& v, TargetInfo& t) {
  const std::string p = "target";
  NPU_TRY(r.object(v, p, {"isa_version", "features", "sram_size", "device"}));
  auto ver = r.array(v, p, "isa_version", true);
  if (!ver) return ver.error();
  if ((*ver)->size() != 2) return r.error(p + ".isa_version", "expected [major, minor]");
  uint64_t major = 0, minor = 0;
  NPU_TRY(r.u64((**ver)[0], p + ".isa_version[0]", major, 0xffff));
  NPU_TRY(r.u64((**ver)[1], p + ".isa_version[1]", minor, 0xffff));
  t.isa_major = static_cast<uint16_t>(major);
  t.isa_minor = static_cast<uint16_t>(minor);
  std::vector<std::string> features;
  NPU_TRY(r.strings(v, p, "features", features, false));
  t.features = 0;
  for (size_t i = 0; i < features.size(); ++i) {
    bool found = false;
    for (const auto& f : kFeatures) {
      if (features[i] == f.name) {
        t.features |= f.bit;
        found = true;
      }
    }
    if (!found) {
      return r.error(Reader::idx(p + ".features", i),
                     "unknown feature '" + features[i] + "' (expected int8, fp32, transcendental)");
    }
  }
  NPU_TRY(r.u64(v, p, "sram_size", t.sram_size, false));
  NPU_TRY(r.str(v, p, "device", t.device, false));
  return ok();
}

Expected<void> read_tensor(const Reader& r, const json& v, const std::string& p, TensorInfo& t) {
  NPU_TRY(r.object(v, p, {"name", "dtype", "shape", "role", "quantization", "location"}));
  NPU_TRY(r.str(v, p, "name", t.name, true));
  std::string dt;
  NPU_TRY(r.str(v, p, "dtype", dt, true));
  auto d = dtype_from_name(dt);
  if (!d) {
    return r.error(p + ".dtype", "unknown dtype '" + dt +
                                     "' (expected bool, int8, uint8, int16, uint16, int32, "
                                     "uint32, int64, uint64, float16, float32, float64)");
  }
  t.dtype = *d;
  auto shape = r.array(v, p, "shape", true);
  if (!shape) return shape.error();
  for (size_t i = 0; i < (*shape)->size(); ++i) {
    const json& dim = (**shape)[i];
    const std::string dp = Reader::idx(p + ".shape", i);
    if (dim.is_string()) {
      std::string s = dim.get<std::string>();
      if (s.empty()) return r.error(dp, "empty symbolic dimension");
      t.shape.push_back(Dim::named(std::move(s)));
    } else if (dim.is_number_unsigned()) {
      uint64_t n = 0;
      NPU_TRY(r.u64(dim, dp, n, uint64_t{1} << 62));
      t.shape.push_back(Dim::fixed(static_cast<int64_t>(n)));
    } else {
      return r.error(dp, "expected an integer >= 0 or a symbol string, got " + Reader::got(dim));
    }
  }
  NPU_TRY(r.enumeration(v, p, "role", kRoles, t.role, true));

  auto q = r.member(v, p, "quantization", false);
  if (!q) return q.error();
  if (*q) {
    const std::string qp = p + ".quantization";
    Quantization quant;
    NPU_TRY(r.object(**q, qp, {"scale", "zero_point", "axis"}));
    auto scale = r.array(**q, qp, "scale", true);
    if (!scale) return scale.error();
    for (size_t i = 0; i < (*scale)->size(); ++i) {
      const json& s = (**scale)[i];
      if (!s.is_number()) {
        return r.error(Reader::idx(qp + ".scale", i), "expected a number, got " + Reader::got(s));
      }
      quant.scale.push_back(s.get<double>());
    }
    auto zp = r.array(**q, qp, "zero_point", true);
    if (!zp) return zp.error();
    for (size_t i = 0; i < (*zp)->size(); ++i) {
      int64_t z = 0;
      NPU_TRY(r.i64((**zp)[i], Reader::idx(qp + ".zero_point", i), z));
      quant.zero_point.push_back(z);
    }
    auto axis = r.member(**q, qp, "axis", false);
    if (!axis) return axis.error();
    if (*axis) {
      uint64_t a = 0;
      NPU_TRY(r.u64(**axis, qp + ".axis", a, 64));
      quant.axis = static_cast<int32_t>(a);
    }
    t.quantization = std::move(quant);
  }

  auto loc = r.member(v, p, "location", false);
  if (!loc) return loc.error();
  if (*loc) {
    const std::string lp = p + ".location";
    TensorLocation l;
    NPU_TRY(r.object(**loc, lp, {"buffer", "offset", "size", "layout", "strides"}));
    NPU_TRY(r.str(**loc, lp, "buffer", l.buffer, true));
    NPU_TRY(r.u64(**loc, lp, "offset", l.offset, true));
    NPU_TRY(r.u64(**loc, lp, "size", l.size, true));
    NPU_TRY(r.enumeration(**loc, lp, "layout", kLayouts, l.layout, false));
    auto strides = r.array(**loc, lp, "strides", false);
    if (!strides) return strides.error();
    if (*strides) {
      for (size_t i = 0; i < (*strides)->size(); ++i) {
        uint64_t s = 0;
        NPU_TRY(r.u64((**strides)[i], Reader::idx(lp + ".strides", i), s, uint64_t{1} << 62));
        l.strides.push_back(static_cast<int64_t>(s));
      }
    }
    t.location = std::move(l);
  }
  return ok();
}

Expected<void> read_buffer(const Reader& r, const json& v, const std::string& p, BufferInfo& b) {
  NPU_TRY(r.object(v, p, {"name", "kind", "size", "address", "section"}));
  NPU_TRY(r.str(v, p, "name", b.name, true));
  NPU_TRY(r.enumeration(v, p, "kind", kBufferKinds, b.kind, true));
  NPU_TRY(r.u64(v, p, "size", b.size, true));
  NPU_TRY(r.u64(v, p, "address", b.address, true));
  if (v.contains("section")) {
    uint64_t s = 0;
    NPU_TRY(r.u64(v, p, "section", s, true, UINT32_MAX));
    b.section = static_cast<uint32_t>(s);
  }
  return ok();
}

Expected<void> read_segment(const Reader& r, const json& v, const std::string& p, Segment& s) {
  NPU_TRY(r.object(v, p,
                   {"kind", "name", "inputs", "outputs", "command_buffer", "buffers", "layers",
                    "estimated_cycles", "op_type", "attributes"}));
  NPU_TRY(r.enumeration(v, p, "kind", kSegmentKinds, s.kind, true));
  NPU_TRY(r.str(v, p, "name", s.name, false));
  NPU_TRY(r.strings(v, p, "inputs", s.inputs, true));
  NPU_TRY(r.strings(v, p, "outputs", s.outputs, true));
  const bool device = s.kind == SegmentKind::kDevice;
  static constexpr const char* kHostOnly[] = {"op_type", "attributes"};
  static constexpr const char* kDeviceOnly[] = {"command_buffer", "buffers", "layers",
                                                "estimated_cycles"};
  const std::span<const char* const> foreign =
      device ? std::span<const char* const>(kHostOnly) : std::span<const char* const>(kDeviceOnly);
  for (const char* k : foreign) {
    if (v.contains(k)) {
      return r.error(Reader::sub(p, k),
                     std::string("not allowed in a ") + (device ? "device" : "host") + " segment");
    }
  }
  if (device) {
    uint64_t cb = 0;
    NPU_TRY(r.u64(v, p, "command_buffer", cb, true, UINT32_MAX));
    s.command_buffer = static_cast<uint32_t>(cb);
    auto bufs = r.array(v, p, "buffers", true);
    if (!bufs) return bufs.error();
    for (size_t i = 0; i < (*bufs)->size(); ++i) {
      const std::string bp = Reader::idx(p + ".buffers", i);
      const json& u = (**bufs)[i];
      BufferUse use;
      NPU_TRY(r.object(u, bp, {"buffer", "access"}));
      NPU_TRY(r.str(u, bp, "buffer", use.buffer, true));
      NPU_TRY(r.enumeration(u, bp, "access", kAccesses, use.access, true));
      s.buffers.push_back(std::move(use));
    }
    auto layers = r.array(v, p, "layers", false);
    if (!layers) return layers.error();
    if (*layers) {
      for (size_t i = 0; i < (*layers)->size(); ++i) {
        const std::string lp = Reader::idx(p + ".layers", i);
        const json& l = (**layers)[i];
        LayerReport rep;
        NPU_TRY(r.object(
            l, lp, {"name", "op", "engine", "tiles", "macs", "bytes", "cycles", "compute_cycles"}));
        NPU_TRY(r.str(l, lp, "name", rep.name, false));
        NPU_TRY(r.str(l, lp, "op", rep.op, true));
        NPU_TRY(r.str(l, lp, "engine", rep.engine, false));
        NPU_TRY(r.u64(l, lp, "tiles", rep.tiles, false));
        NPU_TRY(r.u64(l, lp, "macs", rep.macs, false));
        NPU_TRY(r.u64(l, lp, "bytes", rep.bytes, false));
        NPU_TRY(r.u64(l, lp, "cycles", rep.cycles, false));
        NPU_TRY(r.u64(l, lp, "compute_cycles", rep.compute_cycles, false));
        s.layers.push_back(std::move(rep));
      }
    }
    NPU_TRY(r.u64(v, p, "estimated_cycles", s.estimated_cycles, false));
  } else {
    NPU_TRY(r.str(v, p, "op_type", s.op_type, true));
    auto attrs = r.member(v, p, "attributes", false);
    if (!attrs) return attrs.error();
    if (*attrs) {
      if (!(*attrs)->is_object()) {
        return r.error(p + ".attributes", "expected an object, got " + Reader::got(**attrs));
      }
      s.attributes = (*attrs)->dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  return ok();
}

Expected<PackageMetadata> from_json(const json& root, const Reader& r) {
  PackageMetadata m;
  NPU_TRY(r.object(root, "",
                   {"model", "target", "tensors", "buffers", "segments", "inputs", "outputs"}));
  for (const char* k : {"model", "target"}) {
    auto v = r.member(root, "", k, true);
    if (!v) return v.error();
  }
  NPU_TRY(read_model(r, root.at("model"), m.model));
  NPU_TRY(read_target(r, root.at("target"), m.target));
  auto tensors = r.array(root, "", "tensors", true);
  if (!tensors) return tensors.error();
  for (size_t i = 0; i < (*tensors)->size(); ++i) {
    TensorInfo t;
    NPU_TRY(read_tensor(r, (**tensors)[i], Reader::idx("tensors", i), t));
    m.tensors.push_back(std::move(t));
  }
  auto buffers = r.array(root, "", "buffers", true);
  if (!buffers) return buffers.error();
  for (size_t i = 0; i < (*buffers)->size(); ++i) {
    BufferInfo b;
    NPU_TRY(read_buffer(r, (**buffers)[i], Reader::idx("buffers", i), b));
    m.buffers.push_back(std::move(b));
  }
  auto segments = r.array(root, "", "segments", true);
  if (!segments) return segments.error();
  for (size_t i = 0; i < (*segments)->size(); ++i) {
    Segment s;
    NPU_TRY(read_segment(r, (**segments)[i], Reader::idx("segments", i), s));
    m.segments.push_back(std::move(s));
  }
  NPU_TRY(r.strings(root, "", "inputs", m.inputs, true));
  NPU_TRY(r.strings(root, "", "outputs", m.outputs, true));
  return m;
}

}  // namespace

Expected<PackageMetadata> metadata_from_json(std::string_view text, std::string_view where,
                                             bool allow_unknown_keys) {
  const std::string w(where);
  if (json_depth(text) > kMaxDepth) {
    return make_error(EINVAL,
                      w + ": json nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  try {
    json root = json::parse(text.begin(), text.end());
    Reader r(where, allow_unknown_keys);
    return from_json(root, r);
  } catch (const json::parse_error& e) {
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    return make_error(EINVAL, w + ": invalid json: " + msg);
  } catch (const std::exception& e) {
    return make_error(EINVAL, w + ": " + e.what());
  }
}

}  // namespace npu::format
