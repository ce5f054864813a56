// Lowering driver: memory planning, segment walk and package assembly (see lower.h).
#include "lower/lower.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>

#include "npu/codegen/schedule.h"
#include "npu/compiler/onnx_tensor.h"
#include "npu/isa/validate.h"

namespace npu::compiler::detail {

namespace {

using json = nlohmann::json;
constexpr int kForever = std::numeric_limits<int>::max();

uint64_t align64(uint64_t x) {
  return (x + 63) & ~uint64_t{63};
}

format::DType format_dtype(DType t) {
  return to_format_dtype(t).value_or(format::DType::kFloat32);
}

json tensor_attr_json(const TensorData& t) {
  json j;
  j["dtype"] = format::dtype_name(format_dtype(t.dtype));
  j["dims"] = t.dims;
  if (dtype_is_integral(t.dtype)) {
    j["values"] = t.to_ints();
  } else {
    j["values"] = t.to_floats();
  }
  return j;
}

/// ONNX attributes as the operator library's JSON (npu/ops/ops.h), plus "_opset".
std::string host_attributes(const Node& n) {
  json j = json::object();
  for (const auto& [key, value] : n.attrs) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, TensorData>) {
            j[key] = tensor_attr_json(v);
          } else {
            j[key] = v;
          }
        },
        value);
  }
  j["_opset"] = n.opset;
  return j.dump();
}

}  // namespace

Perm identity_perm(size_t rank) {
  Perm p(rank);
  for (size_t i = 0; i < rank; ++i) p[i] = static_cast<int>(i);
  return p;
}

Perm channels_last_perm(size_t rank) {
  Perm p = identity_perm(rank);
  if (rank >= 3) {
    p.erase(p.begin() + 1);
    p.push_back(1);
  }
  return p;
}

Expected<uint8_t> npu_dtype(DType t, const std::string& what) {
  const auto f = to_format_dtype(t);
  const uint8_t d = f ? format::isa_dtype(*f) : 0;
  if (d == 0) return make_error(EINVAL, what + ": " + dtype_name(t) + " is not a device type");
  return d;
}

Lowering::Lowering(const Graph& graph, const LowerOptions& o)
    : g(graph), opt(o), storage(graph.num_values()) {}

uint64_t Lowering::add_constant(std::span<const std::byte> bytes) {
  // Identical blobs (a bias used twice, repeated qparams) are stored once.
  const std::string_view key(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const size_t h = std::hash<std::string_view>{}(key);
  auto [first, last] = blob_index.equal_range(h);
  for (auto it = first; it != last; ++it) {
    const uint64_t off = it->second;
    if (off + bytes.size() <= constants.size() &&
        (bytes.empty() || std::memcmp(constants.data() + off, bytes.data(), bytes.size()) == 0))
      return kConstantsVa + off;
  }
  const uint64_t off = align64(constants.size());
  constants.resize(off + bytes.size());
  if (!bytes.empty()) std::memcpy(constants.data() + off, bytes.data(), bytes.size());
  blob_index.emplace(h, off);
  return kConstantsVa + off;
}

Expected<Storage> Lowering::constant_storage(ValueId v, std::optional<DType> as) {
  const TensorData* c = g.constant(v);
  if (!c) return make_error(EINVAL, "'" + g.value(v).name + "' is not a constant");
  if (as && *as != c->dtype) {
    TensorData conv = TensorData::zeros(*as, c->dims);
    if (dtype_is_integral(*as)) {
      const auto vals = c->to_ints();
      for (size_t i = 0; i < vals.size(); ++i) conv.set_int(static_cast<int64_t>(i), vals[i]);
    } else {
      const auto vals = c->to_floats();
      for (size_t i = 0; i < vals.size(); ++i) conv.set_double(static_cast<int64_t>(i), vals[i]);
    }
    const uint64_t va = add_constant(std::as_bytes(std::span(conv.bytes)));
    return Storage{va, conv.bytes.size(), -1, identity_perm(c->dims.size())};
  }
  const uint64_t va = add_constant(std::as_bytes(std::span(c->bytes)));
  return Storage{va, c->bytes.size(), -1, identity_perm(c->dims.size())};
}

int Lowering::arena_alloc(uint64_t bytes) {
  const uint64_t size = align64(std::max<uint64_t>(bytes, 1));
  uint64_t at = arena_size;
  for (auto it = free_list.begin(); it != free_list.end(); ++it) {
    if (it->second < size) continue;
    at = it->first;
    const uint64_t rest = it->second - size;
    free_list.erase(it);
    if (rest) free_list[at + size] = rest;
    break;
  }
  if (at == arena_size) arena_size += size;
  allocs.push_back({at, size, 1});
  return static_cast<int>(allocs.size() - 1);
}

void Lowering::arena_release(int id) {
  if (id < 0) return;
  Alloc& a = allocs[static_cast<size_t>(id)];
  if (--a.refs > 0) return;
  uint64_t off = a.offset, size = a.size;
  // Coalesce with the neighbours.
  auto next = free_list.lower_bound(off);
  if (next != free_list.end() && next->first == off + size) {
    size += next->second;
    next = free_list.erase(next);
  }
  if (next != free_list.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      off = prev->first;
      size += prev->second;
      free_list.erase(prev);
    }
  }
  if (off + size == arena_size) {
    arena_size = off;
  } else {
    free_list[off] = size;
  }
}

