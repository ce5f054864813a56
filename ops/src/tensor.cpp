// The data-movement, shape and comparison host ops (Concat, Pad, Squeeze, Unsqueeze, Gather,
// Slice, Split, Cast, Shape, Size, Range, ConstantOfShape, Expand, Where, Equal, Less, Greater,
// Not, Floor, Ceil, ...; common.h), with ONNX semantics up to opset 18.
//
// Data movement (Concat, Split, Gather, Slice, Pad, Tile, Expand, Squeeze, Unsqueeze, Where)
// works on element bytes, so it takes every dtype; arithmetic (Cast, comparisons, Range,
// Floor/Ceil/Round) dispatches on the element type. run() checks the inputs with
// check_npy(), every index and size is validated before use, and alloc_output() caps an output
// at kMaxOutputBytes, so hostile shapes give an error, never UB or a huge allocation. Values
// that moved from an attribute to an input in some opset (Squeeze/Unsqueeze axes, Split split,
// Slice starts/ends/axes, Pad pads/value) are read from the input when given, else from the
// attribute.
//
// Cast rules (ONNX leaves out-of-range conversions undefined; C++ makes them UB): float to
// integer truncates toward zero, NaN becomes 0, values beyond the target's range (and +-inf)
// saturate to its min/max; double to float rounds to nearest and overflows to +-inf as IEEE
// does; integer to integer wraps modulo 2^N (C++20 conversion, as NumPy and onnxruntime do);
// anything to bool is "!= 0" (NaN is true); bool to anything is 0 or 1.
// Squeeze with an empty axes list squeezes every 1-dim, as onnxruntime does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <type_traits>
#include <utility>

#include "common.h"

namespace npu::ops::detail {
namespace {

/// memcpy that accepts empty ranges (whose pointers may be null).
void copy_bytes(std::byte* dst, const std::byte* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

/// One element converted with Cast's rules (file comment).
template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From{0};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (std::isnan(v)) return To{0};
    const double t = std::trunc(static_cast<double>(v));
    // max + 1 and min are powers of two (or 0), exact in double.
    const double hi = static_cast<double>(std::numeric_limits<To>::max()) + 1.0;
    if (t >= hi) return std::numeric_limits<To>::max();
    if (t < static_cast<double>(std::numeric_limits<To>::min())) {
      return std::numeric_limits<To>::min();
    }
    return static_cast<To>(t);
  } else if constexpr (std::is_same_v<To, float> && std::is_same_v<From, double>) {
    constexpr double kTie = 0x1.ffffffp127;  // FLT_MAX + half an ulp: rounds to infinity
    constexpr float kMax = std::numeric_limits<float>::max();
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (std::abs(v) >= kTie) return std::signbit(v) ? -kInf : kInf;
    if (std::abs(v) > kMax) return std::signbit(v) ? -kMax : kMax;
    return static_cast<float>(v);
  } else {
    return static_cast<To>(v);
  }
}

/// One JSON attribute value as T: integers that fit, booleans (or 0/1) for bool, numbers for
/// floats (null, "nan", "inf" and "-inf" too, since JSON has no NaN/infinity).
template <typename T>
std::optional<T> json_value(const json& v) {
  if constexpr (std::is_same_v<T, bool>) {
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1)) {
      return v.get<int64_t>() != 0;
    }
  } else if constexpr (std::is_integral_v<T>) {
    if (v.is_number_unsigned() && std::in_range<T>(v.get<uint64_t>())) {
      return static_cast<T>(v.get<uint64_t>());
    }
    if (v.is_number_integer() && std::in_range<T>(v.get<int64_t>())) {
      return static_cast<T>(v.get<int64_t>());
    }
  } else {
    if (v.is_number()) return convert<T>(v.get<double>());
    const std::string s = v.is_string() ? v.get<std::string>() : "";
    if (v.is_null() || s == "nan" || s == "NaN") return std::numeric_limits<T>::quiet_NaN();
    if (s == "inf" || s == "-inf") {
      return std::copysign(std::numeric_limits<T>::infinity(), s[0] == '-' ? T{-1} : T{1});
    }
  }
  return std::nullopt;
}

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

