// The data-movement operators (Concat, Split, Gather, Slice, Pad, Tile, Expand, Squeeze,
// Unsqueeze; npu/ops/operators.def) and the helpers the tensor operators share
// (tensor_common.h), with ONNX semantics up to opset 18. They work on element bytes, so they
// take every dtype. run() checks the inputs with check_npy(), every index and size is
// validated before use, and alloc_output() caps an output at the call's limit, so hostile
// shapes give an error, never UB or a huge allocation. Values that moved from an attribute to
// an input in some opset (Squeeze/Unsqueeze axes, Split split, Slice starts/ends/axes, Pad
// pads/value) are read from the input when given, else from the attribute. Squeeze with an
// empty axes list squeezes every 1-dim, as onnxruntime does.
//
// What they accept and compute (float32 unless noted; "numeric" = float32, float64 and the
// integer dtypes):
// - the data-movement, shape and comparison ops of host_ops_tensor (Concat, Split, Gather,
//   Slice, Pad, Tile, Expand, Squeeze, Unsqueeze, Cast, Shape, Size, Range, ConstantOfShape,
//   Where, Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not, Floor, Ceil,
//   Round);
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>
#include <utility>

#include "attributes.h"
#include "broadcasting.h"
#include "npu/ops/slice_range.h"
#include "operands.h"
#include "tensor_common.h"
#include "work_limits.h"

namespace npu::ops::detail {

namespace {

/// Steps `idx` to the next index of `shape` in C order; false after the last one.
bool next_index(Shape& idx, const Shape& shape) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

/// Element counts before and after `axis`.
std::pair<int64_t, int64_t> outer_inner(const Shape& s, size_t axis) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    if (d < axis) outer *= s[d];
    if (d > axis) inner *= s[d];
  }
  return {outer, inner};
}

/// A list of distinct axes, each made non-negative.
Expected<std::vector<size_t>> norm_axes(const OpCall& c, const Shape& list, size_t rank) {
  std::vector<size_t> out;
  for (int64_t a : list) {
    auto ax = norm_axis(c, a, rank);
    if (!ax) return ax.error();
    if (std::find(out.begin(), out.end(), *ax) != out.end()) {
      return op_error(c, "axis " + std::to_string(a) + " is repeated");
    }
    out.push_back(*ax);
  }
  return out;
}

/// An int list from input i when given (a tensor of rank <= 1), else from attribute `name`.
Expected<std::optional<Shape>> ints_arg(const OpCall& c, size_t i, const char* name) {
  const NpyArray* a = optional_input(c, i);
  if (!a) return ints_attr(c, name);
  if (a->shape.size() > 1) return op_error(c, std::string(name) + " must be a 1-d tensor");
  auto v = int_values(c, *a, name);
  if (!v) return v.error();
  return std::optional<Shape>{std::move(*v)};
}

Expected<Shape> required_ints(const OpCall& c, size_t i, const char* name) {
  auto v = ints_arg(c, i, name);
  if (!v) return v.error();
  if (!*v) return op_error(c, std::string("missing ") + name);
  return std::move(**v);
}

// ---- ops ----

/// Split's chunk sizes along an axis of size `dim`.
Expected<Shape> split_sizes(const OpCall& c, int64_t dim) {
  auto split = ints_arg(c, 1, "split");
  if (!split) return split.error();
  const auto n = static_cast<int64_t>(c.num_outputs);
  if (*split) {
    int64_t sum = 0;
    for (int64_t s : **split) {
      if (s < 0) return op_error(c, "split " + shape_text(**split) + " has a negative size");
      sum += std::min(s, dim + 1);
    }
    if ((*split)->size() != c.num_outputs || sum != dim) {
      return op_error(c, "split " + shape_text(**split) + " does not cut " + std::to_string(dim) +
                             " into " + std::to_string(n) + " outputs");
    }
    return std::move(**split);
  }
  auto parts = int_attr(c, "num_outputs", n);
  if (!parts) return parts.error();
  if (n <= 0) return op_error(c, "the node has no outputs");
  if (*parts != n) {
    return op_error(c, "num_outputs " + std::to_string(*parts) + " but the node has " +
                           std::to_string(n) + " outputs");
  }
  const int64_t chunk = dim / n + (dim % n != 0 ? 1 : 0);
  const int64_t last = dim - chunk * (n - 1);
  if (dim % n != 0 && (c.opset < 18 || last < 0)) {
    return op_error(c, "axis of size " + std::to_string(dim) + " does not split into " +
                           std::to_string(n) + " equal parts");
  }
  Shape sizes(static_cast<size_t>(n), chunk);
  sizes.back() = last;
  return sizes;
}

