// Host ops over the reference operators (see npu/host_ops.h).
#include "npu/host_ops.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "npu/ref/matmul.h"
#include "npu/ref/scalar.h"
#include "npu/ref/softmax.h"
#include "npu/ref/transpose.h"

namespace npu {
namespace {

using format::DType;
using format::NpyArray;
using json = nlohmann::json;
using Shape = std::vector<int64_t>;
using Inputs = std::span<const NpyArray* const>;
using Outputs = Expected<std::vector<NpyArray>>;

struct OpCall {
  std::string op;
  const json& attrs;
  Inputs inputs;
};
using OpFn = std::function<Outputs(const OpCall&)>;

std::string shape_text(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

Error op_error(const OpCall& c, const std::string& what) {
  return make_error(EINVAL, c.op + ": " + what);
}

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Expected<const NpyArray*> input(const OpCall& c, size_t i) {
  if (i >= c.inputs.size() || c.inputs[i] == nullptr) {
    return op_error(c, "missing input " + std::to_string(i));
  }
  return c.inputs[i];
}

Expected<void> need_dtype(const OpCall& c, const NpyArray& a, std::initializer_list<DType> ok) {
  if (std::find(ok.begin(), ok.end(), a.dtype) != ok.end()) return npu::ok();
  return op_error(c, std::string("dtype ") + format::dtype_name(a.dtype) + " is not supported");
}

Expected<int64_t> int_attr(const OpCall& c, const char* name, int64_t def) {
  if (!c.attrs.contains(name)) return def;
  const json& v = c.attrs[name];
  if (!v.is_number_integer())
    return op_error(c, std::string("attribute ") + name + ": not an integer");
  return v.get<int64_t>();
}

Expected<float> float_attr(const OpCall& c, const char* name, float def) {
  if (!c.attrs.contains(name)) return def;
  const json& v = c.attrs[name];
  if (!v.is_number()) return op_error(c, std::string("attribute ") + name + ": not a number");
  return v.get<float>();
}

Expected<std::optional<std::vector<int64_t>>> ints_attr(const OpCall& c, const char* name) {
  if (!c.attrs.contains(name)) return std::optional<std::vector<int64_t>>{};
  const json& v = c.attrs[name];
  if (!v.is_array()) return op_error(c, std::string("attribute ") + name + ": not a list");
  std::vector<int64_t> out;
  for (const json& e : v) {
    if (!e.is_number_integer()) {
      return op_error(c, std::string("attribute ") + name + ": not a list of integers");
    }
    out.push_back(e.get<int64_t>());
  }
  return std::optional<std::vector<int64_t>>{std::move(out)};
}

Expected<size_t> norm_axis(const OpCall& c, int64_t axis, size_t rank, bool inclusive = false) {
  const auto r = static_cast<int64_t>(rank) + (inclusive ? 1 : 0);
  const int64_t a = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
  if (a < 0 || a >= r) {
    return op_error(
        c, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  }
  return static_cast<size_t>(a);
}

// ---- unary (ref::activation) ----

struct Unary {
  uint8_t func;
  float alpha;
  float beta;
  const char* alpha_name = nullptr;
  const char* beta_name = nullptr;
};

OpFn unary(Unary u) {
  return [u](const OpCall& c) -> Outputs {
    auto x = input(c, 0);
    if (!x) return x.error();
    NPU_TRY(need_dtype(c, **x, {DType::kFloat32}));
    float alpha = u.alpha, beta = u.beta;
    if (u.alpha_name) {
      auto a = float_attr(c, u.alpha_name, u.alpha);
      if (!a) return a.error();
      alpha = *a;
    }
    if (u.beta_name) {
      auto b = float_attr(c, u.beta_name, u.beta);
      if (!b) return b.error();
      beta = *b;
    }
    NpyArray out = **x;
    for (float& v : out.view<float>()) v = ref::activation(u.func, v, alpha, beta);
    return std::vector<NpyArray>{std::move(out)};
  };
}

// ---- binary with NumPy broadcasting (ref::eltwise / ref::eltwise_int) ----

Expected<Shape> broadcast(const OpCall& c, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return op_error(c, "shapes " + shape_text(a) + " and " + shape_text(b) + " do not broadcast");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// Element strides of `s` seen as `out` (0 along broadcast dims).
std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    const size_t o = i + (out.size() - s.size());
    st[o] = s[i] == 1 ? 0 : acc;
    acc *= s[i];
  }
  return st;
}

/// Calls f(out_index, a_index, b_index) for every element of `out`.
template <typename F>
void for_each_broadcast(const Shape& out, const std::vector<int64_t>& sa,
                        const std::vector<int64_t>& sb, F f) {
  const int64_t n = count(out);
  std::vector<int64_t> idx(out.size(), 0);
  int64_t ia = 0, ib = 0;
  for (int64_t o = 0; o < n; ++o) {
    f(o, ia, ib);
    for (size_t d = out.size(); d-- > 0;) {
      if (++idx[d] < out[d]) {
        ia += sa[d];
        ib += sb[d];
        break;
      }
      ia -= sa[d] * (out[d] - 1);
      ib -= sb[d] * (out[d] - 1);
      idx[d] = 0;
    }
  }
}

OpFn binary(uint8_t op, bool int_ok) {
  return [op, int_ok](const OpCall& c) -> Outputs {
    auto a = input(c, 0);
    if (!a) return a.error();
    auto b = input(c, 1);
    if (!b) return b.error();
    if (int_ok) {
      NPU_TRY(need_dtype(c, **a, {DType::kFloat32, DType::kInt32}));
    } else {
      NPU_TRY(need_dtype(c, **a, {DType::kFloat32}));
    }
    if ((*a)->dtype != (*b)->dtype) {
      return op_error(c, std::string("inputs have different dtypes ") +
                             format::dtype_name((*a)->dtype) + " and " +
                             format::dtype_name((*b)->dtype));
    }
    auto shape = broadcast(c, (*a)->shape, (*b)->shape);
    if (!shape) return shape.error();
    NpyArray out = NpyArray::zeros((*a)->dtype, *shape);
    const auto sa = broadcast_strides((*a)->shape, *shape);
    const auto sb = broadcast_strides((*b)->shape, *shape);
    if (out.dtype == DType::kFloat32) {
      auto av = (*a)->view<float>();
      auto bv = (*b)->view<float>();
      auto ov = out.view<float>();
      for_each_broadcast(*shape, sa, sb, [&](int64_t o, int64_t i, int64_t j) {
        ov[o] = ref::eltwise(op, av[i], bv[j]);
      });
    } else {
      auto av = (*a)->view<int32_t>();
      auto bv = (*b)->view<int32_t>();
      auto ov = out.view<int32_t>();
      for_each_broadcast(*shape, sa, sb, [&](int64_t o, int64_t i, int64_t j) {
        ov[o] = ref::eltwise_int(op, av[i], bv[j], NPU_DTYPE_INT32);
      });
    }
    return std::vector<NpyArray>{std::move(out)};
  };
}

// ---- Softmax (ref::softmax_f32) ----

OpFn softmax(bool log) {
  return [log](const OpCall& c) -> Outputs {
    auto x = input(c, 0);
    if (!x) return x.error();
    NPU_TRY(need_dtype(c, **x, {DType::kFloat32}));
    const Shape& s = (*x)->shape;
    if (s.empty()) return op_error(c, "input is a scalar");
    auto axis_attr = int_attr(c, "axis", -1);
    if (!axis_attr) return axis_attr.error();
    auto axis = norm_axis(c, *axis_attr, s.size());
    if (!axis) return axis.error();
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < *axis; ++i) outer *= s[i];
    for (size_t i = *axis + 1; i < s.size(); ++i) inner *= s[i];
    const int64_t len = s[*axis];
    NpyArray out = **x;
    if (count(s) == 0) return std::vector<NpyArray>{std::move(out)};
    auto in = (*x)->view<float>();
    auto ov = out.view<float>();
    if (inner == 1) {
      NPU_TRY(
          ref::softmax_f32(static_cast<uint32_t>(outer), static_cast<uint32_t>(len), in, ov, log));
    } else {
      std::vector<float> row(static_cast<size_t>(len));
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * len * inner + i;
          for (int64_t l = 0; l < len; ++l) row[l] = in[base + l * inner];
          NPU_TRY(ref::softmax_f32(1, static_cast<uint32_t>(len), row, row, log));
          for (int64_t l = 0; l < len; ++l) ov[base + l * inner] = row[l];
        }
      }
    }
    return std::vector<NpyArray>{std::move(out)};
  };
}