/// A JSON array of integers, or nullopt.
std::optional<Shape> ints_of(const json& v) {
  if (!v.is_array()) return std::nullopt;
  Shape out;
  for (const json& e : v) {
    if (!e.is_number_integer()) return std::nullopt;
    out.push_back(e.get<int64_t>());
  }
  return out;
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

/// Attribute `name`, or nullptr when absent.
const json* find_attr(const OpCall& c, const char* name) {
  auto it = c.attrs.find(name);
  return it == c.attrs.end() ? nullptr : &*it;
}

/// The values of an int32/int64 tensor, any rank (`what` names it in errors).
Expected<Shape> int_values(const OpCall& c, const NpyArray& a, const std::string& what) {
  if (a.dtype == DType::kInt64) return a.values<int64_t>();
  if (a.dtype == DType::kInt32) {
    auto v = a.view<int32_t>();
    return Shape(v.begin(), v.end());
  }
  return op_error(c, what + " must be int32 or int64, not " + format::dtype_name(a.dtype));
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

HostOutputs one(Expected<NpyArray> r) {
  if (!r) return r.error();
  return std::vector<NpyArray>{std::move(*r)};
}

/// x converted element-wise to `to` with Cast's rules.
Expected<NpyArray> convert_to(const OpCall& c, const NpyArray& x, DType to) {
  auto out = alloc_output(c, to, x.shape);
  if (!out) return out;
  NPU_TRY(dispatch_with_bool(c, x.dtype, [&]<typename F>(F) -> Expected<void> {
    return dispatch_with_bool(c, to, [&]<typename T>(T) -> Expected<void> {
      auto iv = x.view<F>();
      auto ov = out->template view<T>();
      for (size_t i = 0; i < ov.size(); ++i) ov[i] = convert<T>(iv[i]);
      return ok();
    });
  }));
  return out;
}

/// Output element at index (i0, i1, ...) is x's element at (maps[0][i0], maps[1][i1], ...),
/// with x seen as `in_shape`; a -1 in any map selects `fill` (one element's bytes) instead.
Expected<NpyArray> remap(const OpCall& c, const NpyArray& x, const Shape& in_shape,
                         const std::vector<Shape>& maps, std::span<const std::byte> fill = {}) {
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

/// x broadcast to `shape` (which broadcast() accepted).
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

/// Inputs 0 and 1, of one dtype, broadcast to their common shape.
Expected<std::pair<NpyArray, NpyArray>> broadcast_pair(const OpCall& c) {
  auto a = input(c, 0);
  if (!a) return a.error();
  auto b = input(c, 1);
  if (!b) return b.error();
  NPU_TRY(need_same_dtype(c, **a, **b));
  auto shape = broadcast(c, {&(*a)->shape, &(*b)->shape});
  if (!shape) return shape.error();
  auto ba = broadcast_to(c, **a, *shape);
  if (!ba) return ba.error();
  auto bb = broadcast_to(c, **b, *shape);
  if (!bb) return bb.error();
  return std::pair{std::move(*ba), std::move(*bb)};
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

/// Slice's source indices along one axis of size `dim` (ONNX clamping rules).
Shape slice_map(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim == 0) return {};
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  int64_t count = 0;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    if (end > start) count = (end - start - 1) / step + 1;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    const uint64_t mag = uint64_t{0} - static_cast<uint64_t>(step);  // |step|, also for INT64_MIN
    if (start > end) count = static_cast<int64_t>(static_cast<uint64_t>(start - end - 1) / mag) + 1;
  }
  Shape map(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) map[i] = start + i * step;  // |i * step| < dim here
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

/// Range over T: ceil((limit - start) / delta) elements start + i * delta.
template <typename T>
Expected<NpyArray> range_of(const OpCall& c, T start, T limit, T delta) {
  if (delta == T{0}) return op_error(c, "delta is 0");
  int64_t n = 0;
  if constexpr (std::is_floating_point_v<T>) {
    const double count = std::ceil((static_cast<double>(limit) - start) / delta);
    if (std::isnan(count) || count > 1e15)
      return op_error(c, "the number of elements is not finite");
    n = count > 0 ? static_cast<int64_t>(count) : 0;
  } else {
    // In uint64 so that limit - start cannot overflow; |delta| as uint64 also for INT64_MIN.
    const auto s = static_cast<int64_t>(start), l = static_cast<int64_t>(limit);
    const auto d = static_cast<int64_t>(delta);
    const uint64_t mag = d > 0 ? static_cast<uint64_t>(d) : uint64_t{0} - static_cast<uint64_t>(d);
    if ((d > 0 && l > s) || (d < 0 && l < s)) {
      const uint64_t diff = d > 0 ? static_cast<uint64_t>(l) - static_cast<uint64_t>(s)
                                  : static_cast<uint64_t>(s) - static_cast<uint64_t>(l);
      const uint64_t count = (diff - 1) / mag + 1;
      if (count > (uint64_t{1} << 40))
        return op_error(c, "range of " + std::to_string(count) + " elements is too large");
      n = static_cast<int64_t>(count);
    }
  }
  auto out = alloc_output(c, format::dtype_of<T>(), {n});
  if (!out) return out;
  auto ov = out->template view<T>();
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      ov[i] = start + static_cast<T>(i) * delta;
    } else {  // wraps in uint64, exact since every value lies between start and limit
      ov[i] = static_cast<T>(
          static_cast<int64_t>(static_cast<uint64_t>(int64_t{start}) +
                               static_cast<uint64_t>(i) * static_cast<uint64_t>(int64_t{delta})));
    }
  }
  return out;
}

/// The one-element tensor of a TENSOR attribute {"dtype", "dims", "values"}.
Expected<NpyArray> tensor_attr(const OpCall& c, const json& a) {
  const auto field = [&a](const char* key) {
    return a.is_object() && a.contains(key) ? a.at(key) : json();
  };
  const json t = field("dtype");
  const auto dtype = t.is_string() ? format::dtype_from_name(t.get<std::string>()) : std::nullopt;
  if (!dtype) return op_error(c, "attribute value is not a tensor of a known dtype");
  const auto dims = field("dims").is_null() ? Shape{} : ints_of(field("dims"));
  if (!dims) return op_error(c, "attribute value has dims that are not a list of ints");
  auto out = alloc_output(c, *dtype, *dims);
  if (!out) return out;
  const json values = field("values");
  if (!values.is_array() || values.size() != static_cast<size_t>(out->num_elements())) {
    return op_error(c,
                    "attribute value does not have one value per element of " + shape_text(*dims));
  }
  bool good = true;
  const auto known = dispatch_with_bool(c, *dtype, [&]<typename T>(T) -> Expected<void> {
    auto ov = out->template view<T>();
    for (size_t i = 0; i < ov.size() && good; ++i) {
      const auto v = json_value<T>(values[i]);
      good = v.has_value();
      if (good) ov[i] = *v;
    }
    return ok();
  });
  if (!known || !good) {
    return op_error(
        c, std::string("attribute value has a value that is not ") + format::dtype_name(*dtype));
  }
  return out;
}

/// Which dtypes a bool-valued binary op takes.
enum class Takes { kAny, kNumbers, kBools };

/// A broadcasting comparison or logical op with a bool result: `fn` on every element pair.
template <typename Fn>
HostOutputs bool_binary(const OpCall& c, Takes takes, Fn fn) {
  auto pair = broadcast_pair(c);
  if (!pair) return pair.error();
  const NpyArray& a = pair->first;
  const NpyArray& b = pair->second;
  NpyArray out = NpyArray::zeros(DType::kBool, a.shape);
  auto ov = out.view<bool>();
  const auto compare = [&]<typename T>(T) -> Expected<void> {
    auto av = a.view<T>();
    auto bv = b.view<T>();
    for (size_t i = 0; i < ov.size(); ++i) ov[i] = fn(av[i], bv[i]);
    return ok();
  };
  // dispatch() rejects bool, as the numeric comparisons do.
  NPU_TRY(takes == Takes::kNumbers ? dispatch(c, a, compare)
                                   : dispatch_with_bool(c, a.dtype, compare));
  return single(std::move(out));
}

/// Floor, Ceil, Round (float32, float64).
template <typename Fn>
HostOutputs rounding(const OpCall& c, Fn fn) {
  auto x = input(c, 0);
  if (!x) return x.error();
  NpyArray out = **x;
  return dispatch(c, out, [&]<typename T>(T) -> HostOutputs {
    if constexpr (std::is_floating_point_v<T>) {
      for (T& v : out.view<T>()) v = fn(v);
    }
    return single(std::move(out));
  });
}

}  // namespace

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

