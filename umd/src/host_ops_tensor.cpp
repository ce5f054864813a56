// The tensor/shape host ops (see host_ops_tensor.h), with ONNX semantics up to opset 18.
//
// Data movement (Concat, Split, Gather, Slice, Pad, Tile, Expand, Squeeze, Unsqueeze, Where)
// works on element bytes, so it takes every dtype; arithmetic (Cast, comparisons, Range,
// Floor/Ceil/Round) dispatches on the element type. Inputs are checked with check_npy() first,
// every index and size is validated before use, and an output is capped at kMaxOutputBytes, so
// hostile shapes give an error, never UB or a huge allocation. Values that moved from an
// attribute to an input in some opset (Squeeze/Unsqueeze axes, Split split, Slice starts/ends/
// axes, Pad pads/value) are read from the input when given, else from the attribute.
//
// Cast rules (ONNX leaves out-of-range conversions undefined; C++ makes them UB): float to
// integer truncates toward zero, NaN becomes 0, values beyond the target's range (and +-inf)
// saturate to its min/max; double to float rounds to nearest and overflows to +-inf as IEEE
// does; integer to integer wraps modulo 2^N (C++20 conversion, as NumPy and onnxruntime do);
// anything to bool is "!= 0" (NaN is true); bool to anything is 0 or 1.
// Squeeze with an empty axes list squeezes every 1-dim, as onnxruntime does.
#include "host_ops_tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

