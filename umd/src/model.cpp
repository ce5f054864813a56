// Model: load a package, bind inputs, run device and host segments in order (npu/model.h).
#include "npu/model.h"

#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <set>

#include "npu/command_buffer.h"
#include "npu/ops/ops.h"
#include "npu/job_report.h"

namespace npu {
namespace {

using format::DType;
using format::NpyArray;
using format::TensorInfo;
using format::TensorLocation;
using Shape = std::vector<int64_t>;
using Bindings = std::map<std::string, int64_t>;

std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string dims_text(const std::vector<format::Dim>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    out += (i ? ", " : "") + (s[i].symbolic() ? s[i].symbol : std::to_string(s[i].size));
  }
  return out + "]";
}

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string segment_label(const format::Segment& s, size_t index) {
  std::string name = s.name.empty() ? std::to_string(index) : s.name;
  if (s.kind == format::SegmentKind::kHost)
    return "segment '" + name + "' (host " + s.op_type + ")";
  return "segment '" + name + "'";
}

/// Byte offset (inside the location) of each logical element, in C order of `shape`.
/// Plain/NCHW: stored order = logical order; NHWC: a 4-d NCHW tensor stored channels-last.
Expected<std::vector<uint64_t>> element_offsets(const TensorInfo& t, const Shape& shape) {
  const TensorLocation& loc = *t.location;
  const uint64_t es = format::dtype_size(t.dtype);
  const size_t rank = shape.size();
  // Stored-order dims and which logical dim each stored dim is.
  std::vector<size_t> stored_to_logical(rank);
  for (size_t i = 0; i < rank; ++i) stored_to_logical[i] = i;
  if (loc.layout == format::Layout::kNHWC) {
    if (rank != 4)
      return make_error(EINVAL, "layout NHWC needs a 4-d tensor, got rank " + std::to_string(rank));
    stored_to_logical = {0, 2, 3, 1};
  }
  std::vector<int64_t> stored_strides(rank);
  if (!loc.strides.empty()) {
    if (loc.strides.size() != rank) return make_error(EINVAL, "strides do not match the rank");
    stored_strides = loc.strides;
  } else {
    int64_t acc = static_cast<int64_t>(es);
    for (size_t i = rank; i-- > 0;) {
      stored_strides[i] = acc;
      acc *= shape[stored_to_logical[i]];
    }
  }
  std::vector<int64_t> logical_strides(rank);
  for (size_t i = 0; i < rank; ++i) logical_strides[stored_to_logical[i]] = stored_strides[i];
  const int64_t n = count(shape);
  std::vector<uint64_t> offsets(static_cast<size_t>(n));
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t e = 0; e < n; ++e) {
    if (off < 0 || static_cast<uint64_t>(off) + es > loc.size) {
      return make_error(ERANGE, "element " + std::to_string(e) + " at byte " + std::to_string(off) +
                                    " beyond the location's " + std::to_string(loc.size) +
                                    " bytes (shape " + shape_text(shape) + ")");
    }
    offsets[static_cast<size_t>(e)] = static_cast<uint64_t>(off);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) {
        off += logical_strides[d];
        break;
      }
      off -= logical_strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
  return offsets;
}

bool dense_plain(const TensorInfo& t) {
  return t.location->strides.empty() && t.location->layout != format::Layout::kNHWC;
}

}  // namespace

struct Model::Impl {
  Model& m;
  Bindings bindings;
  std::map<std::string, NpyArray> values;  // host copies, by tensor name

  std::string where(const std::string& what) const { return m.name_ + ": " + what; }

  Expected<Shape> resolve(const TensorInfo& t) const {
    Shape s;
    for (const auto& d : t.shape) {
      if (!d.symbolic()) {
        s.push_back(d.size);
        continue;
      }
      auto it = bindings.find(d.symbol);
      if (it == bindings.end()) {
        return make_error(EINVAL, where("tensor '" + t.name + "': symbolic dim '" + d.symbol +
                                        "' is not bound by any input"));
      }
      s.push_back(it->second);
    }
    return s;
  }

