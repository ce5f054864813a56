// validate_package(): the semantic checks of a decoded package (docs/package.md §4): names,
// buffers and their address ranges, tensors (shapes, quantization, placement inside their
// buffer), graph inputs/outputs, segment references and dataflow order, and with a device
// config, command buffers (isa::validate) and their DRAM accesses against the segment's
// buffers.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "npu/format/package.h"
#include "npu/isa/validate.h"
#include "npu_isa.h"

namespace npu::format {
namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string qname(std::string_view s) {
  std::string out = "'";
  for (char c : s.substr(0, 64)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    }
  }
  if (s.size() > 64) out += "...";
  return out + "'";
}

bool valid_section_name(std::string_view s) {
  if (s.empty() || s.size() > section_entry::kNameSize) return false;
  for (char c : s) {
    const bool okc = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '_' || c == '.' || c == '-';
    if (!okc) return false;
  }
  return true;
}

class Checker {
 public:
  Checker(const Package& p, std::string_view name, const isa::DeviceConfig* device)
      : p_(p), m_(p.metadata), name_(name), device_(device) {}

  Expected<void> run() {
    NPU_TRY(check_sections());
    NPU_TRY(check_model());
    NPU_TRY(check_buffers());
    for (size_t i = 0; i < m_.tensors.size(); ++i) NPU_TRY(check_tensor(i));
    NPU_TRY(check_graph_io());
    NPU_TRY(check_segments());
    return ok();
  }

 private:
  Error fail(const std::string& what) const {
    return make_error(EINVAL, std::string(name_) + ": " + what);
  }
  Error meta(const std::string& what) const { return fail("metadata: " + what); }

  std::string tensor_path(size_t i) const {
    return "tensors[" + std::to_string(i) + "] " + qname(m_.tensors[i].name);
  }
  std::string buffer_path(size_t i) const {
    return "buffers[" + std::to_string(i) + "] " + qname(m_.buffers[i].name);
  }
  std::string segment_path(size_t i) const {
    const Segment& s = m_.segments[i];
    std::string label = s.name.empty() ? (s.kind == SegmentKind::kHost ? s.op_type : "") : s.name;
    return "segments[" + std::to_string(i) + "]" + (label.empty() ? "" : " " + qname(label));
  }

  Expected<void> check_sections() {
    std::set<std::string> names;
    for (size_t i = 0; i < p_.sections.size(); ++i) {
      const Section& s = p_.sections[i];
      const std::string where = "section " + std::to_string(i);
      if (!valid_section_name(s.name)) {
        return fail(where + ": invalid name " + qname(s.name) +
                    " (1-24 characters of A-Z a-z 0-9 _ . -)");
      }
      if (!names.insert(s.name).second) return fail(where + ": duplicate name " + qname(s.name));
    }
    return ok();
  }

  Expected<void> check_model() {
    if (m_.model.name.empty()) return meta("model.name: empty");
    if (m_.target.isa_major != NPU_ISA_VERSION_MAJOR ||
        m_.target.isa_minor > NPU_ISA_VERSION_MINOR) {
      return meta("target.isa_version: compiled for isa " + std::to_string(m_.target.isa_major) +
                  "." + std::to_string(m_.target.isa_minor) + ", this library supports " +
                  std::to_string(NPU_ISA_VERSION_MAJOR) + "." +
                  std::to_string(NPU_ISA_VERSION_MINOR));
    }
    if (m_.target.features & ~uint64_t{NPU_FEATURES_ALL}) {
      return meta("target.features: unknown feature bits " + hex(m_.target.features));
    }
    if (device_) {
      if (m_.target.sram_size > device_->sram_size) {
        return meta("target.sram_size: compiled for " + std::to_string(m_.target.sram_size) +
                    " bytes of sram, the device has " + std::to_string(device_->sram_size));
      }
      if (m_.target.features & ~device_->features) {
        return meta("target.features: needs features " + hex(m_.target.features) +
                    " the device lacks (device has " + hex(device_->features) + ")");
      }
    }
    return ok();
  }