/// The identity map of every axis of `s` (remap's maps for "no change").
std::vector<Shape> identity_maps(const Shape& s) {
  std::vector<Shape> maps(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    for (int64_t i = 0; i < s[d]; ++i) maps[d].push_back(i);
  }
  return maps;
}

/// Slice's source indices along one axis of size `dim` (ONNX clamping rules, slice_range()).
Shape slice_map(int64_t dim, int64_t start, int64_t end, int64_t step) {
  const SliceRange r = slice_range(dim, start, end, step);
  Shape map(static_cast<size_t>(r.count));
  for (int64_t i = 0; i < r.count; ++i) map[i] = r.start + i * r.step;  // |i * step| < dim
  return map;
}

/// Pad's padding value as one element of `t`: input 2 (opset >= 11), attribute value, or 0.
Expected<NpyArray> pad_value(const OpCall& c, DType t) {
  if (const NpyArray* v = optional_input(c, 2)) {
    if (v->num_elements() != 1) return op_error(c, "constant_value must have one element");
    return convert_to(c, NpyArray{v->dtype, {}, v->data}, t);
  }
  const json* a = find_attr(c, "value");
  if (a && !a->is_number()) return op_error(c, "attribute value is not a number");
  const double value = a ? a->get<double>() : 0.0;
  return convert_to(c, NpyArray::of<double>({}, std::vector<double>{value}), t);
}

/// Pad's source index for output position j - begin along an axis of size dim, or -1.
int64_t pad_source(const std::string& mode, int64_t j, int64_t dim) {
  if (j >= 0 && j < dim) return j;
  if (mode == "constant") return -1;
  if (mode == "edge") return std::clamp<int64_t>(j, 0, dim - 1);
  if (mode == "wrap") return (j % dim + dim) % dim;
  if (dim == 1) return 0;  // reflect
  const int64_t period = 2 * (dim - 1);
  const int64_t m = (j % period + period) % period;
  return m < dim ? m : period - m;
}

}  // namespace