  Expected<void> write_tensor(const TensorInfo& t, const NpyArray& a) {
    const TensorLocation& loc = *t.location;
    Buffer& buf = m.buffers_.at(loc.buffer);
    const uint64_t es = format::dtype_size(t.dtype);
    auto err = [&](const Error& e) {
      return make_error(
          e.code, where("tensor '" + t.name + "' in buffer '" + loc.buffer + "': " + e.message));
    };
    if (dense_plain(t)) {
      if (a.data.size() > loc.size) {
        return err(make_error(ERANGE, std::to_string(a.data.size()) +
                                          " bytes do not fit the location's " +
                                          std::to_string(loc.size)));
      }
      if (auto w = buf.write(loc.offset, a.data); !w) return err(w.error());
      return ok();
    }
    auto offsets = element_offsets(t, a.shape);
    if (!offsets) return err(offsets.error());
    auto bytes = buf.map();
    if (!bytes) return err(bytes.error());
    if (loc.offset + loc.size > bytes->size())
      return err(make_error(ERANGE, "location beyond the buffer"));
    std::byte* base = bytes->data() + loc.offset;
    for (size_t e = 0; e < offsets->size(); ++e) {
      std::memcpy(base + (*offsets)[e], a.data.data() + e * es, es);
    }
    return ok();
  }

  Expected<NpyArray> read_tensor(const TensorInfo& t) {
    auto shape = resolve(t);
    if (!shape) return shape.error();
    const TensorLocation& loc = *t.location;
    Buffer& buf = m.buffers_.at(loc.buffer);
    NpyArray a = NpyArray::zeros(t.dtype, *shape);
    const uint64_t es = format::dtype_size(t.dtype);
    auto err = [&](const Error& e) {
      return make_error(
          e.code, where("tensor '" + t.name + "' in buffer '" + loc.buffer + "': " + e.message));
    };
    if (dense_plain(t)) {
      if (a.data.size() > loc.size) {
        return err(make_error(ERANGE, "shape " + shape_text(*shape) + " needs " +
                                          std::to_string(a.data.size()) +
                                          " bytes, the location has " + std::to_string(loc.size)));
      }
      if (auto r = buf.read(loc.offset, a.data); !r) return err(r.error());
      return a;
    }
    auto offsets = element_offsets(t, *shape);
    if (!offsets) return err(offsets.error());
    auto bytes = buf.map();
    if (!bytes) return err(bytes.error());
    if (loc.offset + loc.size > bytes->size())
      return err(make_error(ERANGE, "location beyond the buffer"));
    const std::byte* base = bytes->data() + loc.offset;
    for (size_t e = 0; e < offsets->size(); ++e) {
      std::memcpy(a.data.data() + e * es, base + (*offsets)[e], es);
    }
    return a;
  }

  /// The current value of a tensor: its host copy, else read from its location.
  Expected<const NpyArray*> value(const std::string& name) {
    if (auto it = values.find(name); it != values.end()) return &it->second;
    const TensorInfo* t = m.package_.metadata.find_tensor(name);
    if (!t) return make_error(EINVAL, where("unknown tensor '" + name + "'"));
    if (!t->location) {
      return make_error(
          EINVAL, where("tensor '" + name + "' has no value (no location, not produced yet)"));
    }
    auto a = read_tensor(*t);
    if (!a) return a.error();
    return &(values[name] = std::move(*a));
  }

  Expected<void> bind_input(const TensorDesc& d, const NpyArray& a) {
    auto err = [&](const std::string& what) {
      return make_error(EINVAL, where("input '" + d.name + "': " + what));
    };
    if (auto c = format::check_npy(a, "input '" + d.name + "'"); !c) return err(c.error().message);
    if (a.dtype != d.dtype) {
      return err(std::string("dtype ") + format::dtype_name(a.dtype) + ", expected " +
                 format::dtype_name(d.dtype));
    }
    if (a.shape.size() != d.shape.size()) {
      return err("shape " + shape_text(a.shape) + ", expected " + dims_text(d.shape));
    }
    const TensorInfo* t = m.package_.metadata.find_tensor(d.name);
    for (size_t i = 0; i < d.shape.size(); ++i) {
      const format::Dim& dim = d.shape[i];
      if (!dim.symbolic()) {
        if (a.shape[i] != dim.size) {
          return err("shape " + shape_text(a.shape) + ", expected " + dims_text(d.shape));
        }
        continue;
      }
      auto [it, fresh] = bindings.emplace(dim.symbol, a.shape[i]);
      if (!fresh && it->second != a.shape[i]) {
        return err("dim '" + dim.symbol + "' is " + std::to_string(a.shape[i]) +
                   " but another input bound it to " + std::to_string(it->second));
      }
      if (t && t->location && dense_plain(*t) && fresh) {
        // The device code was compiled for the size the location holds.
        int64_t rest = static_cast<int64_t>(format::dtype_size(t->dtype));
        for (size_t j = 0; j < d.shape.size(); ++j) {
          if (j != i) rest *= d.shape[j].symbolic() ? 1 : d.shape[j].size;
        }
        const int64_t compiled = rest > 0 ? static_cast<int64_t>(t->location->size) / rest : 0;
        if (compiled != a.shape[i]) {
          return err((i == 0 ? "batch " : "dim '" + dim.symbol + "' ") +
                     std::to_string(a.shape[i]) + " but the package was compiled for " +
                     std::to_string(compiled));
        }
      }
    }
    return ok();
  }

