// Storage of device values (see storage.h): arena and constant placement of values, aliases,
// codegen views of a value in its stored or logical order, and relayout copies into another
// order (TRANSPOSE layers, cached per value and order until the value dies).
#include "lower/storage.h"

#include <algorithm>
#include <cstring>

#include "lower/lowering.h"
#include "npu/isa/half.h"

namespace npu::compiler::detail {

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

Expected<uint8_t> npu_dtype(std::optional<DType> t, const std::string& what) {
  const uint8_t d = t ? format::isa_dtype(*t) : 0;
  if (d == 0) return make_error(EINVAL, what + ": " + dtype_name(t) + " is not a device type");
  return d;
}

uint8_t Lowering::stored_dtype(ValueId v) const {
  const std::optional<DType> t = g.value(v).dtype;
  if (opt.precision && t == DType::kFloat32 && !keeps_type[static_cast<size_t>(v)])
    return opt.precision;
  return t ? format::isa_dtype(*t) : 0;
}

uint8_t Lowering::matrix_half(std::optional<DType> t) const {
  if (t == DType::kFloat16) return NPU_DTYPE_FP16;
  return t == DType::kFloat32 ? opt.precision : 0;
}

uint64_t Lowering::add_half_constant(std::span<const std::byte> data, DType from, uint8_t dtype) {
  const size_t n = data.size() / format::dtype_size(from);
  std::vector<std::byte> out(n * 2);
  for (size_t i = 0; i < n; ++i) {
    uint16_t h = 0;
    if (from == DType::kFloat16) {
      std::memcpy(&h, data.data() + 2 * i, 2);
      if (dtype != NPU_DTYPE_FP16) h = isa::fp32_to_half(dtype, isa::fp16_to_fp32(h));
    } else {
      float f = 0;
      std::memcpy(&f, data.data() + 4 * i, 4);
      h = isa::fp32_to_half(dtype, f);
    }
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return constants.add(out);
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

Expected<void> Lowering::check_order(ValueId v, const Perm& perm,
                                     std::span<const int64_t> dims) const {
  Perm sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  if (sorted == identity_perm(dims.size())) return ok();
  const std::vector<int64_t> order(perm.begin(), perm.end());
  return make_error(EINVAL, "internal error: '" + g.value(v).name + "' of shape " +
                                format::shape_text(dims) + " cannot be stored in the order " +
                                format::shape_text(order));
}

uint64_t Lowering::stored_bytes(ValueId v, std::span<const int64_t> dims, uint8_t dtype) const {
  return static_cast<uint64_t>(format::element_count(dims)) *
         (dtype ? isa::dtype_size(dtype) : dtype_size(g.value(v).dtype));
}

Expected<Storage> Lowering::constant_storage(ValueId v, std::optional<DType> as) {
  const NpyArray* c = g.constant(v);
  if (!c) return make_error(EINVAL, "'" + g.value(v).name + "' is not a constant");
  if (as && *as != c->dtype) {
    NpyArray conv = NpyArray::zeros(*as, c->shape);
    if (!format::dtype_is_float(*as)) {
      const auto vals = format::to_ints(*c);
      for (size_t i = 0; i < vals.size(); ++i)
        format::set_int(conv, static_cast<int64_t>(i), vals[i]);
    } else {
      const auto vals = format::to_floats(*c);
      for (size_t i = 0; i < vals.size(); ++i)
        format::set_number(conv, static_cast<int64_t>(i), vals[i]);
    }
    const uint64_t va = constants.add(conv.data);
    return Storage{va, conv.data.size(), -1, identity_perm(c->shape.size()),
                   format::isa_dtype(*as)};
  }
  const uint64_t va = constants.add(c->data);
  return Storage{va, c->data.size(), -1, identity_perm(c->shape.size()),
                 format::isa_dtype(c->dtype)};
}

Expected<Storage> Lowering::define(ValueId v, Perm perm) {
  auto d = dims(v);
  if (!d) return d.error();
  NPU_TRY(check_order(v, perm, *d));
  const uint8_t dt = stored_dtype(v);
  const uint64_t bytes = stored_bytes(v, *d, dt);
  const int id = arena.alloc(bytes);
  Storage s{kArenaVa + arena.offset(id), bytes, id, std::move(perm), dt};
  storage[static_cast<size_t>(v)] = s;
  return s;
}

Expected<codegen::TensorDesc> Lowering::define_desc(ValueId v, Perm perm) {
  auto s = define(v, std::move(perm));
  if (!s) return s.error();
  return desc(v, *s);
}

Expected<Storage> Lowering::define_runtime_written(ValueId v) {
  const Value& val = g.value(v);
  keeps_type[static_cast<size_t>(v)] = true;
  return define(v, identity_perm(val.shape ? val.shape->size() : 0));
}

Expected<void> Lowering::alias(ValueId v, const Storage& src, Perm perm) {
  auto d = dims(v);
  if (!d) return d.error();
  NPU_TRY(check_order(v, perm, *d));
  const uint64_t need = stored_bytes(v, *d, src.dtype ? src.dtype : stored_dtype(v));
  if (need > src.bytes) {
    return make_error(EINVAL, "internal error: '" + g.value(v).name + "' of shape " +
                                  shape_to_string(*g.value(v).shape) + " needs " +
                                  std::to_string(need) + " bytes but aliases " +
                                  std::to_string(src.bytes));
  }
  Storage s = src;
  s.perm = std::move(perm);
  // A narrower or wider store than stored_dtype(v) is fine for a value only the device reads
  // (readers take the type from the storage).
  if (!keeps_type[static_cast<size_t>(v)] || s.dtype == stored_dtype(v)) {
    if (s.alloc >= 0) arena.retain(s.alloc);
    storage[static_cast<size_t>(v)] = s;
    return ok();
  }
  // v keeps its graph type (the runtime reads it) but src is stored narrower: convert.
  auto from = desc(v, s);
  if (!from) return from.error();
  auto to = define_desc(v, s.perm);
  if (!to) return to.error();
  codegen::CopyOp op;
  op.name = g.value(v).name + "/widen";
  op.input = *from;
  op.output = *to;
  return layer(op, &codegen::emit_copy);
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

void Lowering::release(ValueId v) {
  auto& s = storage[static_cast<size_t>(v)];
  if (s && s->alloc >= 0) {
    arena.release(s->alloc);
    s->alloc = -1;  // keeps its location for the package; the bytes may be reused
  }
  for (auto it = relayouts.lower_bound({v, Perm{}});
       it != relayouts.end() && it->first.first == v;) {
    arena.release(it->second.alloc);
    it = relayouts.erase(it);
  }
}

Expected<codegen::TensorDesc> Lowering::desc(ValueId v, const Storage& s) const {
  auto d = dims(v);
  if (!d) return d.error();
  auto dt = s.dtype ? Expected<uint8_t>(s.dtype)
                    : npu_dtype(g.value(v).dtype, "'" + g.value(v).name + "'");
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
  auto d0 = dims(v);
  if (!d0) return d0.error();
  NPU_TRY(check_order(v, perm, *d0));
  // Only dims of size 1 move (e.g. [N,1,1,C] channels-last vs [N,C,1,1]): same bytes.
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
  const int id = arena.alloc(s->bytes);
  Storage out{kArenaVa + arena.offset(id), s->bytes, id, perm, s->dtype};
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

Expected<codegen::TensorDesc> Lowering::in_perm(ValueId v, const Perm& perm) {
  auto s = storage_in_perm(v, perm);
  if (!s) return s.error();
  return desc(v, *s);
}

}  // namespace npu::compiler::detail
