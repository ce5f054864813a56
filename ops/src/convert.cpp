// Element conversion and comparison operators (Cast, Shape, Size, Range, ConstantOfShape,
// Where, Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not, Floor, Ceil,
// Round; npu/ops/operators.def), with ONNX semantics up to opset 18. Where moves element
// bytes (every dtype); the others dispatch on the element type.
//
// Cast rules (ONNX leaves out-of-range conversions undefined; C++ makes them UB): float to
// integer truncates toward zero, NaN becomes 0, values beyond the target's range (and +-inf)
// saturate to its min/max; double to float rounds to nearest and overflows to +-inf as IEEE
// does; integer to integer wraps modulo 2^N (C++20 conversion, as NumPy and onnxruntime do);
// anything to bool is "!= 0" (NaN is true); bool to anything is 0 or 1; float16 converts
// through float32 (to float16: round to nearest even, overflow to +-inf).
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
#include "dtype_dispatch.h"
#include "npu/isa/half.h"
#include "operands.h"
#include "tensor_common.h"
#include "work_limits.h"

namespace npu::ops::detail {
namespace {

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

}  // namespace

Expected<NpyArray> convert_to(const OpCall& c, const NpyArray& x, DType to) {
  // float16 goes through float32: widening is exact, narrowing rounds to nearest even.
  if (x.dtype == DType::kFloat16 && to != DType::kFloat16) {
    auto wide = alloc_output(c, DType::kFloat32, x.shape);
    if (!wide) return wide;
    auto fv = wide->view<float>();
    for (size_t i = 0; i < fv.size(); ++i) {
      uint16_t h;
      std::memcpy(&h, x.data.data() + 2 * i, 2);
      fv[i] = isa::fp16_to_fp32(h);
    }
    return to == DType::kFloat32 ? wide : convert_to(c, *wide, to);
  }
  if (to == DType::kFloat16 && x.dtype != DType::kFloat16) {
    auto f = x.dtype == DType::kFloat32 ? Expected<NpyArray>(x) : convert_to(c, x, DType::kFloat32);
    if (!f) return f;
    auto out = alloc_output(c, DType::kFloat16, x.shape);
    if (!out) return out;
    const auto fv = f->view<float>();
    for (size_t i = 0; i < fv.size(); ++i) {
      const uint16_t h = isa::fp32_to_fp16(fv[i]);
      std::memcpy(out->data.data() + 2 * i, &h, 2);
    }
    return out;
  }
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

namespace {

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

HostOutputs cast(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto to = required_int_attr(c, "to");
  if (!to) return to.error();
  static const std::map<int64_t, DType> kOnnxTypes = {
      {1, DType::kFloat32},  {2, DType::kUint8},    {3, DType::kInt8},    {4, DType::kUint16},
      {5, DType::kInt16},    {6, DType::kInt32},    {7, DType::kInt64},   {9, DType::kBool},
      {10, DType::kFloat16}, {11, DType::kFloat64}, {12, DType::kUint32}, {13, DType::kUint64}};
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