  Expected<void> run_device(const format::Segment& s, size_t index, const RunOptions& o,
                            SegmentStats& st) {
    const std::string label = segment_label(s, index);
    const auto& section = m.package_.sections.at(s.command_buffer);
    auto cached = m.cmdbufs_.find(index);
    if (cached == m.cmdbufs_.end()) {
      CommandBuffer built = CommandBuffer::from_bytes(*m.device_, section.data);
      for (const auto& use : s.buffers) {
        const Access access = use.access == format::Access::kRead    ? Access::kRead
                              : use.access == format::Access::kWrite ? Access::kWrite
                                                                     : Access::kReadWrite;
        built.use(m.buffers_.at(use.buffer), access);
      }
      if (auto f = built.finalize(); !f)
        return make_error(f.error().code, where(label + ": " + f.error().message));
      cached = m.cmdbufs_.emplace(index, std::move(built)).first;
    }
    CommandBuffer& cb = cached->second;
    st.commands = split_commands(section.data);
    if (!m.context_) {
      auto ctx = Context::create(*m.device_);
      if (!ctx) return make_error(ctx.error().code, where(label + ": " + ctx.error().message));
      m.context_.emplace(std::move(*ctx));
    }
    auto job = m.context_->submit(cb);
    if (!job) return make_error(job.error().code, where(label + ": " + job.error().message));
    auto res = job->wait(o.timeout);
    if (!res) {
      m.context_.reset();
      return make_error(res.error().code, where(label + ": wait: " + res.error().message));
    }
    st.cycles = res->cycles;
    if (!res->ok()) {
      m.context_.reset();  // banned
      std::string what = std::string("job ") + to_string(res->status);
      if (res->fault.kind != DRM_NPU_FAULT_NONE)
        what += ": " + describe_fault(res->fault, st.commands);
      return make_error(EIO, where(label + ": " + what));
    }
    if (o.collect_profile && m.device_->params().has(DRM_NPU_CAP_JOB_PROFILE)) {
      auto p = job->profile();
      if (p) st.profile = std::move(*p);
    }
    // The device wrote its outputs: drop stale host copies.
    for (const auto& out : s.outputs) values.erase(out);
    return ok();
  }

  Expected<void> run_host(const format::Segment& s, size_t index) {
    const std::string label = segment_label(s, index);
    std::vector<const NpyArray*> ins;
    for (const auto& name : s.inputs) {
      if (name.empty()) {  // omitted optional input
        ins.push_back(nullptr);
        continue;
      }
      auto v = value(name);
      if (!v) return v.error();
      ins.push_back(*v);
    }
    auto outs = ops::run(s.op_type, s.attributes, ins, s.outputs.size());
    if (!outs) return make_error(outs.error().code, where(label + ": " + outs.error().message));
    for (size_t i = 0; i < s.outputs.size(); ++i) {
      const TensorInfo* t = m.package_.metadata.find_tensor(s.outputs[i]);
      NpyArray& a = (*outs)[i];
      if (t) {
        if (a.dtype != t->dtype) {
          return make_error(
              EINVAL, where(label + ": output '" + t->name + "' is " + format::dtype_name(a.dtype) +
                            ", the package says " + format::dtype_name(t->dtype)));
        }
        bool shape_ok = a.shape.size() == t->shape.size();
        for (size_t d = 0; shape_ok && d < a.shape.size(); ++d) {
          const auto& dim = t->shape[d];
          if (!dim.symbolic()) {
            shape_ok = dim.size == a.shape[d];
          } else if (auto [it, fresh] = bindings.emplace(dim.symbol, a.shape[d]); !fresh) {
            shape_ok = it->second == a.shape[d];
          }
        }
        if (!shape_ok) {
          return make_error(
              EINVAL, where(label + ": output '" + t->name + "' has shape " + shape_text(a.shape) +
                            ", the package says " + dims_text(t->shape)));
        }
        if (t->location) NPU_TRY(write_tensor(*t, a));
      }
      values[s.outputs[i]] = std::move(a);
    }
    return ok();
  }
};