Expected<std::vector<int64_t>> Lowering::dims(ValueId v) const {
  auto d = g.value(v).static_dims();
  if (!d) {
    const Value& val = g.value(v);
    return make_error(EINVAL, "'" + val.name + "' has a dynamic shape " +
                                  (val.shape ? shape_to_string(*val.shape) : "[*]"));
  }
  return *d;
}

Expected<Storage> Lowering::define(ValueId v, Perm perm) {
  auto d = dims(v);
  if (!d) return d.error();
  const uint64_t bytes = static_cast<uint64_t>(element_count(*d)) * dtype_size(g.value(v).dtype);
  const int id = arena_alloc(bytes);
  Storage s{kArenaVa + allocs[static_cast<size_t>(id)].offset, bytes, id, std::move(perm)};
  storage[static_cast<size_t>(v)] = s;
  return s;
}

Expected<codegen::TensorDesc> Lowering::define_desc(ValueId v, Perm perm) {
  auto s = define(v, std::move(perm));
  if (!s) return s.error();
  return desc(v, *s);
}

void Lowering::alias(ValueId v, const Storage& src, Perm perm) {
  Storage s = src;
  s.perm = std::move(perm);
  if (s.alloc >= 0) allocs[static_cast<size_t>(s.alloc)].refs++;
  storage[static_cast<size_t>(v)] = s;
}

Expected<Storage> Lowering::get(ValueId v) {
  if (v < 0) return make_error(EINVAL, "missing operand");
  auto& s = storage[static_cast<size_t>(v)];
  if (s) return *s;
  if (g.value(v).is_constant()) {
    auto c = constant_storage(v);
    if (!c) return c.error();
    s = *c;
    return *s;
  }
  return make_error(EINVAL, "'" + g.value(v).name + "' is not on the device");
}

Expected<codegen::TensorDesc> Lowering::desc(ValueId v, const Storage& s) const {
  auto d = dims(v);
  if (!d) return d.error();
  auto dt = npu_dtype(g.value(v).dtype, "'" + g.value(v).name + "'");
  if (!dt) return dt.error();
  codegen::TensorDesc t;
  t.va = s.va;
  t.dtype = *dt;
  for (int p : s.perm) t.dims.push_back(static_cast<uint32_t>((*d)[static_cast<size_t>(p)]));
  if (t.dims.empty()) t.dims.push_back(1);
  return t;
}

Expected<codegen::TensorDesc> Lowering::physical(ValueId v) {
  auto s = get(v);
  if (!s) return s.error();
  return desc(v, *s);
}

Expected<codegen::TensorDesc> Lowering::logical_view(ValueId v) {
  auto s = get(v);
  if (!s) return s.error();
  auto phys = physical(v);
  if (!phys) return phys.error();
  auto d = dims(v);
  if (!d) return d.error();
  codegen::TensorDesc t = *phys;
  if (d->empty()) return t;
  t.dims.assign(d->size(), 0);
  t.strides.assign(d->size(), 0);
  for (size_t j = 0; j < s->perm.size(); ++j) {
    const auto l = static_cast<size_t>(s->perm[j]);
    t.dims[l] = phys->dims[j];
    t.strides[l] = phys->stride(j);
  }
  return t;
}