void copy_bytes(std::byte* dst, const std::byte* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

Expected<NpyArray> remap(const OpCall& c, const NpyArray& x, const Shape& in_shape,
                         const std::vector<Shape>& maps, std::span<const std::byte> fill) {
  Shape shape;
  for (const Shape& m : maps) shape.push_back(static_cast<int64_t>(m.size()));
  auto out = alloc_output(c, x.dtype, shape);
  if (!out || out->data.empty()) return out;
  const size_t es = format::dtype_size(x.dtype);
  const size_t rank = maps.size();
  if (rank == 0) {
    copy_bytes(out->data.data(), x.data.data(), es);
    return out;
  }
  std::vector<std::byte> pad(es);
  if (fill.size() == es) std::copy(fill.begin(), fill.end(), pad.begin());
  Shape stride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * in_shape[d + 1];
  const Shape outer(shape.begin(), shape.end() - 1);
  Shape idx(rank - 1, 0);
  std::byte* dst = out->data.data();
  do {
    int64_t base = 0;
    bool padded = false;
    for (size_t d = 0; d + 1 < rank; ++d) {
      const int64_t m = maps[d][idx[d]];
      padded = padded || m < 0;
      base += m * stride[d];
    }
    for (int64_t m : maps.back()) {
      const std::byte* src = padded || m < 0 ? pad.data() : x.data.data() + (base + m) * es;
      std::memcpy(dst, src, es);
      dst += es;
    }
  } while (next_index(idx, outer));
  return out;
}

const json* find_attr(const OpCall& c, const char* name) {
  auto it = c.attrs.find(name);
  return it == c.attrs.end() ? nullptr : &*it;
}

Expected<Shape> int_values(const OpCall& c, const NpyArray& a, const std::string& what) {
  if (a.dtype == DType::kInt64) return a.values<int64_t>();
  if (a.dtype == DType::kInt32) {
    auto v = a.view<int32_t>();
    return Shape(v.begin(), v.end());
  }
  return op_error(c, what + " must be int32 or int64, not " + format::dtype_name(a.dtype));
}

HostOutputs one(Expected<NpyArray> r) {
  if (!r) return r.error();
  return std::vector<NpyArray>{std::move(*r)};
}

Expected<NpyArray> broadcast_to(const OpCall& c, const NpyArray& x, const Shape& shape) {
  if (x.shape == shape) return x;
  Shape in_shape(shape.size() - x.shape.size(), 1);
  in_shape.insert(in_shape.end(), x.shape.begin(), x.shape.end());
  NPU_TRY(check_output(c, x.dtype, shape));
  std::vector<Shape> maps(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    for (int64_t i = 0; i < shape[d]; ++i) maps[d].push_back(in_shape[d] == 1 ? 0 : i);
  }
  return remap(c, x, in_shape, maps);
}

HostOutputs concat(const OpCall& c) {
  if (c.inputs.empty()) return op_error(c, "needs at least one input");
  std::vector<const NpyArray*> xs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    auto x = input(c, i);
    if (!x) return x.error();
    xs.push_back(*x);
  }
  auto axis_attr = c.opset < 4 ? int_attr(c, "axis", 1) : required_int_attr(c, "axis");
  if (!axis_attr) return axis_attr.error();
  const NpyArray& first = *xs[0];
  auto axis = norm_axis(c, *axis_attr, first.shape.size());
  if (!axis) return axis.error();
  Shape shape = first.shape;
  shape[*axis] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    NPU_TRY(need_same_dtype(c, first, *xs[i]));
    bool match = xs[i]->shape.size() == first.shape.size();
    for (size_t d = 0; match && d < shape.size(); ++d) {
      match = d == *axis || xs[i]->shape[d] == first.shape[d];
    }
    if (!match) {
      return op_error(c, "input " + std::to_string(i) + " shape " + shape_text(xs[i]->shape) +
                             " does not match " + shape_text(first.shape) + " outside axis " +
                             std::to_string(*axis));
    }
    shape[*axis] += xs[i]->shape[*axis];
  }
  auto out = alloc_output(c, first.dtype, shape);
  if (!out) return out.error();
  const auto [outer, inner] = outer_inner(shape, *axis);
  const size_t es = format::dtype_size(first.dtype);
  std::byte* dst = out->data.data();
  for (int64_t o = 0; o < outer; ++o) {
    for (const NpyArray* x : xs) {
      const size_t n = static_cast<size_t>(x->shape[*axis] * inner) * es;
      copy_bytes(dst, x->data.data() + o * n, n);
      dst += n;
    }
  }
  return std::vector<NpyArray>{std::move(*out)};
}

HostOutputs split(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto axis_attr = int_attr(c, "axis", 0);
  if (!axis_attr) return axis_attr.error();
  auto axis = norm_axis(c, *axis_attr, (*x)->shape.size());
  if (!axis) return axis.error();
  auto sizes = split_sizes(c, (*x)->shape[*axis]);
  if (!sizes) return sizes.error();
  const auto [outer, inner] = outer_inner((*x)->shape, *axis);
  const size_t es = format::dtype_size((*x)->dtype);
  const size_t row = static_cast<size_t>((*x)->shape[*axis] * inner) * es;
  std::vector<NpyArray> outs;
  size_t offset = 0;
  for (int64_t s : *sizes) {
    Shape shape = (*x)->shape;
    shape[*axis] = s;
    NpyArray out = NpyArray::zeros((*x)->dtype, shape);
    const size_t n = static_cast<size_t>(s * inner) * es;
    for (int64_t o = 0; o < outer; ++o) {
      copy_bytes(out.data.data() + o * n, (*x)->data.data() + o * row + offset, n);
    }
    offset += n;
    outs.push_back(std::move(out));
  }
  return outs;
}