Expected<Model> Model::load(const Device& device, const std::string& path) {
  auto pkg = format::read_package(path);  // the device-aware checks run once, in load()
  if (!pkg) return pkg.error();
  return load(device, std::move(*pkg), path);
}

Expected<Model> Model::load(const Device& device, format::Package package, std::string name) {
  if (auto v = format::validate_package(package, name, &device.config()); !v) return v.error();
  Model m;
  m.device_ = device;
  m.name_ = std::move(name);
  m.package_ = std::move(package);
  const auto& md = m.package_.metadata;
  const auto& va = device.params().va_range;
  for (const auto& b : md.buffers) {
    const std::string what = m.name_ + ": buffer '" + b.name + "'";
    if (va) {
      if (va->align && b.address % va->align != 0) {
        return make_error(EINVAL, fmt::format("{}: address {:#x} is not aligned to the device's "
                                              "VA alignment {:#x}",
                                              what, b.address, va->align));
      }
      if (b.address < va->start || b.address + b.size > va->end || b.address + b.size < b.address) {
        return make_error(EINVAL,
                          fmt::format("{}: [{:#x}, {:#x}) is outside the device's VA "
                                      "range [{:#x}, {:#x})",
                                      what, b.address, b.address + b.size, va->start, va->end));
      }
    }
    BufferOptions opts;
    opts.fixed_va = b.address;
    opts.device_read_only = b.kind == format::BufferKind::kConstants;
    auto buf = Buffer::allocate(device, b.size, opts);
    if (!buf) return make_error(buf.error().code, what + ": " + buf.error().message);
    if (b.kind == format::BufferKind::kConstants && b.section) {
      const auto& data = m.package_.sections.at(*b.section).data;
      if (!data.empty()) {
        if (auto w = buf->write(0, data); !w)
          return make_error(w.error().code, what + ": " + w.error().message);
      }
    }
    // Map now: the host copies in and out of every buffer at each run.
    if (auto mp = buf->map(); !mp)
      return make_error(mp.error().code, what + ": " + mp.error().message);
    m.buffers_.emplace(b.name, std::move(*buf));
  }
  auto ctx = Context::create(device);
  if (!ctx) return make_error(ctx.error().code, m.name_ + ": " + ctx.error().message);
  m.context_.emplace(std::move(*ctx));
  for (const auto& n : md.inputs) {
    const TensorInfo* t = md.find_tensor(n);
    m.inputs_.push_back({n, t->dtype, t->shape});
  }
  for (const auto& n : md.outputs) {
    const TensorInfo* t = md.find_tensor(n);
    m.outputs_.push_back({n, t->dtype, t->shape});
  }
  return m;
}

namespace {

/// Rows [first, first + count) of a along dim 0.
NpyArray slice_rows(const NpyArray& a, int64_t first, int64_t count) {
  NpyArray out = a;
  out.shape[0] = count;
  const size_t row = a.data.size() / static_cast<size_t>(a.shape[0]);
  out.data.assign(
      a.data.begin() + static_cast<ptrdiff_t>(row * static_cast<size_t>(first)),
      a.data.begin() + static_cast<ptrdiff_t>(row * static_cast<size_t>(first + count)));
  return out;
}

}  // namespace

int64_t Model::compiled_batch(const std::map<std::string, format::NpyArray>& inputs,
                              int64_t* given) const {
  // The batch the device code was compiled for, read from the first input whose leading dim
  // is symbolic and which lives in a device buffer.
  for (const auto& d : inputs_) {
    if (d.shape.empty() || !d.shape[0].symbolic()) continue;
    const TensorInfo* t = package_.metadata.find_tensor(d.name);
    auto it = inputs.find(d.name);
    if (!t || !t->location || !dense_plain(*t) || it == inputs.end() || it->second.shape.empty())
      continue;
    int64_t rest = static_cast<int64_t>(format::dtype_size(t->dtype));
    for (size_t j = 1; j < d.shape.size(); ++j) rest *= d.shape[j].symbolic() ? 1 : d.shape[j].size;
    if (rest <= 0) continue;
    *given = it->second.shape[0];
    return static_cast<int64_t>(t->location->size) / rest;
  }
  return 0;
}