Expected<Storage> Lowering::storage_in_perm(ValueId v, const Perm& perm) {
  auto s = get(v);
  if (!s) return s.error();
  if (s->perm == perm) return *s;
  // Only dims of size 1 move (e.g. [N,1,1,C] channels-last vs [N,C,1,1]): same bytes.
  auto d0 = dims(v);
  if (!d0) return d0.error();
  auto non_unit = [&](const Perm& p) {
    std::vector<int> order;
    for (int l : p) {
      if ((*d0)[static_cast<size_t>(l)] != 1) order.push_back(l);
    }
    return order;
  };
  if (non_unit(s->perm) == non_unit(perm)) {
    Storage same = *s;
    same.perm = perm;
    return same;
  }
  // A copy in this order made for an earlier reader is still there (it lives as long as v).
  if (auto it = relayouts.find({v, perm}); it != relayouts.end()) return it->second;
  auto src = desc(v, *s);
  if (!src) return src.error();
  // Stored dim j of the result is logical dim perm[j], i.e. stored dim inv[perm[j]] of v.
  Perm inv(s->perm.size());
  for (size_t j = 0; j < s->perm.size(); ++j) inv[static_cast<size_t>(s->perm[j])] = int(j);
  const int id = arena_alloc(s->bytes);
  Storage out{kArenaVa + allocs[static_cast<size_t>(id)].offset, s->bytes, id, perm};
  relayouts[{v, perm}] = out;
  codegen::TransposeOp op;
  op.name = g.value(v).name + "/relayout";
  op.input = *src;
  auto dst = desc(v, out);
  if (!dst) return dst.error();
  op.output = *dst;
  for (size_t j = 0; j < perm.size(); ++j)
    op.perm.push_back(static_cast<uint32_t>(inv[static_cast<size_t>(perm[j])]));
  NPU_TRY(layer(op, &codegen::emit_transpose));
  return out;
}

void Lowering::release_relayouts(ValueId v) {
  for (auto it = relayouts.lower_bound({v, Perm{}});
       it != relayouts.end() && it->first.first == v;) {
    arena_release(it->second.alloc);
    it = relayouts.erase(it);
  }
}

Expected<codegen::TensorDesc> Lowering::in_perm(ValueId v, const Perm& perm) {
  auto s = storage_in_perm(v, perm);
  if (!s) return s.error();
  return desc(v, *s);
}

template <typename Op>
Expected<void> Lowering::layer(const Op& op,
                               Expected<codegen::LayerReport> (*emit)(const Op&,
                                                                      codegen::EmitContext&)) {
  if (!layers.empty()) builder->fence();
  codegen::EmitContext ctx{*builder, opt.cfg, *sems, 0, 0, true};
  auto r = emit(op, ctx);
  if (!r) return r.error();
  layers.push_back(std::move(*r));
  return ok();
}

// The emitters lower_ops.cpp uses.
#define NPU_LOWER_LAYER(Op, fn)                         \
  template Expected<void> Lowering::layer<codegen::Op>( \
      const codegen::Op&,                               \
      Expected<codegen::LayerReport> (*)(const codegen::Op&, codegen::EmitContext&));
NPU_LOWER_LAYER(Conv2dOp, emit_conv2d)
NPU_LOWER_LAYER(MatMulOp, emit_matmul)
NPU_LOWER_LAYER(PoolOp, emit_pool)
NPU_LOWER_LAYER(EltwiseOp, emit_eltwise)
NPU_LOWER_LAYER(ActivationOp, emit_activation)
NPU_LOWER_LAYER(SoftmaxOp, emit_softmax)
NPU_LOWER_LAYER(QuantizeOp, emit_quantize)
NPU_LOWER_LAYER(TransposeOp, emit_transpose)
NPU_LOWER_LAYER(ReduceOp, emit_reduce)
NPU_LOWER_LAYER(ScaleShiftOp, emit_scale_shift)
NPU_LOWER_LAYER(CopyOp, emit_copy)
NPU_LOWER_LAYER(PadOp, emit_pad)
#undef NPU_LOWER_LAYER

// ---------------------------------------------------------------------------------------------

namespace {

/// The package under construction: tensors by name, in first-use order.
struct PackageBuilder {
  const Graph& g;
  Lowering& L;
  format::PackageMetadata md;
  std::vector<format::Section> sections;
  std::map<std::string, size_t> tensor_index;
  int unknown_dims = 0;