// ---- MatMul (ref::matmul_f32) ----

Outputs matmul(const OpCall& c) {
  auto a = input(c, 0);
  if (!a) return a.error();
  auto b = input(c, 1);
  if (!b) return b.error();
  NPU_TRY(need_dtype(c, **a, {DType::kFloat32}));
  NPU_TRY(need_dtype(c, **b, {DType::kFloat32}));
  Shape sa = (*a)->shape, sb = (*b)->shape;
  if (sa.empty() || sb.empty()) return op_error(c, "inputs must have rank >= 1");
  const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k) {
    return op_error(c, "shapes " + shape_text((*a)->shape) + " and " + shape_text((*b)->shape) +
                           " do not match (inner dims " + std::to_string(k) + " and " +
                           std::to_string(sb[sb.size() - 2]) + ")");
  }
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  auto batch = broadcast(c, ba, bb);
  if (!batch) return batch.error();
  Shape out_shape = *batch;
  if (!a_vec) out_shape.push_back(m);
  if (!b_vec) out_shape.push_back(n);
  NpyArray out = NpyArray::zeros(DType::kFloat32, out_shape);
  if (m == 0 || n == 0 || count(*batch) == 0) return std::vector<NpyArray>{std::move(out)};
  auto av = (*a)->view<float>();
  auto bv = (*b)->view<float>();
  auto ov = out.view<float>();
  if (k == 0) return std::vector<NpyArray>{std::move(out)};  // sums of nothing
  const auto st_a = broadcast_strides(ba, *batch);
  const auto st_b = broadcast_strides(bb, *batch);
  ref::MatmulShape ms;
  ms.m = static_cast<uint32_t>(m);
  ms.k = static_cast<uint32_t>(k);
  ms.n = static_cast<uint32_t>(n);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  Expected<void> status = ok();
  for_each_broadcast(*batch, st_a, st_b, [&](int64_t o, int64_t i, int64_t j) {
    if (!status) return;
    status = ref::matmul_f32(ms, av.subspan(static_cast<size_t>(i * m * k), m * k),
                             bv.subspan(static_cast<size_t>(j * k * n), k * n), {}, -kInf, kInf,
                             ov.subspan(static_cast<size_t>(o * m * n), m * n));
  });
  if (!status) return op_error(c, status.error().message);
  return std::vector<NpyArray>{std::move(out)};
}