Expected<std::map<std::string, format::NpyArray>> Model::run(
    const std::map<std::string, format::NpyArray>& inputs, const RunOptions& options) {
  // A dynamic batch larger than the compiled one runs slice by slice (per-batch execution).
  int64_t given = 0;
  const int64_t compiled = compiled_batch(inputs, &given);
  if (compiled <= 0 || given == compiled || given % compiled != 0 || given == 0)
    return run_once(inputs, options);
  const int64_t t0 = monotonic_ns();
  std::map<std::string, NpyArray> outputs;
  RunStats total;
  for (int64_t first = 0; first < given; first += compiled) {
    std::map<std::string, NpyArray> slice;
    for (const auto& [name, a] : inputs) {
      const auto* d = [&]() -> const TensorDesc* {
        for (const auto& x : inputs_) {
          if (x.name == name) return &x;
        }
        return nullptr;
      }();
      const bool batched = d && !d->shape.empty() && d->shape[0].symbolic() && !a.shape.empty() &&
                           a.shape[0] == given;
      slice[name] = batched ? slice_rows(a, first, compiled) : a;
    }
    auto r = run_once(slice, options);
    if (!r) {
      for (auto& seg : stats_.segments) total.segments.push_back(std::move(seg));
      total.device_cycles += stats_.device_cycles;
      total.wall_ns = static_cast<uint64_t>(monotonic_ns() - t0);
      stats_ = std::move(total);  // the stats up to the failure
      return make_error(r.error().code, r.error().message + " (batch rows " +
                                            std::to_string(first) + ".." +
                                            std::to_string(first + compiled - 1) + ")");
    }
    for (auto& [name, a] : *r) {
      const bool batched = std::any_of(outputs_.begin(), outputs_.end(), [&](const TensorDesc& d) {
        return d.name == name && !d.shape.empty() && d.shape[0].symbolic();
      });
      if (!batched) {
        return make_error(EINVAL, name_ + ": output '" + name +
                                      "' has no dynamic batch dim: run a batch of " +
                                      std::to_string(compiled) + " at a time");
      }
      auto [it, fresh] = outputs.try_emplace(name, std::move(a));
      if (fresh) continue;
      if (a.shape.empty() || it->second.shape.size() != a.shape.size()) {
        return make_error(EINVAL, name_ + ": output '" + name +
                                      "' has no batch dim to concatenate per-batch results");
      }
      it->second.shape[0] += a.shape[0];
      it->second.data.insert(it->second.data.end(), a.data.begin(), a.data.end());
    }
    total.device_cycles += stats_.device_cycles;
    for (size_t e = 0; e < total.busy_cycles.size(); ++e)
      total.busy_cycles[e] += stats_.busy_cycles[e];
    total.has_profile = first == 0 ? stats_.has_profile : total.has_profile && stats_.has_profile;
    for (auto& seg : stats_.segments) total.segments.push_back(std::move(seg));
  }
  total.wall_ns = static_cast<uint64_t>(monotonic_ns() - t0);
  stats_ = std::move(total);
  return outputs;
}

