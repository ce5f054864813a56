// The elementwise, softmax and shape operators (npu/ops/ops.h) over the reference scalar rules.
//
// What they accept and compute (float32 unless noted; "numeric" = float32, float64 and the
// integer dtypes):
// - elementwise: Relu, Abs, Neg, Sign (also float64 and signed integers; integers wrap as
//   NumPy), Sigmoid, Tanh, Exp, Log, Sqrt, Erf, Reciprocal, Softplus, Gelu (opset 20, approximate
//   none or tanh), HardSwish, LeakyRelu (alpha), Elu (alpha), HardSigmoid (alpha, beta) (float32
//   and float64, computed in the input's precision); Add, Sub, Mul, Div (numeric,
//   integer Div truncates, x / 0 = 0), Max, Min, Sum (numeric, variadic), Mean (float,
//   variadic), Pow (numeric base and exponent, result in the base's dtype), Mod (numeric;
//   fmod 0: the divisor's sign, fmod 1: the dividend's, required for floats; an integer
//   divisor 0 is an error), all with NumPy
//   broadcasting; Clip (numeric; min/max inputs 1 and 2, optional, or attributes before
//   opset 11); PRelu (slope broadcast to X; opset < 7: a [C] slope is per channel);
// - Softmax, LogSoftmax: opset >= 13 over one axis (default -1); before 13 over the input
//   flattened to 2-D at axis (default 1);
// - Dropout (identity, mask all true; training mode only with ratio 0, a random ratio is
//   refused);
// - Reshape (shape input int64, 0 and -1 as ONNX, allowzero), Flatten (axis), Transpose
//   (perm, any rank), Identity (any dtype);

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <type_traits>

#include "attributes.h"
#include "broadcasting.h"
#include "dtype_dispatch.h"
#include "npu/ref/scalar.h"
#include "npu/ref/softmax.h"
#include "operands.h"
#include "permute.h"
#include "work_limits.h"

namespace npu::ops::detail {
namespace {

// ---- per-element rules beyond the ISA's (float64, other integer widths, Sign, integer Pow) ----

// Host-only unary functions (not NPU_ACT_* codes).
constexpr uint8_t kActSign = 0xF0;
constexpr uint8_t kActGeluTanh = 0xF1;  // Gelu with approximate="tanh"

/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), ONNX Gelu's tanh approximation.
template <typename T>
T gelu_tanh(T x) {
  const T k = static_cast<T>(0.7978845608028654);  // sqrt(2 / pi)
  return static_cast<T>(0.5) * x *
         (static_cast<T>(1) + std::tanh(k * (x + static_cast<T>(0.044715) * x * x * x)));
}

template <typename T>
bool is_negative(T x) {
  if constexpr (std::is_signed_v<T>) {
    return x < T{0};
  } else {
    return false;
  }
}

/// -x; integers wrap as NumPy.
template <typename T>
T negate(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return -x;
  } else {
    return static_cast<T>(0 - static_cast<uint64_t>(x));
  }
}

/// NPU_ELTWISE_* on integers of any width with NumPy's wrapping (through uint64); DIV
/// truncates toward zero and x / 0 is 0, as ref::eltwise_int.
template <typename T>
T int_binary(uint8_t op, T a, T b) {
  const auto x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
  switch (op) {
    case NPU_ELTWISE_ADD:
      return static_cast<T>(x + y);
    case NPU_ELTWISE_SUB:
      return static_cast<T>(x - y);
    case NPU_ELTWISE_MUL:
      return static_cast<T>(x * y);
    case NPU_ELTWISE_DIV:
      if (b == T{0}) return T{0};
      if (is_negative(b) && b == static_cast<T>(-1)) return negate(a);  // MIN / -1 wraps
      return static_cast<T>(a / b);
    case NPU_ELTWISE_MAX:
      return a > b ? a : b;
    case NPU_ELTWISE_MIN:
      return a < b ? a : b;
    case NPU_ELTWISE_PRELU:
      return is_negative(a) ? static_cast<T>(x * y) : a;
    default:
      return T{0};
  }
}