HostOutputs cast(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto to = required_int_attr(c, "to");
  if (!to) return to.error();
  static const std::map<int64_t, DType> kOnnxTypes = {
      {1, DType::kFloat32},  {2, DType::kUint8},   {3, DType::kInt8},   {4, DType::kUint16},
      {5, DType::kInt16},    {6, DType::kInt32},   {7, DType::kInt64},  {9, DType::kBool},
      {11, DType::kFloat64}, {12, DType::kUint32}, {13, DType::kUint64}};
  auto it = kOnnxTypes.find(*to);
  if (it == kOnnxTypes.end()) return op_error(c, "to " + std::to_string(*to) + " is not supported");
  return one(convert_to(c, **x, it->second));
}

HostOutputs shape_op(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  const auto rank = static_cast<int64_t>((*x)->shape.size());
  auto start = int_attr(c, "start", 0);
  if (!start) return start.error();
  auto end = int_attr(c, "end", rank);
  if (!end) return end.error();
  const auto norm = [rank](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  const int64_t b = norm(*start), e = std::max(b, norm(*end));
  const Shape dims((*x)->shape.begin() + b, (*x)->shape.begin() + e);
  return std::vector<NpyArray>{NpyArray::of<int64_t>({e - b}, dims)};
}

HostOutputs size_op(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  return std::vector<NpyArray>{NpyArray::of<int64_t>({}, Shape{(*x)->num_elements()})};
}

HostOutputs range(const OpCall& c) {
  const NpyArray* args[3];
  for (size_t i = 0; i < 3; ++i) {
    auto a = input(c, i);
    if (!a) return a.error();
    if ((*a)->num_elements() != 1)
      return op_error(c, "input " + std::to_string(i) + " is not a scalar");
    args[i] = *a;
  }
  NPU_TRY(need_same_dtype(c, *args[0], *args[1]));
  NPU_TRY(need_same_dtype(c, *args[0], *args[2]));
  return one(dispatch(c, *args[0], [&]<typename T>(T) -> Expected<NpyArray> {
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, int16_t> ||
                  std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      return range_of<T>(c, args[0]->view<T>()[0], args[1]->view<T>()[0], args[2]->view<T>()[0]);
    } else {
      return op_error(c, "unreachable");  // the registry admits no other dtype
    }
  }));
}