namespace npu::detail {
namespace {

using format::DType;
using format::NpyArray;
using json = nlohmann::json;
using Shape = std::vector<int64_t>;
using Result = Expected<std::vector<NpyArray>>;

constexpr int64_t kDefaultOpset = 17;
constexpr uint64_t kMaxOutputBytes = uint64_t{1} << 32;

std::string dims_text(std::span<const int64_t> dims) {
  std::string text;
  for (int64_t d : dims) text += (text.empty() ? "[" : ", ") + std::to_string(d);
  return text.empty() ? "[]" : text + "]";
}

/// memcpy that accepts empty ranges (whose pointers may be null).
void copy_bytes(std::byte* dst, const std::byte* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

/// Calls f(std::type_identity<T>{}) for the element type T of `t`; false for float16.
template <typename F>
bool with_type(DType t, F&& f) {
  const auto visit = [&]<typename... Ts>(std::type_identity<Ts>...) {
    return ((t == format::dtype_of<Ts>() && (f(std::type_identity<Ts>{}), true)) || ...);
  };
  return visit(
      std::type_identity<bool>{}, std::type_identity<int8_t>{}, std::type_identity<uint8_t>{},
      std::type_identity<int16_t>{}, std::type_identity<uint16_t>{}, std::type_identity<int32_t>{},
      std::type_identity<uint32_t>{}, std::type_identity<int64_t>{}, std::type_identity<uint64_t>{},
      std::type_identity<float>{}, std::type_identity<double>{});
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

/// One call of an op, with the accessors every op uses. Errors are "<op>: <what>".
struct Call {
  std::string_view op;
  const json& attrs;
  std::span<const NpyArray* const> inputs;
  size_t num_outputs = 1;
  int64_t opset = kDefaultOpset;

  Error fail(const std::string& what) const {
    return make_error(EINVAL, std::string(op) + ": " + what);
  }
  const NpyArray* opt(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Expected<const NpyArray*> in(size_t i) const {
    if (const NpyArray* a = opt(i)) return a;
    return fail("missing input " + std::to_string(i));
  }
  const json* attr(const char* name) const {
    if (!attrs.is_object()) return nullptr;
    auto it = attrs.find(name);
    return it == attrs.end() ? nullptr : &*it;
  }
  /// An int attribute; without `def` it is required.
  Expected<int64_t> int_attr(const char* name, std::optional<int64_t> def) const {
    const json* v = attr(name);
    if (!v && def) return *def;
    if (!v) return fail(std::string("missing attribute '") + name + "'");
    if (!v->is_number_integer()) return fail(std::string("attribute ") + name + " is not an int");
    return v->get<int64_t>();
  }
  Expected<std::optional<Shape>> ints_attr(const char* name) const {
    const json* v = attr(name);
    if (!v) return std::optional<Shape>{};
    auto list = ints_of(*v);
    if (!list) return fail(std::string("attribute ") + name + " is not a list of ints");
    return list;
  }
  Expected<std::string> string_attr(const char* name, const char* def) const {
    const json* v = attr(name);
    if (!v) return std::string(def);
    if (!v->is_string()) return fail(std::string("attribute ") + name + " is not a string");
    return v->get<std::string>();
  }
  /// `axis` in [-rank, rank) made non-negative.
  Expected<size_t> axis(int64_t a, size_t rank) const {
    const auto r = static_cast<int64_t>(rank);
    if (a < -r || a >= r) {
      return fail("axis " + std::to_string(a) + " is out of range for rank " +
                  std::to_string(rank));
    }
    return static_cast<size_t>(a < 0 ? a + r : a);
  }
  /// A list of distinct axes, each made non-negative.
  Expected<std::vector<size_t>> axes(const Shape& list, size_t rank) const {
    std::vector<size_t> out;
    for (int64_t a : list) {
      auto ax = axis(a, rank);
      if (!ax) return ax.error();
      if (std::find(out.begin(), out.end(), *ax) != out.end()) {
        return fail("axis " + std::to_string(a) + " is repeated");
      }
      out.push_back(*ax);
    }
    return out;
  }
  /// Checks that an output of this shape and dtype is valid and not too large.
  Expected<void> check_output(DType t, const Shape& shape) const {
    uint64_t bytes = format::dtype_size(t);
    bool empty = false;
    for (int64_t d : shape) {
      if (d < 0) return fail("output shape " + dims_text(shape) + " has a negative dimension");
      empty = empty || d == 0;
    }
    for (int64_t d : shape) {
      if (empty) break;
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) ||
          bytes > kMaxOutputBytes) {
        return fail("output shape " + dims_text(shape) + " is too large");
      }
    }
    return ok();
  }
  /// A zero-filled output, after check_output().
  Expected<NpyArray> alloc(DType t, Shape shape) const {
    NPU_TRY(check_output(t, shape));
    return NpyArray::zeros(t, std::move(shape));
  }
};

/// The values of an int32/int64 tensor, any rank (`what` names it in errors).
Expected<Shape> int_values(const Call& c, const NpyArray& a, const std::string& what) {
  if (a.dtype == DType::kInt64) return a.values<int64_t>();
  if (a.dtype == DType::kInt32) {
    auto v = a.view<int32_t>();
    return Shape(v.begin(), v.end());
  }
  return c.fail(what + " must be int32 or int64, not " + format::dtype_name(a.dtype));
}

/// An int list from input i when given (a tensor of rank <= 1), else from attribute `name`.
Expected<std::optional<Shape>> ints_arg(const Call& c, size_t i, const char* name) {
  const NpyArray* a = c.opt(i);
  if (!a) return c.ints_attr(name);
  if (a->shape.size() > 1) return c.fail(std::string(name) + " must be a 1-d tensor");
  auto v = int_values(c, *a, name);
  if (!v) return v.error();
  return std::optional<Shape>{std::move(*v)};
}

Expected<Shape> required_ints(const Call& c, size_t i, const char* name) {
  auto v = ints_arg(c, i, name);
  if (!v) return v.error();
  if (!*v) return c.fail(std::string("missing ") + name);
  return std::move(**v);
}

Expected<void> same_dtype(const Call& c, const NpyArray& a, const NpyArray& b) {
  if (a.dtype == b.dtype) return ok();
  return c.fail(std::string("inputs have different dtypes ") + format::dtype_name(a.dtype) +
                " and " + format::dtype_name(b.dtype));
}

Error bad_dtype(const Call& c, DType t) {
  return c.fail(std::string("dtype ") + format::dtype_name(t) + " is not supported");
}

Result one(Expected<NpyArray> r) {
  if (!r) return r.error();
  return std::vector<NpyArray>{std::move(*r)};
}

/// x converted element-wise to `to` with Cast's rules.
Expected<NpyArray> convert_to(const Call& c, const NpyArray& x, DType to) {
  auto out = c.alloc(to, x.shape);
  if (!out) return out;
  bool done = false;
  with_type(x.dtype, [&](auto from) {
    done = with_type(to, [&](auto dst) {
      using F = typename decltype(from)::type;
      using T = typename decltype(dst)::type;
      auto iv = x.view<F>();
      auto ov = out->template view<T>();
      for (size_t i = 0; i < ov.size(); ++i) ov[i] = convert<T>(iv[i]);
    });
  });
  if (!done) return bad_dtype(c, to == DType::kFloat16 ? to : x.dtype);
  return out;
}

/// Output element at index (i0, i1, ...) is x's element at (maps[0][i0], maps[1][i1], ...),
/// with x seen as `in_shape`; a -1 in any map selects `fill` (one element's bytes) instead.
Expected<NpyArray> remap(const Call& c, const NpyArray& x, const Shape& in_shape,
                         const std::vector<Shape>& maps, std::span<const std::byte> fill = {}) {
  Shape shape;
  for (const Shape& m : maps) shape.push_back(static_cast<int64_t>(m.size()));
  auto out = c.alloc(x.dtype, shape);
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

/// The NumPy broadcast of the shapes, or an error naming them.
Expected<Shape> broadcast_shape(const Call& c, std::initializer_list<const Shape*> shapes) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Shape out(rank, 1);
  for (const Shape* s : shapes) {
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t& o = out[rank - s->size() + i];
      const int64_t d = (*s)[i];
      if (d != o && d != 1 && o != 1) {
        std::string names;
        for (const Shape* t : shapes) names += (names.empty() ? "" : " and ") + dims_text(*t);
        return c.fail("shapes " + names + " do not broadcast");
      }
      if (o == 1) o = d;
    }
  }
  return out;
}

/// x broadcast to `shape` (which broadcast_shape() accepted).
Expected<NpyArray> broadcast_to(const Call& c, const NpyArray& x, const Shape& shape) {
  if (x.shape == shape) return x;
  Shape in_shape(shape.size() - x.shape.size(), 1);
  in_shape.insert(in_shape.end(), x.shape.begin(), x.shape.end());
  NPU_TRY(c.check_output(x.dtype, shape));
  std::vector<Shape> maps(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    for (int64_t i = 0; i < shape[d]; ++i) maps[d].push_back(in_shape[d] == 1 ? 0 : i);
  }
  return remap(c, x, in_shape, maps);
}

/// Inputs 0 and 1, of one dtype, broadcast to their common shape.
Expected<std::pair<NpyArray, NpyArray>> broadcast_pair(const Call& c) {
  auto a = c.in(0);
  if (!a) return a.error();
  auto b = c.in(1);
  if (!b) return b.error();
  NPU_TRY(same_dtype(c, **a, **b));
  auto shape = broadcast_shape(c, {&(*a)->shape, &(*b)->shape});
  if (!shape) return shape.error();
  auto ba = broadcast_to(c, **a, *shape);
  if (!ba) return ba.error();
  auto bb = broadcast_to(c, **b, *shape);
  if (!bb) return bb.error();
  return std::pair{std::move(*ba), std::move(*bb)};
}

// ---- ops ----

Result concat(const Call& c) {
  if (c.inputs.empty()) return c.fail("needs at least one input");
  std::vector<const NpyArray*> xs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    auto x = c.in(i);
    if (!x) return x.error();
    xs.push_back(*x);
  }
  auto axis_attr = c.int_attr("axis", c.opset < 4 ? std::optional<int64_t>(1) : std::nullopt);
  if (!axis_attr) return axis_attr.error();
  const NpyArray& first = *xs[0];
  auto axis = c.axis(*axis_attr, first.shape.size());
  if (!axis) return axis.error();
  Shape shape = first.shape;
  shape[*axis] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    NPU_TRY(same_dtype(c, first, *xs[i]));
    bool match = xs[i]->shape.size() == first.shape.size();
    for (size_t d = 0; match && d < shape.size(); ++d) {
      match = d == *axis || xs[i]->shape[d] == first.shape[d];
    }
    if (!match) {
      return c.fail("input " + std::to_string(i) + " shape " + dims_text(xs[i]->shape) +
                    " does not match " + dims_text(first.shape) + " outside axis " +
                    std::to_string(*axis));
    }
    shape[*axis] += xs[i]->shape[*axis];
  }
  auto out = c.alloc(first.dtype, shape);
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

/// Split's chunk sizes along an axis of size `dim`.
Expected<Shape> split_sizes(const Call& c, int64_t dim) {
  auto split = ints_arg(c, 1, "split");
  if (!split) return split.error();
  const auto n = static_cast<int64_t>(c.num_outputs);
  if (*split) {
    int64_t sum = 0;
    for (int64_t s : **split) {
      if (s < 0) return c.fail("split " + dims_text(**split) + " has a negative size");
      sum += std::min(s, dim + 1);
    }
    if ((*split)->size() != c.num_outputs || sum != dim) {
      return c.fail("split " + dims_text(**split) + " does not cut " + std::to_string(dim) +
                    " into " + std::to_string(n) + " outputs");
    }
    return std::move(**split);
  }
  auto parts = c.int_attr("num_outputs", n);
  if (!parts) return parts.error();
  if (n <= 0) return c.fail("the node has no outputs");
  if (*parts != n) {
    return c.fail("num_outputs " + std::to_string(*parts) + " but the node has " +
                  std::to_string(n) + " outputs");
  }
  const int64_t chunk = dim / n + (dim % n != 0 ? 1 : 0);
  const int64_t last = dim - chunk * (n - 1);
  if (dim % n != 0 && (c.opset < 18 || last < 0)) {
    return c.fail("axis of size " + std::to_string(dim) + " does not split into " +
                  std::to_string(n) + " equal parts");
  }
  Shape sizes(static_cast<size_t>(n), chunk);
  sizes.back() = last;
  return sizes;
}

Result split(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  auto axis_attr = c.int_attr("axis", 0);
  if (!axis_attr) return axis_attr.error();
  auto axis = c.axis(*axis_attr, (*x)->shape.size());
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

Result gather(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  auto ind = c.in(1);
  if (!ind) return ind.error();
  auto axis_attr = c.int_attr("axis", 0);
  if (!axis_attr) return axis_attr.error();
  const Shape& s = (*x)->shape;
  auto axis = c.axis(*axis_attr, s.size());
  if (!axis) return axis.error();
  auto idx = int_values(c, **ind, "indices");
  if (!idx) return idx.error();
  const int64_t dim = s[*axis];
  for (int64_t& i : *idx) {
    if (i < -dim || i >= dim) {
      return c.fail("index " + std::to_string(i) + " is out of range for axis " +
                    std::to_string(*axis) + " of size " + std::to_string(dim));
    }
    if (i < 0) i += dim;
  }
  Shape shape(s.begin(), s.begin() + static_cast<ptrdiff_t>(*axis));
  shape.insert(shape.end(), (*ind)->shape.begin(), (*ind)->shape.end());
  shape.insert(shape.end(), s.begin() + static_cast<ptrdiff_t>(*axis) + 1, s.end());
  auto out = c.alloc((*x)->dtype, shape);
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

Result slice(const Call& c) {
  auto x = c.in(0);
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
    return c.fail("starts, ends, axes and steps have different lengths");
  }
  const Shape& s = (*x)->shape;
  auto axes = c.axes(axes_list, s.size());
  if (!axes) return axes.error();
  std::vector<Shape> maps = identity_maps(s);
  for (size_t i = 0; i < n; ++i) {
    if (step_list[i] == 0) return c.fail("step is 0 for axis " + std::to_string(axes_list[i]));
    const size_t a = (*axes)[i];
    maps[a] = slice_map(s[a], (*starts)[i], (*ends)[i], step_list[i]);
  }
  return one(remap(c, **x, s, maps));
}

/// Pad's padding value as one element of `t`: input 2 (opset >= 11), attribute value, or 0.
Expected<NpyArray> pad_value(const Call& c, DType t) {
  if (const NpyArray* v = c.opt(2)) {
    if (v->num_elements() != 1) return c.fail("constant_value must have one element");
    return convert_to(c, NpyArray{v->dtype, {}, v->data}, t);
  }
  const json* a = c.attr("value");
  if (a && !a->is_number()) return c.fail("attribute value is not a number");
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

Result pad(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  auto mode = c.string_attr("mode", "constant");
  if (!mode) return mode.error();
  if (*mode != "constant" && *mode != "reflect" && *mode != "edge" && *mode != "wrap") {
    return c.fail("mode '" + *mode + "' is not supported");
  }
  auto pads = required_ints(c, 1, "pads");
  if (!pads) return pads.error();
  const Shape& s = (*x)->shape;
  auto axes_arg = ints_arg(c, 3, "axes");
  if (!axes_arg) return axes_arg.error();
  Shape axes_list(s.size());
  for (size_t i = 0; i < s.size(); ++i) axes_list[i] = static_cast<int64_t>(i);
  if (*axes_arg) axes_list = **axes_arg;
  auto axes = c.axes(axes_list, s.size());
  if (!axes) return axes.error();
  const size_t n = axes->size();
  if (pads->size() != 2 * n) {
    return c.fail("pads has " + std::to_string(pads->size()) + " values for " + std::to_string(n) +
                  " axes");
  }
  auto value = pad_value(c, (*x)->dtype);
  if (!value) return value.error();
  constexpr int64_t kLimit = int64_t{1} << 40;
  Shape shape = s;
  for (size_t i = 0; i < n; ++i) {
    const int64_t b = (*pads)[i], e = (*pads)[i + n];
    if (b < -kLimit || b > kLimit || e < -kLimit || e > kLimit) {
      return c.fail("pads " + dims_text(*pads) + " are out of range");
    }
    shape[(*axes)[i]] += b + e;
  }
  NPU_TRY(c.check_output((*x)->dtype, shape));
  std::vector<Shape> maps = identity_maps(s);
  for (size_t i = 0; i < n; ++i) {
    const size_t a = (*axes)[i];
    if (s[a] == 0 && shape[a] > 0 && *mode != "constant") {
      return c.fail("cannot pad empty axis " + std::to_string(a) + " in mode " + *mode);
    }
    maps[a].clear();
    for (int64_t j = 0; j < shape[a]; ++j) {
      maps[a].push_back(pad_source(*mode, j - (*pads)[i], s[a]));
    }
  }
  return one(remap(c, **x, s, maps, value->data));
}

Result tile(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  auto reps_in = c.in(1);
  if (!reps_in) return reps_in.error();
  auto reps = int_values(c, **reps_in, "repeats");
  if (!reps) return reps.error();
  const Shape& s = (*x)->shape;
  if (reps->size() != s.size() || (*reps_in)->shape.size() != 1) {
    return c.fail("repeats " + dims_text(*reps) + " does not match rank " +
                  std::to_string(s.size()));
  }
  Shape shape = s;
  for (size_t d = 0; d < s.size(); ++d) {
    if ((*reps)[d] < 0) return c.fail("repeats " + dims_text(*reps) + " has a negative value");
    if (__builtin_mul_overflow(s[d], (*reps)[d], &shape[d])) {
      return c.fail("output of repeats " + dims_text(*reps) + " is too large");
    }
  }
  NPU_TRY(c.check_output((*x)->dtype, shape));
  std::vector<Shape> maps(s.size());
  for (size_t d = 0; d < s.size(); ++d) {
    for (int64_t i = 0; i < shape[d]; ++i) maps[d].push_back(i % s[d]);
  }
  return one(remap(c, **x, s, maps));
}

Result expand(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  auto shape_in = c.in(1);
  if (!shape_in) return shape_in.error();
  auto target = int_values(c, **shape_in, "shape");
  if (!target) return target.error();
  for (int64_t d : *target) {
    if (d < 0) return c.fail("shape " + dims_text(*target) + " has a negative dimension");
  }
  auto shape = broadcast_shape(c, {&(*x)->shape, &*target});
  if (!shape) return shape.error();
  return one(broadcast_to(c, **x, *shape));
}

Result squeeze(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  auto axes_arg = ints_arg(c, 1, "axes");
  if (!axes_arg) return axes_arg.error();
  const Shape& s = (*x)->shape;
  std::vector<bool> drop(s.size(), false);
  if (*axes_arg && !(*axes_arg)->empty()) {
    auto axes = c.axes(**axes_arg, s.size());
    if (!axes) return axes.error();
    for (size_t a : *axes) {
      if (s[a] != 1) {
        return c.fail("axis " + std::to_string(a) + " of shape " + dims_text(s) +
                      " is not of size 1");
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

Result unsqueeze(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  auto list = required_ints(c, 1, "axes");
  if (!list) return list.error();
  const Shape& s = (*x)->shape;
  const size_t rank = s.size() + list->size();
  auto axes = c.axes(*list, rank);
  if (!axes) return axes.error();
  NpyArray out = **x;
  out.shape.assign(rank, 1);
  auto next = s.begin();
  for (size_t d = 0; d < rank; ++d) {
    if (std::find(axes->begin(), axes->end(), d) == axes->end()) out.shape[d] = *next++;
  }
  return std::vector<NpyArray>{std::move(out)};
}

Result cast(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  auto to = c.int_attr("to", std::nullopt);
  if (!to) return to.error();
  static const std::map<int64_t, DType> kOnnxTypes = {
      {1, DType::kFloat32},  {2, DType::kUint8},   {3, DType::kInt8},   {4, DType::kUint16},
      {5, DType::kInt16},    {6, DType::kInt32},   {7, DType::kInt64},  {9, DType::kBool},
      {11, DType::kFloat64}, {12, DType::kUint32}, {13, DType::kUint64}};
  auto it = kOnnxTypes.find(*to);
  if (it == kOnnxTypes.end()) return c.fail("to " + std::to_string(*to) + " is not supported");
  return one(convert_to(c, **x, it->second));
}

Result shape_op(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  const auto rank = static_cast<int64_t>((*x)->shape.size());
  auto start = c.int_attr("start", 0);
  if (!start) return start.error();
  auto end = c.int_attr("end", rank);
  if (!end) return end.error();
  const auto norm = [rank](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  const int64_t b = norm(*start), e = std::max(b, norm(*end));
  const Shape dims((*x)->shape.begin() + b, (*x)->shape.begin() + e);
  return std::vector<NpyArray>{NpyArray::of<int64_t>({e - b}, dims)};
}

Result size_op(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  return std::vector<NpyArray>{NpyArray::of<int64_t>({}, Shape{(*x)->num_elements()})};
}

/// Range over T: ceil((limit - start) / delta) elements start + i * delta.
template <typename T>
Expected<NpyArray> range_of(const Call& c, T start, T limit, T delta) {
  if (delta == T{0}) return c.fail("delta is 0");
  int64_t n = 0;
  if constexpr (std::is_floating_point_v<T>) {
    const double count = std::ceil((static_cast<double>(limit) - start) / delta);
    if (std::isnan(count) || count > 1e15) return c.fail("the number of elements is not finite");
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
        return c.fail("range of " + std::to_string(count) + " elements is too large");
      n = static_cast<int64_t>(count);
    }
  }
  auto out = c.alloc(format::dtype_of<T>(), {n});
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

Result range(const Call& c) {
  const NpyArray* args[3];
  for (size_t i = 0; i < 3; ++i) {
    auto a = c.in(i);
    if (!a) return a.error();
    if ((*a)->num_elements() != 1) return c.fail("input " + std::to_string(i) + " is not a scalar");
    args[i] = *a;
  }
  NPU_TRY(same_dtype(c, *args[0], *args[1]));
  NPU_TRY(same_dtype(c, *args[0], *args[2]));
  Expected<NpyArray> out = bad_dtype(c, args[0]->dtype);
  with_type(args[0]->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, int16_t> ||
                  std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      out = range_of<T>(c, args[0]->view<T>()[0], args[1]->view<T>()[0], args[2]->view<T>()[0]);
    }
  });
  return one(std::move(out));
}

/// The one-element tensor of a TENSOR attribute {"dtype", "dims", "values"}.
Expected<NpyArray> tensor_attr(const Call& c, const json& a) {
  const auto field = [&a](const char* key) {
    return a.is_object() && a.contains(key) ? a.at(key) : json();
  };
  const json t = field("dtype");
  const auto dtype = t.is_string() ? format::dtype_from_name(t.get<std::string>()) : std::nullopt;
  if (!dtype) return c.fail("attribute value is not a tensor of a known dtype");
  const auto dims = field("dims").is_null() ? Shape{} : ints_of(field("dims"));
  if (!dims) return c.fail("attribute value has dims that are not a list of ints");
  auto out = c.alloc(*dtype, *dims);
  if (!out) return out;
  const json values = field("values");
  if (!values.is_array() || values.size() != static_cast<size_t>(out->num_elements())) {
    return c.fail("attribute value does not have one value per element of " + dims_text(*dims));
  }
  bool good = true;
  const bool known = with_type(*dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto ov = out->template view<T>();
    for (size_t i = 0; i < ov.size() && good; ++i) {
      const auto v = json_value<T>(values[i]);
      good = v.has_value();
      if (good) ov[i] = *v;
    }
  });
  if (!known || !good) {
    return c.fail(std::string("attribute value has a value that is not ") +
                  format::dtype_name(*dtype));
  }
  return out;
}

Result constant_of_shape(const Call& c) {
  auto shape_in = c.in(0);
  if (!shape_in) return shape_in.error();
  auto shape = int_values(c, **shape_in, "shape");
  if (!shape) return shape.error();
  NpyArray value = NpyArray::of<float>({}, std::vector<float>{0.0f});
  if (const json* a = c.attr("value")) {
    auto v = tensor_attr(c, *a);
    if (!v) return v.error();
    if (v->num_elements() != 1) return c.fail("attribute value must have one element");
    value = std::move(*v);
  }
  auto out = c.alloc(value.dtype, *shape);
  if (!out) return out.error();
  const size_t es = value.data.size();
  for (size_t i = 0; i < out->data.size(); i += es)
    std::memcpy(out->data.data() + i, value.data.data(), es);
  return std::vector<NpyArray>{std::move(*out)};
}

Result where(const Call& c) {
  auto cond = c.in(0);
  if (!cond) return cond.error();
  auto x = c.in(1);
  if (!x) return x.error();
  auto y = c.in(2);
  if (!y) return y.error();
  if ((*cond)->dtype != DType::kBool) return c.fail("condition must be bool");
  NPU_TRY(same_dtype(c, **x, **y));
  auto shape = broadcast_shape(c, {&(*cond)->shape, &(*x)->shape, &(*y)->shape});
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

/// Which dtypes a bool-valued binary op takes.
enum class Takes { kAny, kNumbers, kBools };

/// A broadcasting comparison or logical op with a bool result: `fn` on every element pair.
template <typename Fn>
std::function<Result(const Call&)> bool_binary(Takes takes, Fn fn) {
  return [takes, fn](const Call& c) -> Result {
    auto pair = broadcast_pair(c);
    if (!pair) return pair.error();
    const NpyArray& a = pair->first;
    const NpyArray& b = pair->second;
    const bool is_bool = a.dtype == DType::kBool;
    if ((takes == Takes::kNumbers && is_bool) || (takes == Takes::kBools && !is_bool)) {
      return bad_dtype(c, a.dtype);
    }
    NpyArray out = NpyArray::zeros(DType::kBool, a.shape);
    auto ov = out.view<bool>();
    if (!with_type(a.dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          auto av = a.view<T>();
          auto bv = b.view<T>();
          for (size_t i = 0; i < ov.size(); ++i) ov[i] = fn(av[i], bv[i]);
        })) {
      return bad_dtype(c, a.dtype);
    }
    return std::vector<NpyArray>{std::move(out)};
  };
}

Result not_op(const Call& c) {
  auto x = c.in(0);
  if (!x) return x.error();
  if ((*x)->dtype != DType::kBool) return bad_dtype(c, (*x)->dtype);
  NpyArray out = **x;
  for (std::byte& b : out.data) b ^= std::byte{1};
  return std::vector<NpyArray>{std::move(out)};
}

/// Floor, Ceil, Round (float32, float64).
template <typename Fn>
std::function<Result(const Call&)> rounding(Fn fn) {
  return [fn](const Call& c) -> Result {
    auto x = c.in(0);
    if (!x) return x.error();
    NpyArray out = **x;
    bool is_float = false;
    with_type(out.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point_v<T>) {
        for (T& v : out.view<T>()) v = fn(v);
        is_float = true;
      }
    });
    if (!is_float) return bad_dtype(c, out.dtype);
    return std::vector<NpyArray>{std::move(out)};
  };
}

/// Wraps an op: reads _opset, checks the inputs, turns exceptions (allocation) into errors.
HostOpFn entry(std::function<Result(const Call&)> fn) {
  return [fn = std::move(fn)](std::string_view op, const json& attrs,
                              std::span<const NpyArray* const> inputs,
                              size_t num_outputs) -> Result {
    try {
      Call c{op, attrs, inputs, num_outputs};
      auto opset = c.int_attr("_opset", kDefaultOpset);
      if (!opset) return opset.error();
      c.opset = *opset;
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i]) {
          NPU_TRY(format::check_npy(*inputs[i], std::string(op) + ": input " + std::to_string(i)));
        }
      }
      return fn(c);
    } catch (const std::bad_alloc&) {
      return make_error(ENOMEM, std::string(op) + ": out of memory");
    } catch (const std::exception& e) {  // none expected; never let one escape
      return make_error(EINVAL, std::string(op) + ": " + e.what());
    }
  };
}

}  // namespace