/// x^y for integers, wrapping like NumPy; a negative y gives 1 / x^-y truncated.
int64_t int_pow(int64_t x, int64_t y) {
  if (y < 0) return x == 1 ? 1 : (x == -1 ? ((y & 1) ? -1 : 1) : 0);
  uint64_t result = 1, base = static_cast<uint64_t>(x);
  for (auto e = static_cast<uint64_t>(y); e; e >>= 1, base *= base) {
    if (e & 1) result *= base;
  }
  return static_cast<int64_t>(result);
}

template <typename T>
T binary_value(uint8_t op, T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
    return ref::eltwise(op, a, b);
  } else if constexpr (std::is_same_v<T, double>) {
    return ref::eltwise_fp<double>(op, a, b);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    if (op == NPU_ELTWISE_PRELU) return int_binary(op, a, b);
    return ref::eltwise_int(op, a, b, NPU_DTYPE_INT32);
  } else {
    return int_binary(op, a, b);
  }
}

/// NPU_ACT_* (float32 by ref::activation, float64 by ref::activation_fp<double>, int32 by
/// ref::activation_int); Relu, Abs, Neg and Sign on the other types here.
template <typename T>
T unary_value(uint8_t func, T x, float alpha, float beta) {
  if constexpr (std::is_floating_point_v<T>) {
    if (func == kActGeluTanh) return gelu_tanh(x);
  }
  if constexpr (std::is_same_v<T, float>) {
    if (func != kActSign) return ref::activation(func, x, alpha, beta);
  } else if constexpr (std::is_same_v<T, double>) {
    if (func != kActSign) return ref::activation_fp<double>(func, x, alpha, beta);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    if (func != kActSign) return ref::activation_int(func, x, alpha, beta, NPU_DTYPE_INT32);
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return x;
  }
  switch (func) {
    case kActSign:
      return static_cast<T>((x > T{0}) - is_negative(x));
    case NPU_ACT_RELU:
      return is_negative(x) ? T{0} : x;
    case NPU_ACT_ABS:
      return is_negative(x) ? negate(x) : x;
    case NPU_ACT_NEG:
      return negate(x);
    default:  // float-only functions: the registry admits only floats for them
      return T{0};
  }
}

// ---- unary ----

/// One unary function (an NPU_ACT_* code or a host-only one) on every element; the dtypes are
/// the registry's (Relu, Abs, Neg and Sign also take signed integers, the others floats).
HostOutputs map_unary(const OpCall& c, uint8_t func, float alpha = 0, float beta = 0) {
  auto x = input(c, 0);
  if (!x) return x.error();
  return dispatch(c, **x, [&]<typename T>(T) -> HostOutputs {
    NpyArray out = **x;
    for (T& v : out.view<T>()) v = unary_value<T>(func, v, alpha, beta);
    return single(std::move(out));
  });
}

// ---- binary with NumPy broadcasting (ref::eltwise / ref::eltwise_int) ----

Expected<NpyArray> binary_values(const OpCall& c, uint8_t op, const NpyArray& a,
                                 const NpyArray& b) {
  NPU_TRY(need_same_dtype(c, a, b));
  auto shape = broadcast(c, a.shape, b.shape);
  if (!shape) return shape.error();
  auto alloc = alloc_output(c, a.dtype, *shape);
  if (!alloc) return alloc.error();
  NpyArray out = std::move(*alloc);
  const auto sa = broadcast_strides(a.shape, *shape);
  const auto sb = broadcast_strides(b.shape, *shape);
  auto r = dispatch(c, a, [&]<typename T>(T) -> HostOutputs {
    auto av = a.view<T>();
    auto bv = b.view<T>();
    auto ov = out.view<T>();
    for_each_broadcast(*shape, sa, sb, [&](int64_t o, int64_t i, int64_t j) {
      ov[o] = binary_value<T>(op, av[i], bv[j]);
    });
    return std::vector<NpyArray>{};
  });
  if (!r) return r.error();
  return out;
}