  Expected<void> check_buffers() {
    std::map<uint64_t, size_t> by_address;
    for (size_t i = 0; i < m_.buffers.size(); ++i) {
      const BufferInfo& b = m_.buffers[i];
      const std::string path = buffer_path(i);
      if (b.name.empty()) return meta("buffers[" + std::to_string(i) + "]: empty name");
      if (!buffer_index_.emplace(b.name, i).second) return meta(path + ": duplicate buffer name");
      if (b.size == 0) return meta(path + ": size 0");
      if (b.address == 0)
        return meta(path + ": address 0 (buffers live at fixed device addresses)");
      if (b.address > UINT64_MAX - b.size) {
        return meta(path + ": address " + hex(b.address) + " + size " + std::to_string(b.size) +
                    " overflows");
      }
      if (b.kind == BufferKind::kConstants) {
        if (!b.section) return meta(path + ": a constants buffer needs a section");
        if (*b.section >= p_.sections.size()) {
          return meta(path + ".section: index " + std::to_string(*b.section) +
                      " but the package has " + std::to_string(p_.sections.size()) + " sections");
        }
        const Section& s = p_.sections[*b.section];
        if (s.kind != SectionKind::kConstants) {
          return meta(path + ".section: section " + std::to_string(*b.section) + " (" + s.name +
                      ") is " + section_kind_name(s.kind) + ", expected constants");
        }
        if (s.data.size() > b.size) {
          return meta(path + ": section " + std::to_string(*b.section) + " (" + s.name + ") has " +
                      std::to_string(s.data.size()) + " bytes, more than the buffer size " +
                      std::to_string(b.size));
        }
      } else if (b.section) {
        return meta(path + ".section: only constants buffers have a section");
      }
      by_address.emplace(b.address, i);
    }
    // Device address ranges must not overlap (the runtime maps them all at once).
    const BufferInfo* prev = nullptr;
    size_t prev_i = 0;
    for (const auto& [addr, i] : by_address) {
      const BufferInfo& b = m_.buffers[i];
      if (prev && addr < prev->address + prev->size) {
        return meta(buffer_path(i) + ": address range [" + hex(addr) + ", " + hex(addr + b.size) +
                    ") overlaps " + buffer_path(prev_i) + " [" + hex(prev->address) + ", " +
                    hex(prev->address + prev->size) + ")");
      }
      if (prev && addr == prev->address)
        return meta(buffer_path(i) + ": same address as another buffer");
      prev = &b;
      prev_i = i;
    }
    // A duplicate start address collapses in the map; catch it here.
    if (by_address.size() != m_.buffers.size())
      return meta("buffers: two buffers share an address");
    return ok();
  }

  Expected<void> check_tensor(size_t i) {
    const TensorInfo& t = m_.tensors[i];
    const std::string path = tensor_path(i);
    if (t.name.empty()) return meta("tensors[" + std::to_string(i) + "]: empty name");
    if (!tensor_index_.emplace(t.name, i).second) return meta(path + ": duplicate tensor name");
    if (t.shape.size() > 64) return meta(path + ".shape: more than 64 dimensions");
    bool is_static = true;
    uint64_t elems = 1;
    bool overflow = false;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      const Dim& dim = t.shape[d];
      if (dim.symbolic()) {
        is_static = false;
        continue;
      }
      if (dim.size < 0 || dim.size > (int64_t{1} << 62)) {
        return meta(path + ".shape[" + std::to_string(d) + "]: invalid size " +
                    std::to_string(dim.size));
      }
      overflow = overflow || __builtin_mul_overflow(elems, uint64_t(dim.size), &elems);
    }
    const uint64_t esize = dtype_size(t.dtype);
    uint64_t dense = 0;
    overflow = overflow || __builtin_mul_overflow(elems, esize, &dense);
    if (is_static && overflow) return meta(path + ".shape: too many elements");

    if (t.quantization) NPU_TRY(check_quantization(t, path + ".quantization"));