const std::map<std::string, HostOpFn, std::less<>>& tensor_host_ops() {
  static const std::map<std::string, HostOpFn, std::less<>> ops = {
      {"Concat", entry(concat)},
      {"Split", entry(split)},
      {"Gather", entry(gather)},
      {"Slice", entry(slice)},
      {"Pad", entry(pad)},
      {"Tile", entry(tile)},
      {"Expand", entry(expand)},
      {"Squeeze", entry(squeeze)},
      {"Unsqueeze", entry(unsqueeze)},
      {"Cast", entry(cast)},
      {"Shape", entry(shape_op)},
      {"Size", entry(size_op)},
      {"Range", entry(range)},
      {"ConstantOfShape", entry(constant_of_shape)},
      {"Where", entry(where)},
      {"Equal", entry(bool_binary(Takes::kAny, [](auto a, auto b) { return a == b; }))},
      {"Less", entry(bool_binary(Takes::kNumbers, [](auto a, auto b) { return a < b; }))},
      {"LessOrEqual", entry(bool_binary(Takes::kNumbers, [](auto a, auto b) { return a <= b; }))},
      {"Greater", entry(bool_binary(Takes::kNumbers, [](auto a, auto b) { return a > b; }))},
      {"GreaterOrEqual",
       entry(bool_binary(Takes::kNumbers, [](auto a, auto b) { return a >= b; }))},
      {"And", entry(bool_binary(Takes::kBools, [](auto a, auto b) { return a && b; }))},
      {"Or", entry(bool_binary(Takes::kBools, [](auto a, auto b) { return a || b; }))},
      {"Xor", entry(bool_binary(Takes::kBools, [](auto a, auto b) { return a != b; }))},
      {"Not", entry(not_op)},
      {"Floor", entry(rounding([](auto v) { return std::floor(v); }))},
      {"Ceil", entry(rounding([](auto v) { return std::ceil(v); }))},
      // Half to even: nearbyint in the default FE_TONEAREST mode (never changed here).
      {"Round", entry(rounding([](auto v) { return std::nearbyint(v); }))},
  };
  return ops;
}

}  // namespace npu::detail