/// Add, Sub, Mul, Div and variadic Max, Min, Sum, Mean (inputs folded left to right).
HostOutputs fold_binary(const OpCall& c, uint8_t op, bool variadic, bool mean) {
  auto a = input(c, 0);
  if (!a) return a.error();
  const size_t n = variadic ? c.inputs.size() : 2;
  std::optional<NpyArray> folded;  // input 0 is read in place, not copied
  for (size_t i = 1; i < n; ++i) {
    auto b = input(c, i);
    if (!b) return b.error();
    auto r = binary_values(c, op, folded ? *folded : **a, **b);
    if (!r) return r.error();
    folded = std::move(*r);
  }
  NpyArray acc = folded ? std::move(*folded) : **a;
  if (!mean) return single(std::move(acc));
  return dispatch(c, acc, [&]<typename T>(T) -> HostOutputs {
    for (T& v : acc.view<T>()) v = static_cast<T>(v / static_cast<T>(n));
    return single(std::move(acc));
  });
}

// ---- Softmax, LogSoftmax (ref::softmax_f32) ----

// ---- shape ops ----

NpyArray with_shape(const NpyArray& x, Shape shape) {
  NpyArray out = x;
  out.shape = std::move(shape);
  return out;
}

}  // namespace

/// Pow: X and Y any numeric dtypes; the result has X's dtype. float32 ^ float32 by
/// ref::eltwise, other floating cases in double, integer ^ integer exactly with wrapping,
/// integer ^ float truncated and saturated (NumPy's power then astype).
HostOutputs pow_op(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto y = input(c, 1);
  if (!y) return y.error();
  NPU_TRY(need_numeric(c, **y, true, "exponent"));
  auto shape = broadcast(c, (*x)->shape, (*y)->shape);
  if (!shape) return shape.error();
  auto alloc = alloc_output(c, (*x)->dtype, *shape);
  if (!alloc) return alloc.error();
  NpyArray out = std::move(*alloc);
  const auto sx = broadcast_strides((*x)->shape, *shape);
  const auto sy = broadcast_strides((*y)->shape, *shape);
  const bool y_float = (*y)->dtype == DType::kFloat32 || (*y)->dtype == DType::kFloat64;
  return dispatch(c, **x, [&]<typename T>(T) -> HostOutputs {
    auto xv = (*x)->view<T>();
    auto ov = out.view<T>();
    for_each_broadcast(*shape, sx, sy, [&](int64_t o, int64_t i, int64_t j) {
      const double e = number_at(**y, j);
      if constexpr (std::is_floating_point_v<T>) {
        if (std::is_same_v<T, float> && (*y)->dtype == DType::kFloat32) {
          ov[o] = static_cast<T>(
              ref::eltwise(NPU_ELTWISE_POW, static_cast<float>(xv[i]), static_cast<float>(e)));
        } else {
          ov[o] = static_cast<T>(std::pow(static_cast<double>(xv[i]), e));
        }
      } else if (!y_float) {
        ov[o] = static_cast<T>(int_pow(static_cast<int64_t>(xv[i]), int_at(**y, j)));
      } else {
        const double p = std::trunc(std::pow(static_cast<double>(xv[i]), e));
        constexpr auto lo = static_cast<double>(std::numeric_limits<T>::min());
        constexpr auto hi = static_cast<double>(std::numeric_limits<T>::max());
        ov[o] = std::isnan(p)
                    ? T{0}
                    : (p <= lo ? std::numeric_limits<T>::min()
                               : (p >= hi ? std::numeric_limits<T>::max() : static_cast<T>(p)));
      }
    });
    return single(std::move(out));
  });
}