// ---- shape ops ----

NpyArray with_shape(const NpyArray& x, Shape shape) {
  NpyArray out = x;
  out.shape = std::move(shape);
  return out;
}

Outputs identity(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  return std::vector<NpyArray>{**x};
}

Outputs reshape(const OpCall& c) {
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
      if (i >= in.size())
        return op_error(c, "shape has 0 at " + std::to_string(i) + " beyond the input rank");
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
  return std::vector<NpyArray>{with_shape(**x, target)};
}

Outputs flatten(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto axis_attr = int_attr(c, "axis", 1);
  if (!axis_attr) return axis_attr.error();
  const Shape& s = (*x)->shape;
  auto axis = norm_axis(c, *axis_attr, s.size(), /*inclusive=*/true);
  if (!axis) return axis.error();
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < s.size(); ++i) (i < *axis ? outer : inner) *= s[i];
  return std::vector<NpyArray>{with_shape(**x, {outer, inner})};
}

template <typename T>
Expected<void> transpose_as(const ref::Dims4& dims, const std::array<uint8_t, 4>& perm,
                            const NpyArray& in, NpyArray& out) {
  const size_t n = in.data.size() / sizeof(T);
  return ref::transpose4<T>(dims, perm,
                            std::span<const T>(reinterpret_cast<const T*>(in.data.data()), n),
                            std::span<T>(reinterpret_cast<T*>(out.data.data()), n));
}

Outputs transpose(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  const Shape& s = (*x)->shape;
  const size_t rank = s.size();
  auto perm_attr = ints_attr(c, "perm");
  if (!perm_attr) return perm_attr.error();
  std::vector<int64_t> perm(rank);
  if (*perm_attr) {
    perm = **perm_attr;
  } else {
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  }
  if (perm.size() != rank)
    return op_error(
        c, "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  if (rank > 4)
    return op_error(c, "rank " + std::to_string(rank) + " is not supported (at most 4)");
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p])
      return op_error(c, "perm is not a permutation");
    seen[p] = true;
  }
  // Pad to 4-d with leading 1s and run the reference 4-d transpose.
  const size_t pad = 4 - rank;
  ref::Dims4 dims{1, 1, 1, 1};
  std::array<uint8_t, 4> p4{0, 1, 2, 3};
  for (size_t i = 0; i < rank; ++i) {
    if (s[i] > std::numeric_limits<uint32_t>::max()) return op_error(c, "dimension too large");
    dims[pad + i] = static_cast<uint32_t>(s[i]);
    p4[pad + i] = static_cast<uint8_t>(pad + perm[i]);
  }
  Shape out_shape(rank);
  for (size_t i = 0; i < rank; ++i) out_shape[i] = s[perm[i]];
  NpyArray out = NpyArray::zeros((*x)->dtype, out_shape);
  if (count(s) == 0) return std::vector<NpyArray>{std::move(out)};
  Expected<void> r = ok();
  switch (format::dtype_size((*x)->dtype)) {
    case 1:
      r = transpose_as<uint8_t>(dims, p4, **x, out);
      break;
    case 2:
      r = transpose_as<uint16_t>(dims, p4, **x, out);
      break;
    case 4:
      r = transpose_as<uint32_t>(dims, p4, **x, out);
      break;
    default:
      r = transpose_as<uint64_t>(dims, p4, **x, out);
      break;
  }
  if (!r) return op_error(c, r.error().message);
  return std::vector<NpyArray>{std::move(out)};
}

