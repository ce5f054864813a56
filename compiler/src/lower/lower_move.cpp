// Data movement: reshape-like ops and Transpose as aliases of their input's bytes (no
// layer), Concat as one COPY per input into its slice of the output, Slice as an alias of the
// bytes it selects when they are one run of the input's storage (else a strided COPY),
// constant-mode Pad as PAD.
#include <cstring>

#include "lower/lower_ops.h"
#include "npu/isa/dtype.h"
#include "npu/ops/slice_range.h"

namespace npu::compiler::detail {

/// Reshape-like ops: the output shares the input's bytes in identity order.
Expected<void> lower_view(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  auto yd = L.dims(y);
  if (!yd) return yd.error();
  auto s = L.storage_in_perm(x, identity_perm(xd->size()));
  if (!s) return s.error();
  return L.alias(y, *s, identity_perm(yd->size()));
}

/// Transpose: the output is the input's bytes read in another order (no data movement).
Expected<void> lower_transpose(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const size_t rank = xd->size();
  std::vector<int64_t> p = n.attr_ints("perm");
  if (p.empty()) {
    for (size_t i = 0; i < rank; ++i) p.push_back(static_cast<int64_t>(rank - 1 - i));
  }
  if (p.size() != rank) return make_error(EINVAL, "perm does not match the rank");
  auto s = L.get(x);
  if (!s) return s.error();
  // Output logical dim i is input logical dim p[i]; stored dim j holds input dim P[j], which
  // is output dim pinv[P[j]].
  Perm pinv(rank);
  for (size_t i = 0; i < rank; ++i) pinv[static_cast<size_t>(p[i])] = static_cast<int>(i);
  Perm out(rank);
  for (size_t j = 0; j < rank; ++j) out[j] = pinv[static_cast<size_t>(s->perm[j])];
  return L.alias(y, *s, out);
}

/// Concat: each input is copied into its slice of the output (in the inputs' common order).
Expected<void> lower_concat(Lowering& L, const Node& n) {
  const ValueId y = n.outputs[0];
  auto yd = L.dims(y);
  if (!yd) return yd.error();
  const size_t rank = yd->size();
  int64_t axis = n.attr_int("axis", 0);
  if (axis < 0) axis += static_cast<int64_t>(rank);
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) return make_error(EINVAL, "bad axis");
  std::optional<Perm> common;
  for (ValueId v : n.inputs) {
    if (v < 0 || L.g.value(v).is_constant()) continue;
    auto s = L.get(v);
    if (!s) return s.error();
    if (!common) {
      common = s->perm;
    } else if (*common != s->perm) {
      common = identity_perm(rank);
      break;
    }
  }
  const Perm perm = common && common->size() == rank ? *common : identity_perm(rank);
  auto out = L.define_desc(y, perm);
  if (!out) return out.error();
  std::vector<uint64_t> strides(rank);
  for (size_t j = 0; j < rank; ++j) strides[j] = out->stride(j);
  out->strides = std::move(strides);
  size_t j_axis = 0;
  while (perm[j_axis] != axis) ++j_axis;
  uint64_t offset = 0;
  for (ValueId v : n.inputs) {
    if (v < 0) continue;
    auto src = broadcast_view(L, v, rank, perm, L.g.value(y).dtype);
    if (!src) return src.error();
    if (src->elements() == 0) continue;
    codegen::CopyOp op;
    op.name = n.name + "/" + L.g.value(v).name;
    op.input = *src;
    op.output = *out;
    op.output.va += offset * out->strides[j_axis];
    op.output.dims[j_axis] = src->dims[j_axis];
    offset += src->dims[j_axis];
    NPU_TRY(L.layer(op, &codegen::emit_copy));
  }
  return ok();
}

namespace {

/// Per logical axis of a Slice's input, the range it takes (ONNX rules, npu/ops/slice_range.h).
Expected<std::vector<ops::SliceRange>> slice_ranges(const Graph& g, const Node& n,
                                                    const std::vector<int64_t>& dims) {
  auto ints = [&](size_t i, const char* what) -> Expected<std::vector<int64_t>> {
    const NpyArray* t = g.constant(n.input(i));
    if (!t) return make_error(EINVAL, std::string("Slice ") + what + " are not constant");
    return format::to_ints(*t);
  };
  auto starts = ints(1, "starts");
  if (!starts) return starts.error();
  auto ends = ints(2, "ends");
  if (!ends) return ends.error();
  const auto rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> axes(starts->size()), steps(starts->size(), 1);
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<int64_t>(i);
  if (n.input(3) >= 0) {
    auto a = ints(3, "axes");
    if (!a) return a.error();
    axes = std::move(*a);
  }
  if (n.input(4) >= 0) {
    auto s = ints(4, "steps");
    if (!s) return s.error();
    steps = std::move(*s);
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size()) {
    return make_error(EINVAL, "Slice starts, ends, axes and steps have different lengths");
  }
  std::vector<ops::SliceRange> r(dims.size());
  for (size_t a = 0; a < dims.size(); ++a) r[a] = {0, 1, dims[a]};
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return make_error(EINVAL, "Slice axis out of range");
    if (steps[i] <= 0) return make_error(EINVAL, "Slice step is not positive");
    r[static_cast<size_t>(a)] =
        ops::slice_range(dims[static_cast<size_t>(a)], (*starts)[i], (*ends)[i], steps[i]);
  }
  return r;
}

}  // namespace

