// Tensor I/O: tensors in buffer locations (plain, strided, NHWC) and the input checks
// (tensor_io.h).
#include "tensor_io.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <type_traits>

#include "npu/format/shape.h"

namespace npu::runtime {

using format::NpyArray;
using format::TensorInfo;
using format::TensorLocation;

namespace {

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

/// Copies between a host array of `shape` (C order, `host` bytes) and `t`'s location: into
/// the location when kToBuffer, out of it otherwise. Errors name the tensor and the buffer.
template <bool kToBuffer>
Expected<void> transfer(
    RunState& run, const TensorInfo& t, const Shape& shape,
    std::conditional_t<kToBuffer, std::span<const std::byte>, std::span<std::byte>> host) {
  const TensorLocation& loc = *t.location;
  Buffer& buf = run.m.buffers.at(loc.buffer);
  const uint64_t es = format::dtype_size(t.dtype);
  auto err = [&](const Error& e) {
    return make_error(e.code, run.m.where("tensor '" + t.name + "' in buffer '" + loc.buffer +
                                          "': " + e.message));
  };
  if (dense_plain(t)) {
    if (host.size() > loc.size) {
      return err(make_error(
          ERANGE, kToBuffer ? std::to_string(host.size()) + " bytes do not fit the location's " +
                                  std::to_string(loc.size)
                            : "shape " + format::shape_text(shape) + " needs " +
                                  std::to_string(host.size()) + " bytes, the location has " +
                                  std::to_string(loc.size)));
    }
    Expected<void> r = ok();
    if constexpr (kToBuffer) {
      r = buf.write(loc.offset, host);
    } else {
      r = buf.read(loc.offset, host);
    }
    if (!r) return err(r.error());
    return ok();
  }
  auto offsets = element_offsets(t, shape);
  if (!offsets) return err(offsets.error());
  auto bytes = buf.map();
  if (!bytes) return err(bytes.error());
  if (loc.offset + loc.size > bytes->size())
    return err(make_error(ERANGE, "location beyond the buffer"));
  std::byte* base = bytes->data() + loc.offset;
  for (size_t e = 0; e < offsets->size(); ++e) {
    if constexpr (kToBuffer) {
      std::memcpy(base + (*offsets)[e], host.data() + e * es, es);
    } else {
      std::memcpy(host.data() + e * es, base + (*offsets)[e], es);
    }
  }
  return ok();
}

/// Checks one input's dtype and shape and binds its symbolic dims.
Expected<void> bind_input(RunState& run, const TensorDesc& d, const format::ArrayView& a) {
  auto err = [&](const std::string& what) {
    return make_error(EINVAL, run.m.where("input '" + d.name + "': " + what));
  };
  if (auto c = format::check_npy(a, "input '" + d.name + "'"); !c) return err(c.error().message);
  if (a.dtype != d.dtype) {
    return err(std::string("dtype ") + format::dtype_name(a.dtype) + ", expected " +
               format::dtype_name(d.dtype));
  }
  if (a.shape.size() != d.shape.size()) {
    return err("shape " + format::shape_text(a.shape) + ", expected " +
               format::shape_text(d.shape));
  }
  const TensorInfo* t = run.m.package.metadata.find_tensor(d.name);
  for (size_t i = 0; i < d.shape.size(); ++i) {
    const format::Dim& dim = d.shape[i];
    if (!dim.symbolic()) {
      if (a.shape[i] != dim.size) {
        return err("shape " + format::shape_text(a.shape) + ", expected " +
                   format::shape_text(d.shape));
      }
      continue;
    }
    auto [it, fresh] = run.bindings.emplace(dim.symbol, a.shape[i]);
    if (!fresh && it->second != a.shape[i]) {
      return err("dim '" + dim.symbol + "' is " + std::to_string(a.shape[i]) +
                 " but another input bound it to " + std::to_string(it->second));
    }
    if (t && t->location && dense_plain(*t) && fresh) {
      // The device code was compiled for the size the location holds.
      const int64_t compiled = compiled_dim(*t, d.shape, i);
      if (compiled != a.shape[i]) {
        return err((i == 0 ? "batch " : "dim '" + dim.symbol + "' ") + std::to_string(a.shape[i]) +
                   " but the package was compiled for " + std::to_string(compiled));
      }
    }
  }
  return ok();
}

}  // namespace

bool dense_plain(const TensorInfo& t) {
  return t.location->strides.empty() && t.location->layout != format::Layout::kNHWC;
}

int64_t compiled_dim(const TensorInfo& t, const std::vector<format::Dim>& shape, size_t i) {
  int64_t rest = static_cast<int64_t>(format::dtype_size(t.dtype));
  for (size_t j = 0; j < shape.size(); ++j) {
    if (j != i) rest *= shape[j].symbolic() ? 1 : shape[j].size;
  }
  return rest > 0 ? static_cast<int64_t>(t.location->size) / rest : 0;
}

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
                                    " bytes (shape " + format::shape_text(shape) + ")");
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