  std::vector<format::Dim> shape_of(const Value& v) {
    std::vector<format::Dim> s;
    if (!v.shape) return s;
    for (const Dim& d : *v.shape) {
      if (d.is_static()) {
        s.push_back(format::Dim::fixed(d.value));
      } else {
        s.push_back(
            format::Dim::named(d.symbol.empty() ? "?" + std::to_string(unknown_dims++) : d.symbol));
      }
    }
    return s;
  }

  /// The TensorInfo of a value (created on first use; its location is filled at the end).
  void touch(ValueId v) {
    const Value& val = g.value(v);
    if (tensor_index.count(val.name)) return;
    format::TensorInfo t;
    t.name = val.name;
    t.dtype = format_dtype(val.dtype);
    t.shape = shape_of(val);
    t.role = g.is_graph_input(v)    ? format::TensorRole::kInput
             : g.is_graph_output(v) ? format::TensorRole::kOutput
             : val.is_constant()    ? format::TensorRole::kConstant
                                    : format::TensorRole::kIntermediate;
    tensor_index[val.name] = md.tensors.size();
    md.tensors.push_back(std::move(t));
  }

  /// A host-only tensor that is not a graph value (an un-fused activation's input).
  void touch_extra(const std::string& name, const Value& like) {
    if (tensor_index.count(name)) return;
    format::TensorInfo t;
    t.name = name;
    t.dtype = format_dtype(like.dtype);
    t.shape = shape_of(like);
    tensor_index[name] = md.tensors.size();
    md.tensors.push_back(std::move(t));
  }
};

format::TensorLocation location_of(const Storage& s, const std::vector<int64_t>& dims,
                                   size_t elem) {
  format::TensorLocation loc;
  const bool in_arena = s.va >= Lowering::kArenaVa && s.va < Lowering::kConstantsVa;
  loc.buffer = in_arena ? "activations" : "constants";
  loc.offset = s.va - (in_arena ? Lowering::kArenaVa : Lowering::kConstantsVa);
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

std::variant<format::Package, LowerError> lower(const Graph& g, const Partition& p,
                                                const LowerOptions& o) {
  Lowering L(g, o);
  PackageBuilder pb{g, L, {}, {}, {}, 0};
  const size_t nv = g.num_values();

  // Global execution order and liveness.
  std::vector<size_t> order;
  for (const Segment& s : p.segments) order.insert(order.end(), s.nodes.begin(), s.nodes.end());
  std::vector<int> step_of(g.nodes.size(), -1);
  for (size_t i = 0; i < order.size(); ++i) step_of[order[i]] = static_cast<int>(i);
  std::vector<int> last_use(nv, -1);
  std::vector<bool> device_reads(nv, false);
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& n = g.nodes[order[i]];
    for (ValueId v : n.inputs) {
      if (v < 0) continue;
      last_use[static_cast<size_t>(v)] = static_cast<int>(i);
      if (n.placement.target == Target::kDevice) device_reads[static_cast<size_t>(v)] = true;
    }
  }
  for (ValueId v : g.outputs) last_use[static_cast<size_t>(v)] = kForever;

  auto release_dead = [&](int step) {
    for (const Node* n : {&g.nodes[order[static_cast<size_t>(step)]]}) {
      std::vector<ValueId> vs = n->inputs;
      vs.insert(vs.end(), n->outputs.begin(), n->outputs.end());
      for (ValueId v : vs) {
        if (v < 0 || last_use[static_cast<size_t>(v)] > step) continue;
        auto& s = L.storage[static_cast<size_t>(v)];
        if (s && s->alloc >= 0) {
          L.arena_release(s->alloc);
          s->alloc = -1;  // keeps its location for the package; the bytes may be reused
        }
        L.release_relayouts(v);
      }
    }
  };

  for (ValueId v : g.inputs) {
    pb.touch(v);
    if (device_reads[static_cast<size_t>(v)]) {
      if (auto s = L.define(v, identity_perm(g.value(v).shape ? g.value(v).shape->size() : 0));
          !s) {
        return LowerError{s.error(), -1};
      }
    }
  }

  int seg_counter = 0;
  for (const Segment& seg : p.segments) {
    if (seg.target == Target::kDevice) {
      isa::CommandBufferBuilder builder;
      codegen::SemAllocator sems(o.cfg.num_semaphores);
      L.builder = &builder;
      L.sems = &sems;
      L.layers.clear();
      for (size_t ni : seg.nodes) {
        const Node& n = g.nodes[ni];
        if (auto r = L.lower_node(n); !r) {
          return LowerError{make_error(r.error().code, n.label() + ": " + r.error().message),
                            static_cast<int>(ni)};
        }
        release_dead(step_of[ni]);
      }
      const uint64_t features = isa::program_features(builder.commands());
      auto sched = codegen::replay(builder.commands(), o.cfg);
      if (!sched) return LowerError{sched.error(), -1};
      format::Segment s;
      s.kind = format::SegmentKind::kDevice;
      s.name = "npu" + std::to_string(seg_counter++);
      s.command_buffer = static_cast<uint32_t>(pb.sections.size());
      pb.sections.push_back(
          {format::SectionKind::kCommandBuffer, s.name, builder.finish(features)});
      pb.md.target.features |= features;
      s.buffers = {{"constants", format::Access::kRead},
                   {"activations", format::Access::kReadWrite}};
      for (ValueId v : seg.inputs) {
        pb.touch(v);
        s.inputs.push_back(g.value(v).name);
      }
      for (ValueId v : seg.outputs) {
        pb.touch(v);
        s.outputs.push_back(g.value(v).name);
      }
      for (const auto& l : L.layers) {
        format::LayerReport r;
        r.name = l.name;
        r.op = l.op;
        r.engine = isa::engine_name(l.engine);
        r.tiles = l.tiles;
        r.macs = l.macs;
        r.bytes = l.bytes_in + l.bytes_out;
        r.cycles = l.cycles;
        r.compute_cycles = l.compute_cycles;
        s.layers.push_back(std::move(r));
      }
      s.estimated_cycles = sched->cycles;
      pb.md.segments.push_back(std::move(s));
      continue;
    }
    // Host segments: one per node; fused activations and MatMul biases run as extra ops.
    for (size_t ni : seg.nodes) {
      const Node& n = g.nodes[ni];
      format::Segment s;
      s.kind = format::SegmentKind::kHost;
      s.name = n.name;
      s.op_type = n.op_type;
      s.attributes = host_attributes(n);
      std::vector<ValueId> ins = n.inputs;
      const bool matmul_bias = n.op_type == "MatMul" && n.inputs.size() > 2;
      if (matmul_bias) ins.resize(2);
      for (ValueId v : ins) {
        if (v >= 0) pb.touch(v);
        s.inputs.push_back(v >= 0 ? g.value(v).name : "");
      }
      // Extra host ops after the node: a MatMul bias add, then a fused activation.
      struct Step {
        std::string name, op_type, attributes;
        std::vector<std::string> extra_inputs;
      };
      std::vector<Step> after;
      if (matmul_bias) {
        pb.touch(n.inputs[2]);
        after.push_back({n.name + "/bias",
                         "Add",
                         json{{"_opset", n.opset}}.dump(),
                         {g.value(n.inputs[2]).name}});
      }
      if (n.activation) {
        Node act;
        act.op_type = n.activation->op_type;
        act.opset = n.opset;
        std::vector<std::string> extra;
        if (act.op_type == "Clip") {
          // Clip's bounds are inputs since opset 11: pass them as constants.
          for (float bound : {n.activation->alpha, n.activation->beta}) {
            const std::string name =
                g.unique_name(g.value(n.outputs[0]).name + "/clip" + std::to_string(extra.size()));
            const TensorData t = TensorData::from_floats({}, std::span(&bound, 1));
            const uint64_t va = L.add_constant(std::as_bytes(std::span(t.bytes)));
            format::TensorInfo ti;
            ti.name = name;
            ti.role = format::TensorRole::kConstant;
            ti.location = format::TensorLocation{"constants", va - Lowering::kConstantsVa, 4};
            pb.tensor_index[name] = pb.md.tensors.size();
            pb.md.tensors.push_back(std::move(ti));
            extra.push_back(name);
          }
        } else if (act.op_type == "LeakyRelu" || act.op_type == "Elu") {
          act.attrs["alpha"] = n.activation->alpha;
        } else if (act.op_type == "HardSigmoid") {
          act.attrs["alpha"] = n.activation->alpha;
          act.attrs["beta"] = n.activation->beta;
        }
        after.push_back({n.name + "/act", act.op_type, host_attributes(act), std::move(extra)});
      }
      const Value& out = g.value(n.outputs[0]);
      std::vector<std::string> outs;
      std::vector<ValueId> node_outs = n.outputs;
      while (node_outs.size() > 1 && node_outs.back() < 0) node_outs.pop_back();  // unused tail
      for (ValueId v : node_outs) {
        if (v >= 0) pb.touch(v);
        outs.push_back(v >= 0 ? g.value(v).name : g.unique_name(n.name + "/unused"));
      }
      // The chain node -> steps passes through host-only temporaries: chain[k] is what step k
      // reads, the last entry is the node's real output 0.
      std::vector<std::string> chain(after.size() + 1);
      chain.back() = outs[0];
      for (size_t k = 0; k < after.size(); ++k) {
        chain[k] = outs[0] + "/pre" + std::to_string(after.size() - k);
        pb.touch_extra(chain[k], out);
      }
      outs[0] = chain[0];
      for (const std::string& o : outs) {
        if (!pb.tensor_index.count(o)) pb.touch_extra(o, out);
      }
      s.outputs = outs;
      pb.md.segments.push_back(s);
      for (size_t k = 0; k < after.size(); ++k) {
        format::Segment e;
        e.kind = format::SegmentKind::kHost;
        e.name = after[k].name;
        e.op_type = after[k].op_type;
        e.attributes = after[k].attributes;
        e.inputs = {chain[k]};
        e.inputs.insert(e.inputs.end(), after[k].extra_inputs.begin(), after[k].extra_inputs.end());
        e.outputs = {chain[k + 1]};
        pb.md.segments.push_back(std::move(e));
      }
      // Results a device node reads later go to the arena (the runtime writes them back).
      for (ValueId v : n.outputs) {
        if (v >= 0 && device_reads[static_cast<size_t>(v)]) {
          if (auto st = L.define(v, identity_perm(g.value(v).shape ? g.value(v).shape->size() : 0));
              !st) {
            return LowerError{make_error(st.error().code, n.label() + ": " + st.error().message),
                              -1};
          }
        }
      }
      release_dead(step_of[ni]);
    }
  }

  // A graph output folded to a constant (Shape of a static shape, a Constant): a host
  // Identity produces it from a constant tensor.
  for (ValueId v : g.outputs) {
    if (!g.value(v).is_constant()) continue;
    const Value& val = g.value(v);
    pb.touch(v);
    auto c = L.constant_storage(v);
    if (!c) return LowerError{c.error(), -1};
    const std::string name = g.unique_name(val.name + "/value");
    pb.touch_extra(name, val);
    format::TensorInfo& ct = pb.md.tensors[pb.tensor_index[name]];
    ct.role = format::TensorRole::kConstant;
    ct.location = location_of(*c, *val.static_dims(), dtype_size(val.dtype));
    format::Segment e;
    e.kind = format::SegmentKind::kHost;
    e.name = val.name + "/identity";
    e.op_type = "Identity";
    e.attributes = json{{"_opset", 13}}.dump();
    e.inputs = {name};
    e.outputs = {val.name};
    pb.md.segments.push_back(std::move(e));
  }

  // Locations of every tensor the package names that lives on the device.
  for (auto& t : pb.md.tensors) {
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
  for (ValueId v : g.inputs) pb.md.inputs.push_back(g.value(v).name);
  for (ValueId v : g.outputs) {
    pb.touch(v);
    pb.md.outputs.push_back(g.value(v).name);
  }

  // Buffers: the constants section and the arena.
  format::Package pkg;
  pkg.metadata = std::move(pb.md);
  pkg.sections = std::move(pb.sections);
  auto& md = pkg.metadata;
  md.model.name = o.model_name.empty() ? "model" : o.model_name;
  md.model.producer = o.producer;
  md.model.source = o.source;
  md.target.sram_size = o.cfg.sram_size;
  md.target.device = o.cfg.name;
  format::BufferInfo cb;
  cb.name = "constants";
  cb.kind = format::BufferKind::kConstants;
  cb.size = align64(L.constants.size()) + 64;  // room for empty tensors at the end
  cb.address = Lowering::kConstantsVa;
  cb.section = static_cast<uint32_t>(pkg.sections.size());
  pkg.sections.push_back({format::SectionKind::kConstants, "constants", std::move(L.constants)});
  md.buffers.push_back(std::move(cb));
  uint64_t arena = 64;
  for (const auto& a : L.allocs) arena = std::max(arena, a.offset + a.size);
  format::BufferInfo ab;
  ab.name = "activations";
  ab.kind = format::BufferKind::kActivations;
  ab.size = arena;
  ab.address = Lowering::kArenaVa;
  md.buffers.push_back(std::move(ab));
  return pkg;
}

}  // namespace npu::compiler::detail