const std::map<std::string, OpFn, std::less<>>& registry() {
  static const auto* ops = new std::map<std::string, OpFn, std::less<>>{
      {"Relu", unary({NPU_ACT_RELU, 0, 0})},
      {"Sigmoid", unary({NPU_ACT_SIGMOID, 0, 0})},
      {"Tanh", unary({NPU_ACT_TANH, 0, 0})},
      {"Exp", unary({NPU_ACT_EXP, 0, 0})},
      {"Log", unary({NPU_ACT_LOG, 0, 0})},
      {"Sqrt", unary({NPU_ACT_SQRT, 0, 0})},
      {"Abs", unary({NPU_ACT_ABS, 0, 0})},
      {"Neg", unary({NPU_ACT_NEG, 0, 0})},
      {"Erf", unary({NPU_ACT_ERF, 0, 0})},
      {"Reciprocal", unary({NPU_ACT_RECIPROCAL, 0, 0})},
      {"Softplus", unary({NPU_ACT_SOFTPLUS, 0, 0})},
      {"Gelu", unary({NPU_ACT_GELU, 0, 0})},
      {"HardSwish", unary({NPU_ACT_HARDSWISH, 0, 0})},
      {"LeakyRelu", unary({NPU_ACT_LEAKY_RELU, 0.01f, 0, "alpha"})},
      {"Elu", unary({NPU_ACT_ELU, 1.0f, 0, "alpha"})},
      {"HardSigmoid", unary({NPU_ACT_HARDSIGMOID, 0.2f, 0.5f, "alpha", "beta"})},
      {"Softmax", softmax(false)},
      {"LogSoftmax", softmax(true)},
      {"Add", binary(NPU_ELTWISE_ADD, true)},
      {"Sub", binary(NPU_ELTWISE_SUB, true)},
      {"Mul", binary(NPU_ELTWISE_MUL, true)},
      {"Div", binary(NPU_ELTWISE_DIV, true)},
      {"Max", binary(NPU_ELTWISE_MAX, true)},
      {"Min", binary(NPU_ELTWISE_MIN, true)},
      {"Pow", binary(NPU_ELTWISE_POW, false)},
      {"MatMul", matmul},
      {"Reshape", reshape},
      {"Flatten", flatten},
      {"Transpose", transpose},
      {"Identity", identity},
  };
  return *ops;
}

}  // namespace

bool host_op_supported(std::string_view op_type) {
  return registry().find(op_type) != registry().end();
}

std::vector<std::string> host_op_names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : registry()) names.push_back(name);
  return names;
}

Expected<std::vector<format::NpyArray>> run_host_op(std::string_view op_type,
                                                    std::string_view attributes,
                                                    std::span<const format::NpyArray* const> inputs,
                                                    size_t num_outputs) {
  auto it = registry().find(op_type);
  if (it == registry().end()) {
    return make_error(ENOTSUP, "host op '" + std::string(op_type) + "' is not supported");
  }
  const json attrs = json::parse(attributes.empty() ? std::string_view("{}") : attributes, nullptr,
                                 /*allow_exceptions=*/false);
  if (attrs.is_discarded() || !attrs.is_object()) {
    return make_error(EINVAL, std::string(op_type) + ": attributes are not a JSON object");
  }
  for (const NpyArray* in : inputs) {
    if (in == nullptr) continue;
    if (auto r = format::check_npy(*in, std::string(op_type) + ": input"); !r) return r.error();
  }
  try {
    auto out = it->second(OpCall{std::string(op_type), attrs, inputs});
    if (out && out->size() != num_outputs) {
      return make_error(EINVAL, std::string(op_type) + ": produces " + std::to_string(out->size()) +
                                    " outputs, " + std::to_string(num_outputs) + " expected");
    }
    return out;
  } catch (const std::exception& e) {  // allocation failures, JSON type errors
    return make_error(EINVAL, std::string(op_type) + ": " + e.what());
  }
}

}  // namespace npu