HostOutputs constant_of_shape(const OpCall& c) {
  auto shape_in = input(c, 0);
  if (!shape_in) return shape_in.error();
  auto shape = int_values(c, **shape_in, "shape");
  if (!shape) return shape.error();
  NpyArray value = NpyArray::of<float>({}, std::vector<float>{0.0f});
  if (const json* a = find_attr(c, "value")) {
    auto v = tensor_attr(c, *a);
    if (!v) return v.error();
    if (v->num_elements() != 1) return op_error(c, "attribute value must have one element");
    value = std::move(*v);
  }
  auto out = alloc_output(c, value.dtype, *shape);
  if (!out) return out.error();
  const size_t es = value.data.size();
  for (size_t i = 0; i < out->data.size(); i += es)
    std::memcpy(out->data.data() + i, value.data.data(), es);
  return std::vector<NpyArray>{std::move(*out)};
}

HostOutputs where(const OpCall& c) {
  auto cond = input(c, 0);
  if (!cond) return cond.error();
  auto x = input(c, 1);
  if (!x) return x.error();
  auto y = input(c, 2);
  if (!y) return y.error();
  NPU_TRY(need_same_dtype(c, **x, **y));
  auto shape = broadcast(c, {&(*cond)->shape, &(*x)->shape, &(*y)->shape});
  if (!shape) return shape.error();
  auto bc = broadcast_to(c, **cond, *shape);
  if (!bc) return bc.error();
  auto out = broadcast_to(c, **x, *shape);
  if (!out) return out.error();
  auto by = broadcast_to(c, **y, *shape);
  if (!by) return by.error();
  const size_t es = format::dtype_size(out->dtype);
  for (size_t i = 0; i < bc->data.size(); ++i) {
    if (bc->data[i] == std::byte{0})
      std::memcpy(out->data.data() + i * es, by->data.data() + i * es, es);
  }
  return std::vector<NpyArray>{std::move(*out)};
}

HostOutputs logical_not(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  NpyArray out = **x;
  for (std::byte& b : out.data) b ^= std::byte{1};
  return std::vector<NpyArray>{std::move(out)};
}

HostOutputs equal(const OpCall& c) {
  return bool_binary(c, Takes::kAny, [](auto a, auto b) { return a == b; });
}

HostOutputs less(const OpCall& c) {
  return bool_binary(c, Takes::kNumbers, [](auto a, auto b) { return a < b; });
}

HostOutputs less_or_equal(const OpCall& c) {
  return bool_binary(c, Takes::kNumbers, [](auto a, auto b) { return a <= b; });
}

HostOutputs greater(const OpCall& c) {
  return bool_binary(c, Takes::kNumbers, [](auto a, auto b) { return a > b; });
}

HostOutputs greater_or_equal(const OpCall& c) {
  return bool_binary(c, Takes::kNumbers, [](auto a, auto b) { return a >= b; });
}

HostOutputs logical_and(const OpCall& c) {
  return bool_binary(c, Takes::kBools, [](auto a, auto b) { return a && b; });
}

HostOutputs logical_or(const OpCall& c) {
  return bool_binary(c, Takes::kBools, [](auto a, auto b) { return a || b; });
}

HostOutputs logical_xor(const OpCall& c) {
  return bool_binary(c, Takes::kBools, [](auto a, auto b) { return a != b; });
}

HostOutputs floor_op(const OpCall& c) {
  return rounding(c, [](auto v) { return std::floor(v); });
}

HostOutputs ceil_op(const OpCall& c) {
  return rounding(c, [](auto v) { return std::ceil(v); });
}

/// Half to even: nearbyint in the default FE_TONEAREST mode (never changed here).
HostOutputs round_op(const OpCall& c) {
  return rounding(c, [](auto v) { return std::nearbyint(v); });
}

}  // namespace npu::ops::detail