/// Clip: bounds from inputs 1 and 2 (opset >= 11, optional scalars of X's dtype) or from the
/// min/max attributes (opset < 11). y = min(max(x, lo), hi).
HostOutputs clip(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  std::optional<double> lo, hi;
  struct Bound {
    const char* name;
    size_t index;
    std::optional<double>* bound;
  };
  for (auto [name, index, bound] : {Bound{"min", 1, &lo}, Bound{"max", 2, &hi}}) {
    if (c.attrs.contains(name)) {
      auto v = float_attr(c, name, 0.0f);
      if (!v) return v.error();
      *bound = *v;
    }
    if (const NpyArray* b = optional_input(c, index)) {
      if (b->dtype != (*x)->dtype) {
        return op_error(c, std::string(name) + " dtype " + format::dtype_name(b->dtype) +
                               " does not match input dtype " + format::dtype_name((*x)->dtype));
      }
      NPU_TRY(need_scalar(c, *b, name));
      *bound = number_at(*b, 0);
    }
  }
  return dispatch(c, **x, [&]<typename T>(T) -> HostOutputs {
    constexpr T kLow = std::numeric_limits<T>::lowest(), kHigh = std::numeric_limits<T>::max();
    const T l = lo ? static_cast<T>(*lo) : kLow, h = hi ? static_cast<T>(*hi) : kHigh;
    NpyArray out = **x;
    for (T& v : out.view<T>()) {
      if constexpr (std::is_same_v<T, float>) {
        v = ref::activation(NPU_ACT_CLIP, v, l, h);
      } else {
        v = v < l ? l : v;
        v = v > h ? h : v;
      }
    }
    return single(std::move(out));
  });
}

/// PRelu: slope broadcast unidirectionally to X; before opset 7 a 1-d slope of X.shape[1]
/// values is per channel (axis 1).
HostOutputs prelu(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto slope_in = input(c, 1);
  if (!slope_in) return slope_in.error();
  NpyArray slope = **slope_in;
  const Shape& xs = (*x)->shape;
  if (c.opset < 7 && xs.size() > 2 && slope.shape.size() == 1 && slope.shape[0] == xs[1]) {
    slope.shape.resize(xs.size() - 1, 1);  // [C] -> [C, 1, ..., 1]
  }
  auto shape = broadcast(c, xs, slope.shape);
  if (!shape) return shape.error();
  if (*shape != xs) {
    return op_error(c, "slope shape " + shape_text(slope.shape) +
                           " does not broadcast to input shape " + shape_text(xs));
  }
  auto out = binary_values(c, NPU_ELTWISE_PRELU, **x, slope);
  if (!out) return out.error();
  return single(std::move(*out));
}

/// Dropout in inference (or training with ratio 0): the input, and (second output) a mask of
/// all true. Training mode with a ratio above 0 is random, so it is refused.
HostOutputs dropout(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  if (const NpyArray* t = optional_input(c, 2)) {
    NPU_TRY(need_scalar(c, *t, "training_mode"));
    double ratio = 0.5;
    if (const NpyArray* r = optional_input(c, 1)) {
      NPU_TRY(need_scalar(c, *r, "ratio"));
      ratio = number_at(*r, 0);
    }
    if (int_at(*t, 0) != 0 && ratio != 0.0) {
      return op_error(c, "training_mode with ratio " + std::to_string(ratio) +
                             " drops random elements (not reproducible)");
    }
  }
  std::vector<NpyArray> outs{**x};
  if (c.num_outputs == 2) {
    NpyArray mask = NpyArray::zeros(DType::kBool, (*x)->shape);
    std::fill(mask.data.begin(), mask.data.end(), std::byte{1});
    outs.push_back(std::move(mask));
  }
  return outs;
}