HostOutputs gather(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto ind = input(c, 1);
  if (!ind) return ind.error();
  auto axis_attr = int_attr(c, "axis", 0);
  if (!axis_attr) return axis_attr.error();
  const Shape& s = (*x)->shape;
  auto axis = norm_axis(c, *axis_attr, s.size());
  if (!axis) return axis.error();
  auto idx = int_values(c, **ind, "indices");
  if (!idx) return idx.error();
  const int64_t dim = s[*axis];
  for (int64_t& i : *idx) {
    if (i < -dim || i >= dim) {
      return op_error(c, "index " + std::to_string(i) + " is out of range for axis " +
                             std::to_string(*axis) + " of size " + std::to_string(dim));
    }
    if (i < 0) i += dim;
  }
  Shape shape(s.begin(), s.begin() + static_cast<ptrdiff_t>(*axis));
  shape.insert(shape.end(), (*ind)->shape.begin(), (*ind)->shape.end());
  shape.insert(shape.end(), s.begin() + static_cast<ptrdiff_t>(*axis) + 1, s.end());
  auto out = alloc_output(c, (*x)->dtype, shape);
  if (!out) return out.error();
  const auto [outer, inner] = outer_inner(s, *axis);
  const size_t n = static_cast<size_t>(inner) * format::dtype_size((*x)->dtype);
  std::byte* dst = out->data.data();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : *idx) {
      copy_bytes(dst, (*x)->data.data() + static_cast<size_t>(o * dim + i) * n, n);
      dst += n;
    }
  }
  return std::vector<NpyArray>{std::move(*out)};
}

HostOutputs slice(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto starts = required_ints(c, 1, "starts");
  if (!starts) return starts.error();
  auto ends = required_ints(c, 2, "ends");
  if (!ends) return ends.error();
  auto axes_arg = ints_arg(c, 3, "axes");
  if (!axes_arg) return axes_arg.error();
  auto steps = ints_arg(c, 4, "steps");
  if (!steps) return steps.error();
  const size_t n = starts->size();
  Shape axes_list(n);
  for (size_t i = 0; i < n; ++i) axes_list[i] = static_cast<int64_t>(i);
  if (*axes_arg) axes_list = **axes_arg;
  const Shape step_list = *steps ? **steps : Shape(n, 1);
  if (ends->size() != n || axes_list.size() != n || step_list.size() != n) {
    return op_error(c, "starts, ends, axes and steps have different lengths");
  }
  const Shape& s = (*x)->shape;
  auto axes = norm_axes(c, axes_list, s.size());
  if (!axes) return axes.error();
  std::vector<Shape> maps = identity_maps(s);
  for (size_t i = 0; i < n; ++i) {
    if (step_list[i] == 0) return op_error(c, "step is 0 for axis " + std::to_string(axes_list[i]));
    const size_t a = (*axes)[i];
    maps[a] = slice_map(s[a], (*starts)[i], (*ends)[i], step_list[i]);
  }
  return one(remap(c, **x, s, maps));
}

HostOutputs pad(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto mode = string_attr(c, "mode", "constant");
  if (!mode) return mode.error();
  if (*mode != "constant" && *mode != "reflect" && *mode != "edge" && *mode != "wrap") {
    return op_error(c, "mode '" + *mode + "' is not supported");
  }
  auto pads = required_ints(c, 1, "pads");
  if (!pads) return pads.error();
  const Shape& s = (*x)->shape;
  auto axes_arg = ints_arg(c, 3, "axes");
  if (!axes_arg) return axes_arg.error();
  Shape axes_list(s.size());
  for (size_t i = 0; i < s.size(); ++i) axes_list[i] = static_cast<int64_t>(i);
  if (*axes_arg) axes_list = **axes_arg;
  auto axes = norm_axes(c, axes_list, s.size());
  if (!axes) return axes.error();
  const size_t n = axes->size();
  if (pads->size() != 2 * n) {
    return op_error(c, "pads has " + std::to_string(pads->size()) + " values for " +
                           std::to_string(n) + " axes");
  }
  auto value = pad_value(c, (*x)->dtype);
  if (!value) return value.error();
  constexpr int64_t kLimit = int64_t{1} << 40;
  Shape shape = s;
  for (size_t i = 0; i < n; ++i) {
    const int64_t b = (*pads)[i], e = (*pads)[i + n];
    if (b < -kLimit || b > kLimit || e < -kLimit || e > kLimit) {
      return op_error(c, "pads " + shape_text(*pads) + " are out of range");
    }
    shape[(*axes)[i]] += b + e;
  }
  NPU_TRY(check_output(c, (*x)->dtype, shape));
  std::vector<Shape> maps = identity_maps(s);
  for (size_t i = 0; i < n; ++i) {
    const size_t a = (*axes)[i];
    if (s[a] == 0 && shape[a] > 0 && *mode != "constant") {
      return op_error(c, "cannot pad empty axis " + std::to_string(a) + " in mode " + *mode);
    }
    maps[a].clear();
    for (int64_t j = 0; j < shape[a]; ++j) {
      maps[a].push_back(pad_source(*mode, j - (*pads)[i], s[a]));
    }
  }
  return one(remap(c, **x, s, maps, value->data));
}