Expected<std::map<std::string, format::NpyArray>> Model::run_once(
    const std::map<std::string, format::NpyArray>& inputs, const RunOptions& options) {
  const int64_t t0 = monotonic_ns();
  stats_ = {};
  Impl impl{*this, {}, {}};
  try {
    for (const auto& [name, a] : inputs) {
      if (!package_.metadata.find_tensor(name) ||
          std::find(package_.metadata.inputs.begin(), package_.metadata.inputs.end(), name) ==
              package_.metadata.inputs.end()) {
        std::string names;
        for (const auto& d : inputs_) names += (names.empty() ? "" : ", ") + d.name;
        return make_error(EINVAL, name_ + ": unknown input '" + name + "' (inputs: " + names + ")");
      }
    }
    for (const auto& d : inputs_) {
      auto it = inputs.find(d.name);
      if (it == inputs.end()) return make_error(EINVAL, name_ + ": missing input '" + d.name + "'");
      NPU_TRY(impl.bind_input(d, it->second));
    }
    for (const auto& d : inputs_) {
      const NpyArray& a = inputs.at(d.name);
      const TensorInfo* t = package_.metadata.find_tensor(d.name);
      if (t->location) NPU_TRY(impl.write_tensor(*t, a));
      impl.values[d.name] = a;
    }
    const auto& segs = package_.metadata.segments;
    bool all_profiles = true;
    for (size_t i = 0; i < segs.size(); ++i) {
      const auto& s = segs[i];
      SegmentStats st;
      st.name = s.name.empty() ? std::to_string(i) : s.name;
      st.kind = s.kind;
      st.op_type = s.op_type;
      const int64_t s0 = monotonic_ns();
      Expected<void> r = s.kind == format::SegmentKind::kDevice ? impl.run_device(s, i, options, st)
                                                                : impl.run_host(s, i);
      st.host_ns = static_cast<uint64_t>(monotonic_ns() - s0);
      if (s.kind == format::SegmentKind::kDevice) {
        stats_.device_cycles += st.cycles;
        if (st.profile) {
          for (size_t e = 0; e < stats_.busy_cycles.size(); ++e) {
            stats_.busy_cycles[e] += st.profile->busy_cycles[e];
          }
        } else {
          all_profiles = false;
        }
      }
      stats_.segments.push_back(std::move(st));
      stats_.wall_ns = static_cast<uint64_t>(monotonic_ns() - t0);
      if (!r) return r.error();
    }
    stats_.has_profile = all_profiles;
    std::map<std::string, NpyArray> out;
    for (const auto& d : outputs_) {
      auto v = impl.value(d.name);  // reads the output back when only the device has it
      if (!v) return v.error();
      out[d.name] = std::move(impl.values.at(d.name));
    }
    stats_.wall_ns = static_cast<uint64_t>(monotonic_ns() - t0);
    return out;
  } catch (const std::exception& e) {
    return make_error(ENOMEM, name_ + ": run: " + e.what());
  }
}

JobProfile RunStats::merged_profile() const {
  return merged_profile_with_host(0, nullptr);
}

JobProfile RunStats::merged_profile_with_host(uint64_t clock_hz,
                                              std::vector<HostSpan>* spans) const {
  JobProfile p;
  uint32_t cmd_base = 0;
  uint64_t host_cycles = 0;  // host time before the current point, in cycles
  for (const auto& s : segments) {
    if (s.kind != format::SegmentKind::kDevice) {
      if (spans == nullptr || clock_hz == 0) continue;
      const auto len = static_cast<uint64_t>(static_cast<double>(s.host_ns) *
                                             static_cast<double>(clock_hz) / 1e9);
      const uint64_t at = p.cycles + host_cycles;
      spans->push_back({s.name + " (" + s.op_type + ")", at, at + std::max<uint64_t>(len, 1)});
      host_cycles += std::max<uint64_t>(len, 1);
      continue;
    }
    if (s.profile) {
      const JobProfile& q = *s.profile;
      for (size_t e = 0; e < p.busy_cycles.size(); ++e) p.busy_cycles[e] += q.busy_cycles[e];
      p.dma_bytes_in += q.dma_bytes_in;
      p.dma_bytes_out += q.dma_bytes_out;
      p.macs += q.macs;
      p.vector_elements += q.vector_elements;
      p.semaphore_stall_cycles += q.semaphore_stall_cycles;
      for (CommandTiming t : q.timeline) {
        t.cmd_index += cmd_base;
        t.start_cycle += p.cycles + host_cycles;
        t.end_cycle += p.cycles + host_cycles;
        p.timeline.push_back(t);
      }
      p.seqno = q.seqno;
    }
    p.cycles += s.cycles;
    cmd_base += static_cast<uint32_t>(s.commands.size());
  }
  return p;
}

std::vector<npu_cmd> RunStats::merged_commands() const {
  std::vector<npu_cmd> cmds;
  for (const auto& s : segments) cmds.insert(cmds.end(), s.commands.begin(), s.commands.end());
  return cmds;
}

std::string Model::trace_json(TraceOptions options) const {
  const JobProfile p = stats_.merged_profile_with_host(options.clock_hz, &options.host_spans);
  const std::vector<npu_cmd> cmds = stats_.merged_commands();
  options.commands = cmds;
  if (options.process_name.empty()) options.process_name = name_;
  return chrome_trace_json(p, options);
}

Expected<void> Model::write_trace(const std::string& path, TraceOptions options) const {
  const JobProfile p = stats_.merged_profile_with_host(options.clock_hz, &options.host_spans);
  const std::vector<npu_cmd> cmds = stats_.merged_commands();
  options.commands = cmds;
  if (options.process_name.empty()) options.process_name = name_;
  return write_chrome_trace(p, path, options);
}

}  // namespace npu