Expected<Shape> resolve(const RunState& run, const TensorInfo& t) {
  Shape s;
  for (const auto& d : t.shape) {
    if (!d.symbolic()) {
      s.push_back(d.size);
      continue;
    }
    auto it = run.bindings.find(d.symbol);
    if (it == run.bindings.end()) {
      return make_error(EINVAL, run.m.where("tensor '" + t.name + "': symbolic dim '" + d.symbol +
                                            "' is not bound by any input"));
    }
    s.push_back(it->second);
  }
  return s;
}

Expected<void> write_tensor(RunState& run, const TensorInfo& t, const format::ArrayView& a) {
  return transfer<true>(run, t, a.shape, a.data);
}

Expected<NpyArray> read_tensor(RunState& run, const TensorInfo& t) {
  auto shape = resolve(run, t);
  if (!shape) return shape.error();
  // Checked before allocating anything: a package may declare more than its location holds
  // (every element of a stored tensor has its own bytes in the location).
  const int64_t n = format::element_count(*shape);
  const uint64_t es = format::dtype_size(t.dtype);
  if (n < 0 || es == 0 || static_cast<uint64_t>(n) > t.location->size / es) {
    return make_error(ERANGE,
                      run.m.where("tensor '" + t.name + "': shape " + format::shape_text(*shape) +
                                  " of " + format::dtype_name(t.dtype) + " needs more than the " +
                                  std::to_string(t.location->size) +
                                  " bytes of its location in buffer '" + t.location->buffer + "'"));
  }
  NpyArray a = NpyArray::zeros(t.dtype, *shape);
  NPU_TRY(transfer<false>(run, t, *shape, a.data));
  return a;
}

Expected<const NpyArray*> value(RunState& run, const std::string& name) {
  if (auto it = run.values.find(name); it != run.values.end()) return &it->second;
  if (run.inputs) {
    if (auto it = run.inputs->find(name); it != run.inputs->end()) {
      return &(run.values[name] = it->second.to_array());
    }
  }
  const TensorInfo* t = run.m.package.metadata.find_tensor(name);
  if (!t) return make_error(EINVAL, run.m.where("unknown tensor '" + name + "'"));
  if (!t->location) {
    return make_error(
        EINVAL, run.m.where("tensor '" + name + "' has no value (no location, not produced yet)"));
  }
  auto a = read_tensor(run, *t);
  if (!a) return a.error();
  return &(run.values[name] = std::move(*a));
}

Expected<void> bind_inputs(RunState& run, const Views& inputs) {
  const ModelState& m = run.m;
  const auto& graph_inputs = m.package.metadata.inputs;
  for (const auto& [name, a] : inputs) {
    if (!m.package.metadata.find_tensor(name) ||
        std::find(graph_inputs.begin(), graph_inputs.end(), name) == graph_inputs.end()) {
      std::string names;
      for (const auto& d : m.inputs) names += (names.empty() ? "" : ", ") + d.name;
      return make_error(EINVAL, m.where("unknown input '" + name + "' (inputs: " + names + ")"));
    }
  }
  for (const auto& d : m.inputs) {
    auto it = inputs.find(d.name);
    if (it == inputs.end()) return make_error(EINVAL, m.where("missing input '" + d.name + "'"));
    NPU_TRY(bind_input(run, d, it->second));
  }
  for (const auto& d : m.inputs) {
    const TensorInfo* t = m.package.metadata.find_tensor(d.name);
    if (t->location) NPU_TRY(write_tensor(run, *t, inputs.at(d.name)));
  }
  run.inputs = &inputs;
  return ok();
}

}  // namespace npu::runtime