HostOutputs tile(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto reps_in = input(c, 1);
  if (!reps_in) return reps_in.error();
  auto reps = int_values(c, **reps_in, "repeats");
  if (!reps) return reps.error();
  const Shape& s = (*x)->shape;
  if (reps->size() != s.size() || (*reps_in)->shape.size() != 1) {
    return op_error(
        c, "repeats " + shape_text(*reps) + " does not match rank " + std::to_string(s.size()));
  }
  Shape shape = s;
  for (size_t d = 0; d < s.size(); ++d) {
    if ((*reps)[d] < 0)
      return op_error(c, "repeats " + shape_text(*reps) + " has a negative value");
    if (__builtin_mul_overflow(s[d], (*reps)[d], &shape[d])) {
      return op_error(c, "output of repeats " + shape_text(*reps) + " is too large");
    }
  }
  NPU_TRY(check_output(c, (*x)->dtype, shape));
  std::vector<Shape> maps(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    for (int64_t i = 0; i < shape[d]; ++i) maps[d].push_back(i % s[d]);
  }
  return one(remap(c, **x, s, maps));
}

HostOutputs expand(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto shape_in = input(c, 1);
  if (!shape_in) return shape_in.error();
  auto target = int_values(c, **shape_in, "shape");
  if (!target) return target.error();
  for (int64_t d : *target) {
    if (d < 0) return op_error(c, "shape " + shape_text(*target) + " has a negative dimension");
  }
  auto shape = broadcast(c, {&(*x)->shape, &*target});
  if (!shape) return shape.error();
  return one(broadcast_to(c, **x, *shape));
}

HostOutputs squeeze(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto axes_arg = ints_arg(c, 1, "axes");
  if (!axes_arg) return axes_arg.error();
  const Shape& s = (*x)->shape;
  std::vector<bool> drop(s.size(), false);
  if (*axes_arg && !(*axes_arg)->empty()) {
    auto axes = norm_axes(c, **axes_arg, s.size());
    if (!axes) return axes.error();
    for (size_t a : *axes) {
      if (s[a] != 1) {
        return op_error(
            c, "axis " + std::to_string(a) + " of shape " + shape_text(s) + " is not of size 1");
      }
      drop[a] = true;
    }
  } else {
    for (size_t d = 0; d < s.size(); ++d) drop[d] = s[d] == 1;
  }
  NpyArray out = **x;
  out.shape.clear();
  for (size_t d = 0; d < s.size(); ++d) {
    if (!drop[d]) out.shape.push_back(s[d]);
  }
  return std::vector<NpyArray>{std::move(out)};
}

HostOutputs unsqueeze(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto list = required_ints(c, 1, "axes");
  if (!list) return list.error();
  const Shape& s = (*x)->shape;
  const size_t rank = s.size() + list->size();
  auto axes = norm_axes(c, *list, rank);
  if (!axes) return axes.error();
  NpyArray out = **x;
  out.shape.assign(rank, 1);
  auto next = s.begin();
  for (size_t d = 0; d < rank; ++d) {
    if (std::find(axes->begin(), axes->end(), d) == axes->end()) out.shape[d] = *next++;
  }
  return std::vector<NpyArray>{std::move(out)};
}

}  // namespace npu::ops::detail

namespace npu::ops {

SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step) {
  SliceRange r;
  r.step = step;
  if (dim <= 0) return r;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    if (end > start) r.count = (end - start - 1) / step + 1;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    const uint64_t mag = uint64_t{0} - static_cast<uint64_t>(step);  // |step|, also for INT64_MIN
    if (start > end)
      r.count = static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / mag) + 1;
  }
  r.start = start;
  return r;
}

}  // namespace npu::ops