    if (t.role == TensorRole::kConstant && !t.location) {
      return meta(path + ": a constant needs a location in a constants buffer");
    }
    if (!t.location) return ok();
    const TensorLocation& l = *t.location;
    const std::string lp = path + ".location";
    auto b = buffer_index_.find(l.buffer);
    if (b == buffer_index_.end()) return meta(lp + ".buffer: unknown buffer " + qname(l.buffer));
    const BufferInfo& buf = m_.buffers[b->second];
    if (t.role == TensorRole::kConstant && buf.kind != BufferKind::kConstants) {
      return meta(lp + ".buffer: constant in buffer " + qname(buf.name) + " of kind " +
                  buffer_kind_name(buf.kind) + ", expected a constants buffer");
    }
    if (l.offset > buf.size || l.size > buf.size - l.offset) {
      return meta(lp + ": offset " + std::to_string(l.offset) + " + size " +
                  std::to_string(l.size) + " beyond buffer " + qname(buf.name) + " size " +
                  std::to_string(buf.size));
    }
    if ((l.layout == Layout::kNHWC || l.layout == Layout::kNCHW) && t.shape.size() != 4) {
      return meta(lp + ".layout: " + layout_name(l.layout) + " needs a 4-d shape, got " +
                  std::to_string(t.shape.size()) + "-d");
    }
    if (!l.strides.empty() && l.strides.size() != t.shape.size()) {
      return meta(lp + ".strides: " + std::to_string(l.strides.size()) + " strides for a " +
                  std::to_string(t.shape.size()) + "-d shape");
    }
    if (!is_static) return ok();
    uint64_t need = dense;
    if (!l.strides.empty() && elems > 0) {
      // Stored order: NHWC keeps the logical NCHW dims as (N, H, W, C).
      std::vector<int64_t> dims;
      for (const Dim& d : t.shape) dims.push_back(d.size);
      if (l.layout == Layout::kNHWC) dims = {dims[0], dims[2], dims[3], dims[1]};
      need = esize;
      for (size_t d = 0; d < dims.size(); ++d) {
        uint64_t step = 0;
        if (__builtin_mul_overflow(uint64_t(dims[d] - 1), uint64_t(l.strides[d]), &step) ||
            __builtin_add_overflow(need, step, &need)) {
          return meta(lp + ".strides: extent overflows");
        }
      }
    }
    if (need > l.size) {
      return meta(lp + ".size: " + std::to_string(l.size) + " bytes, the tensor needs " +
                  std::to_string(need));
    }
    return ok();
  }

  Expected<void> check_quantization(const TensorInfo& t, const std::string& qp) {
    const Quantization& q = *t.quantization;
    if (q.scale.empty()) return meta(qp + ".scale: empty");
    if (q.zero_point.size() != q.scale.size()) {
      return meta(qp + ".zero_point: " + std::to_string(q.zero_point.size()) + " values for " +
                  std::to_string(q.scale.size()) + " scales");
    }
    for (size_t k = 0; k < q.scale.size(); ++k) {
      if (!std::isfinite(q.scale[k]) || q.scale[k] <= 0) {
        return meta(qp + ".scale[" + std::to_string(k) + "]: must be finite and > 0");
      }
    }
    int64_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
    if (t.dtype == DType::kInt8) lo = -128, hi = 127;
    if (t.dtype == DType::kUint8) lo = 0, hi = 255;
    if (t.dtype == DType::kInt16) lo = -32768, hi = 32767;
    if (t.dtype == DType::kUint16) lo = 0, hi = 65535;
    for (size_t k = 0; k < q.zero_point.size(); ++k) {
      if (q.zero_point[k] < lo || q.zero_point[k] > hi) {
        return meta(qp + ".zero_point[" + std::to_string(k) +
                    "]: " + std::to_string(q.zero_point[k]) + " outside [" + std::to_string(lo) +
                    ", " + std::to_string(hi) + "] of " + dtype_name(t.dtype));
      }
    }
    if (!q.axis) {
      if (q.scale.size() != 1) {
        return meta(qp + ": " + std::to_string(q.scale.size()) +
                    " scales without an axis (per-tensor quantization has one)");
      }
      return ok();
    }
    if (*q.axis < 0 || size_t(*q.axis) >= t.shape.size()) {
      return meta(qp + ".axis: " + std::to_string(*q.axis) + " outside a " +
                  std::to_string(t.shape.size()) + "-d shape");
    }
    const Dim& d = t.shape[size_t(*q.axis)];
    if (!d.symbolic() && uint64_t(d.size) != q.scale.size()) {
      return meta(qp + ": " + std::to_string(q.scale.size()) + " scales for axis " +
                  std::to_string(*q.axis) + " of size " + std::to_string(d.size));
    }
    return ok();
  }

  Expected<void> check_graph_io() {
    auto check_list = [&](const std::vector<std::string>& list, const char* key,
                          TensorRole role) -> Expected<void> {
      std::set<std::string> seen;
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string path = std::string(key) + "[" + std::to_string(i) + "]";
        auto it = tensor_index_.find(list[i]);
        if (it == tensor_index_.end()) return meta(path + ": unknown tensor " + qname(list[i]));
        if (!seen.insert(list[i]).second)
          return meta(path + ": " + qname(list[i]) + " listed twice");
        const TensorInfo& t = m_.tensors[it->second];
        if (t.role != role) {
          return meta(path + ": tensor " + qname(list[i]) + " has role " + role_name(t.role) +
                      ", expected " + role_name(role));
        }
      }
      for (size_t i = 0; i < m_.tensors.size(); ++i) {
        if (m_.tensors[i].role == role && !seen.count(m_.tensors[i].name)) {
          return meta(tensor_path(i) + ": role " + role_name(role) + " but not listed in " + key);
        }
      }
      return ok();
    };
    NPU_TRY(check_list(m_.inputs, "inputs", TensorRole::kInput));
    NPU_TRY(check_list(m_.outputs, "outputs", TensorRole::kOutput));
    if (m_.outputs.empty()) return meta("outputs: the model has no outputs");
    return ok();
  }

  Expected<void> check_segments() {
    std::set<std::string> available;
    for (const auto& t : m_.tensors) {
      if (t.role == TensorRole::kInput || t.role == TensorRole::kConstant) available.insert(t.name);
    }
    for (size_t i = 0; i < m_.segments.size(); ++i) {
      const Segment& s = m_.segments[i];
      const std::string path = segment_path(i);
      for (size_t k = 0; k < s.inputs.size(); ++k) {
        const std::string ip = path + ".inputs[" + std::to_string(k) + "]";
        if (s.kind == SegmentKind::kHost && s.inputs[k].empty()) continue;  // omitted optional
        if (!tensor_index_.count(s.inputs[k]))
          return meta(ip + ": unknown tensor " + qname(s.inputs[k]));
        if (!available.count(s.inputs[k])) {
          return meta(ip + ": tensor " + qname(s.inputs[k]) +
                      " is not a graph input, a constant or an output of an earlier segment");
        }
      }
      for (size_t k = 0; k < s.outputs.size(); ++k) {
        const std::string op = path + ".outputs[" + std::to_string(k) + "]";
        if (s.kind == SegmentKind::kHost && s.outputs[k].empty()) continue;  // omitted optional
        auto it = tensor_index_.find(s.outputs[k]);
        if (it == tensor_index_.end()) return meta(op + ": unknown tensor " + qname(s.outputs[k]));
        const TensorInfo& t = m_.tensors[it->second];
        if (t.role == TensorRole::kInput || t.role == TensorRole::kConstant) {
          return meta(op + ": writes " + role_name(t.role) + " tensor " + qname(t.name));
        }
        if (!available.insert(t.name).second) {
          return meta(op + ": tensor " + qname(t.name) +
                      " is already produced by an earlier segment");
        }
      }
      if (s.kind == SegmentKind::kDevice) {
        NPU_TRY(check_device_segment(s, path));
      } else {
        NPU_TRY(check_host_segment(s, path));
      }
    }
    for (size_t i = 0; i < m_.outputs.size(); ++i) {
      if (!available.count(m_.outputs[i])) {
        return meta("outputs[" + std::to_string(i) + "]: tensor " + qname(m_.outputs[i]) +
                    " is not produced by any segment");
      }
    }
    return ok();
  }

  Expected<void> check_host_segment(const Segment& s, const std::string& path) {
    if (s.op_type.empty()) return meta(path + ".op_type: empty");
    if (s.outputs.empty()) return meta(path + ".outputs: a host segment needs an output");
    size_t depth = 0, max_depth = 0;
    for (char c : s.attributes) {
      if (c == '{' || c == '[') max_depth = std::max(max_depth, ++depth);
      if ((c == '}' || c == ']') && depth) --depth;
    }
    if (max_depth > 64) return meta(path + ".attributes: nested too deeply");
    const auto attrs = nlohmann::json::parse(s.attributes, nullptr, false);
    if (attrs.is_discarded() || !attrs.is_object()) {
      return meta(path + ".attributes: not a json object");
    }
    return ok();
  }

  Expected<void> check_device_segment(const Segment& s, const std::string& path) {
    if (s.command_buffer >= p_.sections.size()) {
      return meta(path + ".command_buffer: section " + std::to_string(s.command_buffer) +
                  " but the package has " + std::to_string(p_.sections.size()) + " sections");
    }
    const Section& cb = p_.sections[s.command_buffer];
    const std::string cbw = path + ": command buffer (section " + std::to_string(s.command_buffer) +
                            " " + qname(cb.name) + ")";
    if (cb.kind != SectionKind::kCommandBuffer) {
      return meta(path + ".command_buffer: section " + std::to_string(s.command_buffer) + " " +
                  qname(cb.name) + " is " + section_kind_name(cb.kind) +
                  ", expected command_buffer");
    }
    std::map<std::string, Access> uses;
    for (size_t k = 0; k < s.buffers.size(); ++k) {
      const std::string bp = path + ".buffers[" + std::to_string(k) + "]";
      if (!buffer_index_.count(s.buffers[k].buffer)) {
        return meta(bp + ": unknown buffer " + qname(s.buffers[k].buffer));
      }
      if (!uses.emplace(s.buffers[k].buffer, s.buffers[k].access).second) {
        return meta(bp + ": buffer " + qname(s.buffers[k].buffer) + " listed twice");
      }
      const BufferInfo& b = m_.buffers[buffer_index_.at(s.buffers[k].buffer)];
      if (b.kind == BufferKind::kConstants &&
          (uint8_t(s.buffers[k].access) & uint8_t(Access::kWrite))) {
        return meta(bp + ": writes constants buffer " + qname(b.name));
      }
    }
    // Tensors a device segment consumes or produces must sit in buffers it declares.
    auto check_io = [&](const std::vector<std::string>& names, const char* key,
                        Access need) -> Expected<void> {
      for (size_t k = 0; k < names.size(); ++k) {
        const TensorInfo& t = m_.tensors[tensor_index_.at(names[k])];
        if (!t.location) {
          return meta(path + "." + key + "[" + std::to_string(k) + "]: tensor " + qname(t.name) +
                      " has no device location");
        }
        auto u = uses.find(t.location->buffer);
        if (u == uses.end() || (uint8_t(u->second) & uint8_t(need)) == 0) {
          return meta(path + "." + key + "[" + std::to_string(k) + "]: tensor " + qname(t.name) +
                      " lives in buffer " + qname(t.location->buffer) +
                      " which the segment does not " + (need == Access::kRead ? "read" : "write"));
        }
      }
      return ok();
    };
    NPU_TRY(check_io(s.inputs, "inputs", Access::kRead));
    NPU_TRY(check_io(s.outputs, "outputs", Access::kWrite));

    if (cb.data.size() < sizeof(npu_cmdbuf_header)) {
      return meta(cbw + ": " + std::to_string(cb.data.size()) + " bytes, shorter than its header");
    }
    npu_cmdbuf_header h;
    std::memcpy(&h, cb.data.data(), sizeof(h));
    if (h.magic != NPU_ISA_MAGIC) return meta(cbw + ": bad magic " + hex(h.magic));
    if (h.version_major != NPU_ISA_VERSION_MAJOR) {
      return meta(cbw + ": isa version " + std::to_string(h.version_major) + "." +
                  std::to_string(h.version_minor) + " unsupported");
    }
    if (h.size != cb.data.size()) {
      return meta(cbw + ": header size " + std::to_string(h.size) + " but the section has " +
                  std::to_string(cb.data.size()) + " bytes");
    }
    if (h.num_cmds > NPU_MAX_CMDS) {
      return meta(cbw + ": " + std::to_string(h.num_cmds) + " commands, more than the " +
                  std::to_string(NPU_MAX_CMDS) + " a command buffer may hold");
    }
    total_commands_ += h.num_cmds;  // a section run by several segments counts each time
    if (total_commands_ > kMaxPackageCommands) {
      return meta(cbw + ": the package's device segments hold more than " +
                  std::to_string(kMaxPackageCommands) + " commands in all");
    }
    if (h.required_features & ~m_.target.features) {
      return meta(cbw + ": requires features " + hex(h.required_features) +
                  " not declared in target.features " + hex(m_.target.features));
    }
    if (!device_) return ok();

    auto program = isa::validate(cb.data, *device_);
    if (!program) return meta(cbw + ": " + program.error().message);
    for (const isa::DramAccess& a : program->dram) {
      if (a.end <= a.begin) continue;
      bool covered = false;
      for (const auto& [bname, access] : uses) {
        const BufferInfo& b = m_.buffers[buffer_index_.at(bname)];
        if (a.begin >= b.address && a.end <= b.address + b.size) {
          if ((a.access & uint8_t(access)) != a.access) {
            return meta(cbw + ": command " + std::to_string(a.cmd_index) + " field " + a.field +
                        ": " + ((a.access & isa::kWrite) ? "writes" : "reads") + " buffer " +
                        qname(bname) + " which the segment declares " + access_name(access));
          }
          covered = true;
          break;
        }
      }
      if (!covered) {
        return meta(cbw + ": command " + std::to_string(a.cmd_index) + " field " + a.field + ": " +
                    ((a.access & isa::kWrite) ? "writes" : "reads") + " [" + hex(a.begin) + ", " +
                    hex(a.end) + ") outside the segment's buffers");
      }
    }
    return ok();
  }

  const Package& p_;
  const PackageMetadata& m_;
  std::string_view name_;
  const isa::DeviceConfig* device_;
  std::map<std::string, size_t> buffer_index_;
  std::map<std::string, size_t> tensor_index_;
  uint64_t total_commands_ = 0;
};

}  // namespace

Expected<void> validate_package(const Package& p, std::string_view name,
                                const isa::DeviceConfig* device) {
  return Checker(p, name, device).run();
}

}  // namespace npu::format