/// opset >= 13: over one axis (default -1); opset < 13: over the input flattened to 2-D at
/// `axis` (default 1), i.e. over all dims from axis on.
HostOutputs softmax(const OpCall& c) {
  const bool log = c.schema->code == NPU_SOFTMAX_FLAG_LOG;
  auto x = input(c, 0);
  if (!x) return x.error();
  const Shape& s = (*x)->shape;
  if (s.empty()) return op_error(c, "input is a scalar");
  const bool coerce_2d = c.opset < 13;
  auto axis_attr = int_attr(c, "axis", coerce_2d ? 1 : -1);
  if (!axis_attr) return axis_attr.error();
  auto axis = norm_axis(c, *axis_attr, s.size());
  if (!axis) return axis.error();
  int64_t outer = 1, len = 1, inner = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i < *axis) {
      outer *= s[i];
    } else if (i == *axis || coerce_2d) {
      len *= s[i];
    } else {
      inner *= s[i];
    }
  }
  NpyArray out = **x;
  if (count(s) == 0) return single(std::move(out));
  if (len > std::numeric_limits<uint32_t>::max() || outer > std::numeric_limits<uint32_t>::max()) {
    return op_error(c, "dimension too large");
  }
  auto in = (*x)->view<float>();
  auto ov = out.view<float>();
  if (inner == 1) {
    NPU_TRY(
        ref::softmax_f32(static_cast<uint32_t>(outer), static_cast<uint32_t>(len), in, ov, log));
    return single(std::move(out));
  }
  std::vector<float> row(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      for (int64_t l = 0; l < len; ++l) row[l] = in[base + l * inner];
      NPU_TRY(ref::softmax_f32(1, static_cast<uint32_t>(len), row, row, log));
      for (int64_t l = 0; l < len; ++l) ov[base + l * inner] = row[l];
    }
  }
  return single(std::move(out));
}

HostOutputs identity(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  return single(**x);
}

HostOutputs reshape(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto s = input(c, 1);
  if (!s) return s.error();
  if ((*s)->dtype != DType::kInt64 || (*s)->shape.size() != 1) {
    return op_error(c, "shape input must be a 1-d int64 tensor");
  }
  auto allowzero = int_attr(c, "allowzero", 0);
  if (!allowzero) return allowzero.error();
  Shape target = (*s)->values<int64_t>();
  const Shape& in = (*x)->shape;
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !*allowzero) {
      if (i >= in.size()) {
        return op_error(c, "shape has 0 at " + std::to_string(i) + " beyond the input rank");
      }
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (infer) return op_error(c, "shape has more than one -1");
      infer = i;
      continue;
    }
    if (target[i] < 0) return op_error(c, "shape has negative dim " + std::to_string(target[i]));
    known *= target[i];
  }
  const int64_t total = count(in);
  if (infer) {
    if (known == 0 || total % known != 0) {
      return op_error(
          c, "cannot reshape " + shape_text(in) + " to " + shape_text((*s)->values<int64_t>()));
    }
    target[*infer] = total / known;
  }
  if (count(target) != total) {
    return op_error(c, "cannot reshape " + shape_text(in) + " to " + shape_text(target));
  }
  return single(with_shape(**x, target));
}

HostOutputs flatten(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto axis_attr = int_attr(c, "axis", 1);
  if (!axis_attr) return axis_attr.error();
  const Shape& s = (*x)->shape;
  auto axis = norm_axis(c, *axis_attr, s.size(), /*inclusive=*/true);
  if (!axis) return axis.error();
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < s.size(); ++i) (i < *axis ? outer : inner) *= s[i];
  return single(with_shape(**x, {outer, inner}));
}

HostOutputs transpose(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  const size_t rank = (*x)->shape.size();
  auto perm_attr = ints_attr(c, "perm");
  if (!perm_attr) return perm_attr.error();
  std::vector<int64_t> perm(rank);
  if (*perm_attr) {
    perm = **perm_attr;
  } else {
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  }
  auto out = permute(c, **x, perm);
  if (!out) return out.error();
  return single(std::move(*out));
}

/// The activation family: the row's NPU_ACT_* code with its alpha/beta attributes (defaults
/// from the row's schema).
HostOutputs unary(const OpCall& c) {
  float alpha = 0, beta = 0;
  if (c.schema->attribute("alpha")) {
    auto a = float_attr(c, "alpha");
    if (!a) return a.error();
    alpha = *a;
  }
  if (c.schema->attribute("beta")) {
    auto b = float_attr(c, "beta");
    if (!b) return b.error();
    beta = *b;
  }
  return map_unary(c, c.schema->code, alpha, beta);
}

