// Element-addressed gather and scatter (npu/ops/operators.def): GatherElements (opset 11-13)
// reads one element of `data` per element of `indices` along an axis; ScatterND (opset 11-18)
// writes slices of `updates` into a copy of `data` at the positions `indices` names, replacing
// them (reduction "none") or combining with add/mul (opset 16) or max/min (opset 18). Both move
// element bytes when they only copy, so they take every dtype; a reduction needs a numeric
// one. Indices are int32 or int64, negative ones count from the end of their axis, and an
// index outside [-size, size) is an error naming the index and the axis (the runtime and the
// compiler prefix the node). Indices are validated before anything is written.
#include <cstring>
#include <string>

#include "attributes.h"
#include "dtype_dispatch.h"
#include "npu/cancel.h"
#include "operands.h"
#include "tensor_common.h"
#include "work_limits.h"

namespace npu::ops::detail {

namespace {

/// Element strides of a C-order shape.
Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

/// `i` made non-negative for an axis of size `dim`, or the error naming it.
Expected<int64_t> element_index(const OpCall& c, int64_t i, size_t axis, int64_t dim) {
  if (i < -dim || i >= dim) {
    return op_error(c, "index " + std::to_string(i) + " is out of range for axis " +
                           std::to_string(axis) + " of size " + std::to_string(dim));
  }
  return i < 0 ? i + dim : i;
}

/// How ScatterND combines an update with the element it lands on.
enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Expected<Reduction> reduction_attr(const OpCall& c) {
  auto r = string_attr(c, "reduction");
  if (!r) return r.error();
  const bool r16 = c.opset >= 16, r18 = c.opset >= 18;
  if (*r == "none") return Reduction::kNone;
  if (*r == "add" && r16) return Reduction::kAdd;
  if (*r == "mul" && r16) return Reduction::kMul;
  if (*r == "max" && r18) return Reduction::kMax;
  if (*r == "min" && r18) return Reduction::kMin;
  return op_error(c, "reduction '" + *r + "' is not supported at opset " + std::to_string(c.opset));
}

/// dst[i] = dst[i] (op) src[i] for n elements of T.
template <typename T>
void combine(Reduction r, std::byte* dst_bytes, const std::byte* src_bytes, int64_t n) {
  auto* dst = reinterpret_cast<T*>(dst_bytes);
  const auto* src = reinterpret_cast<const T*>(src_bytes);
  for (int64_t i = 0; i < n; ++i) {
    switch (r) {
      case Reduction::kAdd:
        dst[i] = static_cast<T>(dst[i] + src[i]);
        break;
      case Reduction::kMul:
        dst[i] = static_cast<T>(dst[i] * src[i]);
        break;
      case Reduction::kMax:
        dst[i] = dst[i] < src[i] ? src[i] : dst[i];
        break;
      case Reduction::kMin:
        dst[i] = src[i] < dst[i] ? src[i] : dst[i];
        break;
      case Reduction::kNone:
        dst[i] = src[i];
        break;
    }
  }
}

}  // namespace

HostOutputs gather_elements(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto ind = input(c, 1);
  if (!ind) return ind.error();
  const Shape& s = (*x)->shape;
  const Shape& is = (*ind)->shape;
  if (s.empty()) return op_error(c, "data must have rank >= 1");
  if (is.size() != s.size()) {
    return op_error(c,
                    "indices " + shape_text(is) + " must have the rank of data " + shape_text(s));
  }
  auto axis_attr = int_attr(c, "axis", 0);
  if (!axis_attr) return axis_attr.error();
  auto axis = norm_axis(c, *axis_attr, s.size());
  if (!axis) return axis.error();
  for (size_t d = 0; d < s.size(); ++d) {
    if (d != *axis && is[d] > s[d]) {
      return op_error(c, "indices " + shape_text(is) + " exceed data " + shape_text(s) +
                             " along axis " + std::to_string(d));
    }
  }
  auto idx = int_values(c, **ind, "indices");
  if (!idx) return idx.error();
  auto out = alloc_output(c, (*x)->dtype, is);
  if (!out) return out.error();
  const Shape st = strides_of(s);
  const size_t es = format::dtype_size((*x)->dtype);
  Shape pos(is.size(), 0);
  const auto n = static_cast<int64_t>(idx->size());
  for (int64_t k = 0; k < n; ++k) {
    if (k % 65536 == 0 && cancelled()) return op_error(c, "cancelled");
    auto i = element_index(c, (*idx)[static_cast<size_t>(k)], *axis, s[*axis]);
    if (!i) return i.error();
    int64_t src = 0;
    for (size_t d = 0; d < s.size(); ++d) src += (d == *axis ? *i : pos[d]) * st[d];
    std::memcpy(out->data.data() + static_cast<size_t>(k) * es,
                (*x)->data.data() + static_cast<size_t>(src) * es, es);
    for (size_t d = pos.size(); d-- > 0;) {
      if (++pos[d] < is[d]) break;
      pos[d] = 0;
    }
  }
  return single(std::move(*out));
}

HostOutputs scatter_nd(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto ind = input(c, 1);
  if (!ind) return ind.error();
  auto upd = input(c, 2);
  if (!upd) return upd.error();
  NPU_TRY(need_same_dtype(c, **x, **upd));
  auto reduction = reduction_attr(c);
  if (!reduction) return reduction.error();
  const Shape& s = (*x)->shape;
  const Shape& is = (*ind)->shape;
  if (is.empty()) return op_error(c, "indices must have rank >= 1");
  const int64_t k = is.back();
  if (k < 1 || k > static_cast<int64_t>(s.size())) {
    return op_error(c, "indices " + shape_text(is) + ": the last dim must be in [1, " +
                           std::to_string(s.size()) + "] for data " + shape_text(s));
  }
  Shape expected(is.begin(), is.end() - 1);
  expected.insert(expected.end(), s.begin() + k, s.end());
  if ((*upd)->shape != expected) {
    return op_error(c, "updates " + shape_text((*upd)->shape) + " do not match " +
                           shape_text(expected) + " (indices " + shape_text(is) + ", data " +
                           shape_text(s) + ")");
  }
  auto idx = int_values(c, **ind, "indices");
  if (!idx) return idx.error();
  // Every index is checked before the output is touched.
  const Shape st = strides_of(s);
  const int64_t updates = count(Shape(is.begin(), is.end() - 1));
  std::vector<int64_t> offsets(static_cast<size_t>(updates));
  for (int64_t u = 0; u < updates; ++u) {
    int64_t off = 0;
    for (int64_t d = 0; d < k; ++d) {
      const auto du = static_cast<size_t>(d);
      auto i = element_index(c, (*idx)[static_cast<size_t>(u * k + d)], du, s[du]);
      if (!i) return i.error();
      off += *i * st[du];
    }
    offsets[static_cast<size_t>(u)] = off;
  }
  NPU_TRY(check_output(c, (*x)->dtype, s));
  NpyArray out = **x;
  const int64_t slice = count(Shape(s.begin() + k, s.end()));
  const size_t es = format::dtype_size(out.dtype);
  const size_t slice_bytes = static_cast<size_t>(slice) * es;
  const std::byte* src = (*upd)->data.data();
  if (*reduction == Reduction::kNone) {
    for (int64_t u = 0; u < updates; ++u) {
      copy_bytes(out.data.data() + static_cast<size_t>(offsets[static_cast<size_t>(u)]) * es,
                 src + static_cast<size_t>(u) * slice_bytes, slice_bytes);
    }
    return single(std::move(out));
  }
  auto r = dispatch(c, out.dtype, [&](auto t) -> Expected<void> {
    using T = decltype(t);
    for (int64_t u = 0; u < updates; ++u) {
      if (u % 4096 == 0 && cancelled()) return op_error(c, "cancelled");
      combine<T>(*reduction,
                 out.data.data() + static_cast<size_t>(offsets[static_cast<size_t>(u)]) * es,
                 src + static_cast<size_t>(u) * slice_bytes, slice);
    }
    return ok();
  });
  if (!r) return r.error();
  return single(std::move(out));
}

}  // namespace npu::ops::detail