/// Slice (positive steps, constant parameters; support.cpp). When the selected elements are
/// one run of the input's storage (in its stored order: whole inner dims, then one partial
/// dim, then single indices) the output aliases those bytes; otherwise a COPY reads the
/// strided view of them into new storage in the input's order.
Expected<void> lower_slice(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x), yd = L.dims(y);
  if (!xd) return xd.error();
  if (!yd) return yd.error();
  auto ranges = slice_ranges(L.g, n, *xd);
  if (!ranges) return ranges.error();
  for (size_t a = 0; a < xd->size(); ++a) {
    if ((*ranges)[a].count != (*yd)[a])
      return make_error(EINVAL, "Slice output shape disagrees with its starts/ends");
  }
  if (dim_product(*yd, 0, yd->size()) == 0) return make_error(EINVAL, "empty Slice");
  auto s = L.get(x);
  if (!s) return s.error();
  // Walk the stored dims from the innermost: whole dims, at most one partial run, then dims
  // of which one index is taken.
  bool contiguous = true, partial = false;
  uint64_t offset = 0, stride = 1;
  for (size_t j = s->perm.size(); j-- > 0;) {
    const auto a = static_cast<size_t>(s->perm[j]);
    const ops::SliceRange& r = (*ranges)[a];
    const int64_t dim = (*xd)[a];
    if (partial && r.count != 1) contiguous = false;
    if (r.count != dim) partial = true;
    if (r.count > 1 && r.step != 1) contiguous = false;
    offset += static_cast<uint64_t>(r.start) * stride;
    stride *= static_cast<uint64_t>(dim);
  }
  if (contiguous) {
    const uint64_t es = isa::dtype_size(s->dtype);
    Storage sub = *s;
    sub.va += offset * es;
    sub.bytes = static_cast<uint64_t>(dim_product(*yd, 0, yd->size())) * es;
    return L.alias(y, sub, s->perm);
  }
  auto in = L.logical_view(x);
  if (!in) return in.error();
  for (size_t a = 0; a < xd->size(); ++a) {
    const ops::SliceRange& r = (*ranges)[a];
    in->va += static_cast<uint64_t>(r.start) * in->strides[a];
    in->dims[a] = static_cast<uint32_t>(r.count);
    in->strides[a] *= static_cast<uint64_t>(r.step);
  }
  NPU_TRY(L.define(y, s->perm));
  auto out = L.logical_view(y);
  if (!out) return out.error();
  codegen::CopyOp op;
  op.name = n.name;
  op.input = *in;
  op.output = *out;
  return L.layer(op, &codegen::emit_copy);
}

/// Constant-mode Pad in the input's storage order.
Expected<void> lower_pad(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x);
  if (!xd) return xd.error();
  const size_t rank = xd->size();
  if (n.attr_string("mode", "constant") != "constant")
    return make_error(EINVAL, "non-constant mode");
  if (n.input(3) >= 0) return make_error(EINVAL, "Pad axes input");
  auto pads = ints_n(L.g, n.input(1), 2 * rank, "pads");
  if (!pads) return pads.error();
  auto s = L.get(x);
  if (!s) return s.error();
  codegen::PadOp op;
  op.name = n.name;
  auto in = L.physical(x);
  if (!in) return in.error();
  auto out = L.define_desc(y, s->perm);
  if (!out) return out.error();
  op.input = *in, op.output = *out;
  for (size_t j = 0; j < rank; ++j) {
    const int64_t p = (*pads)[static_cast<size_t>(s->perm[j])];
    if (p < 0) return make_error(EINVAL, "negative pads");
    op.pad_before.push_back(static_cast<uint32_t>(p));
  }
  if (rank == 0) op.pad_before = {0};
  const std::optional<DType> t = L.g.value(x).dtype;
  if (n.input(2) >= 0) {
    if (t == DType::kFloat32 || t == DType::kFloat16) {  // fp32 bits; emit_pad narrows
      auto f = floats_n(L.g, n.input(2), 1, "constant_value");
      if (!f) return f.error();
      std::memcpy(&op.fill_bits, f->data(), 4);
    } else {
      auto v = ints_n(L.g, n.input(2), 1, "constant_value");
      if (!v) return v.error();
      op.fill_bits = static_cast<uint32_t>(static_cast<int32_t>((*v)[0]));
    }
  }
  return L.layer(op, &codegen::emit_pad);
}

/// Resize (nearest, integer factors; support.cpp): a copy from the input viewed as
/// [N, C, H, sh, W, sw] with zero strides on the factors into the output viewed the same way.
Expected<void> lower_resize(Lowering& L, const Node& n) {
  const ValueId x = n.input(0), y = n.outputs[0];
  auto xd = L.dims(x), yd = L.dims(y);
  if (!xd) return xd.error();
  if (!yd) return yd.error();
  if (xd->size() != 4) return make_error(EINVAL, "Resize of rank other than 4");
  const auto sh = static_cast<uint32_t>((*yd)[2] / (*xd)[2]);
  const auto sw = static_cast<uint32_t>((*yd)[3] / (*xd)[3]);
  auto in = L.logical_view(x);
  if (!in) return in.error();
  auto out = L.define_desc(y, identity_perm(4));
  if (!out) return out.error();
  codegen::CopyOp op;
  op.name = n.name;
  op.input = *in;
  op.input.dims = {in->dims[0], in->dims[1], in->dims[2], sh, in->dims[3], sw};
  op.input.strides = {in->stride(0), in->stride(1), in->stride(2), 0, in->stride(3), 0};
  op.output = *out;
  op.output.dims = op.input.dims;
  op.output.strides = {};
  return L.layer(op, &codegen::emit_copy);
}

}  // namespace npu::compiler::detail