HostOutputs sign(const OpCall& c) {
  return map_unary(c, kActSign);
}

/// Gelu: the erf form (the device's NPU_ACT_GELU) or, with approximate="tanh", the tanh form.
HostOutputs gelu(const OpCall& c) {
  auto approximate = string_attr(c, "approximate");
  if (!approximate) return approximate.error();
  if (*approximate == "none") return map_unary(c, c.schema->code);
  if (*approximate == "tanh") return map_unary(c, kActGeluTanh);
  return op_error(c, "approximate '" + *approximate + "' is not 'none' or 'tanh'");
}

/// Add, Sub, Mul, Div: the row's NPU_ELTWISE_* code with broadcasting.
HostOutputs binary(const OpCall& c) {
  return fold_binary(c, c.schema->code, /*variadic=*/false, /*mean=*/false);
}

/// Max, Min, Sum: the row's code folded over every input.
HostOutputs variadic(const OpCall& c) {
  return fold_binary(c, c.schema->code, /*variadic=*/true, /*mean=*/false);
}

HostOutputs mean(const OpCall& c) {
  return fold_binary(c, c.schema->code, /*variadic=*/true, /*mean=*/true);
}

/// Mod (opset 10): the remainder of A / B with NumPy broadcasting. fmod = 0 (integers only):
/// the sign of the divisor, as Python's % and numpy.mod; fmod = 1: the sign of the dividend, as
/// C's fmod (required for floats). An integer remainder by 0 is an error ("B has a 0 element");
/// a float one is NaN.
HostOutputs mod(const OpCall& c) {
  auto a = input(c, 0);
  if (!a) return a.error();
  auto b = input(c, 1);
  if (!b) return b.error();
  NPU_TRY(need_same_dtype(c, **a, **b));
  auto fmod = int_attr(c, "fmod", static_cast<int64_t>(c.schema->number_default("fmod")));
  if (!fmod) return fmod.error();
  const bool is_float = (*a)->dtype == DType::kFloat32 || (*a)->dtype == DType::kFloat64;
  if (is_float && *fmod == 0) return op_error(c, "fmod must be 1 for floating-point inputs");
  auto shape = broadcast(c, (*a)->shape, (*b)->shape);
  if (!shape) return shape.error();
  auto alloc = alloc_output(c, (*a)->dtype, *shape);
  if (!alloc) return alloc.error();
  NpyArray out = std::move(*alloc);
  const auto sa = broadcast_strides((*a)->shape, *shape);
  const auto sb = broadcast_strides((*b)->shape, *shape);
  return dispatch(c, out, [&]<typename T>(T) -> HostOutputs {
    const auto av = (*a)->view<T>();
    const auto bv = (*b)->view<T>();
    auto ov = out.view<T>();
    if constexpr (!std::is_floating_point_v<T>) {
      // Every element of B divides some output element unless the output is empty.
      if (count(*shape) > 0 && std::find(bv.begin(), bv.end(), T{0}) != bv.end()) {
        return op_error(c, "integer division by zero: B has a 0 element");
      }
    }
    for_each_broadcast(*shape, sa, sb, [&](int64_t o, int64_t i, int64_t j) {
      const T x = av[i], y = bv[j];
      if constexpr (std::is_floating_point_v<T>) {
        ov[o] = std::fmod(x, y);
      } else {
        // x % y with y == -1 is 0 (and avoids INT_MIN % -1, which C++ leaves undefined).
        T r = (y == T{0} || (is_negative(y) && y == static_cast<T>(-1))) ? T{0}
                                                                         : static_cast<T>(x % y);
        if (*fmod == 0 && r != T{0} && is_negative(r) != is_negative(y)) r = static_cast<T>(r + y);
        ov[o] = r;
      }
    });
    return single(std::move(out));
  });
}

}  // namespace npu::ops::detail
