// Host evaluation of nodes on constants: dispatch, elementwise math, Cast, Where. fp32 math
// uses the reference scalar rules (npu/ref/scalar.h) so folded values equal what the device
// computes; integer math follows ONNX (C semantics, wrap to the element type).
#include "npu/compiler/evaluator.h"

#include <cmath>
#include <set>

#include "evaluator_ops.h"
#include "npu/ref/scalar.h"

namespace npu::compiler {

namespace {

using detail::Inputs;

constexpr int64_t kMaxFoldElements = int64_t{1} << 26;

const std::set<std::string>& binary_ops() {
  static const std::set<std::string> ops = {"Add",     "Sub", "Mul",   "Div",   "Pow",
                                            "Max",     "Min", "PRelu", "Equal", "Less",
                                            "Greater", "And", "Or"};
  return ops;
}

const std::set<std::string>& unary_ops() {
  static const std::set<std::string> ops = {
      "Neg",  "Abs", "Sqrt",  "Exp",  "Log", "Reciprocal", "Relu", "Sigmoid",
      "Tanh", "Erf", "Floor", "Ceil", "Not", "Identity",   "Cast", "Softplus"};
  return ops;
}

uint8_t eltwise_code(const std::string& op) {
  if (op == "Add") return NPU_ELTWISE_ADD;
  if (op == "Sub") return NPU_ELTWISE_SUB;
  if (op == "Mul") return NPU_ELTWISE_MUL;
  if (op == "Div") return NPU_ELTWISE_DIV;
  if (op == "Max") return NPU_ELTWISE_MAX;
  if (op == "Min") return NPU_ELTWISE_MIN;
  if (op == "Pow") return NPU_ELTWISE_POW;
  if (op == "PRelu") return NPU_ELTWISE_PRELU;
  return 0;
}

uint8_t activation_code(const std::string& op) {
  if (op == "Neg") return NPU_ACT_NEG;
  if (op == "Abs") return NPU_ACT_ABS;
  if (op == "Sqrt") return NPU_ACT_SQRT;
  if (op == "Exp") return NPU_ACT_EXP;
  if (op == "Log") return NPU_ACT_LOG;
  if (op == "Reciprocal") return NPU_ACT_RECIPROCAL;
  if (op == "Relu") return NPU_ACT_RELU;
  if (op == "Sigmoid") return NPU_ACT_SIGMOID;
  if (op == "Tanh") return NPU_ACT_TANH;
  if (op == "Erf") return NPU_ACT_ERF;
  if (op == "Softplus") return NPU_ACT_SOFTPLUS;
  return 0;
}

double binary_double(const std::string& op, double a, double b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") return a / b;
  if (op == "Pow") return std::pow(a, b);
  if (op == "Max") return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  if (op == "Min") return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  if (op == "PRelu") return a >= 0 ? a : a * b;
  if (op == "Equal") return a == b;
  if (op == "Less") return a < b;
  if (op == "Greater") return a > b;
  return NAN;
}

Expected<int64_t> binary_int(const std::string& op, int64_t a, int64_t b) {
  // Unsigned arithmetic wraps without UB; the result is wrapped to the element type later.
  const auto ua = static_cast<uint64_t>(a);
  const auto ub = static_cast<uint64_t>(b);
  if (op == "Add") return static_cast<int64_t>(ua + ub);
  if (op == "Sub") return static_cast<int64_t>(ua - ub);
  if (op == "Mul") return static_cast<int64_t>(ua * ub);
  if (op == "Div") {
    if (b == 0) return make_error(EINVAL, "integer division by zero");
    if (a == INT64_MIN && b == -1) return a;
    return a / b;
  }
  if (op == "Pow") {
    int64_t r = 1;
    for (int64_t i = 0; i < b && i < 64; ++i)
      r = static_cast<int64_t>(static_cast<uint64_t>(r) * ua);
    return b < 0 ? 0 : r;
  }
  if (op == "Max") return std::max(a, b);
  if (op == "Min") return std::min(a, b);
  if (op == "PRelu") return a >= 0 ? a : static_cast<int64_t>(ua * ub);
  if (op == "Equal") return a == b;
  if (op == "Less") return a < b;
  if (op == "Greater") return a > b;
  if (op == "And") return (a != 0) && (b != 0);
  if (op == "Or") return (a != 0) || (b != 0);
  return make_error(ENOTSUP, "no integer form");
}

Expected<std::vector<TensorData>> eval_binary(const Node& n, const TensorData& a,
                                              const TensorData& b) {
  if (a.dtype != b.dtype && n.op_type != "Pow") {
    return make_error(EINVAL, std::string("operand types differ (") + dtype_name(a.dtype) + ", " +
                                  dtype_name(b.dtype) + ")");
  }
  auto dims = broadcast_dims(a.dims, b.dims);
  if (!dims) return dims.error();
  const bool compare = n.op_type == "Equal" || n.op_type == "Less" || n.op_type == "Greater";
  TensorData out = TensorData::zeros(compare ? DType::kBool : a.dtype, *dims);
  const int64_t count = out.element_count();
  if (count > kMaxFoldElements) return make_error(EFBIG, "result too large to fold");
  const auto ia = detail::broadcast_offsets(a.dims, *dims);
  const auto ib = detail::broadcast_offsets(b.dims, *dims);
  const uint8_t code = eltwise_code(n.op_type);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t x = ia[static_cast<size_t>(i)];
    const int64_t y = ib[static_cast<size_t>(i)];
    if (a.dtype == DType::kFloat32 && b.dtype == DType::kFloat32 && code != 0) {
      out.set_double(i, ref::eltwise(code, static_cast<float>(a.as_double(x)),
                                     static_cast<float>(b.as_double(y))));
    } else if (!dtype_is_integral(a.dtype)) {
      out.set_double(i, binary_double(n.op_type, a.as_double(x), b.as_double(y)));
    } else {
      auto v = binary_int(n.op_type, a.as_int(x), b.as_int(y));
      if (!v) return v.error();
      out.set_int(i, *v);
    }
  }
  return std::vector<TensorData>{std::move(out)};
}

Expected<std::vector<TensorData>> eval_unary(const Node& n, const TensorData& a) {
  const std::string& op = n.op_type;
  DType out_type = a.dtype;
  if (op == "Cast") {
    out_type = dtype_from_onnx(static_cast<int>(n.attr_int("to", 0)));
    if (out_type == DType::kUndefined) return make_error(ENOTSUP, "unsupported target type");
  }
  if (op == "Not") out_type = DType::kBool;
  if (a.element_count() > kMaxFoldElements) return make_error(EFBIG, "too large to fold");
  TensorData out = TensorData::zeros(out_type, a.dims);
  const int64_t count = a.element_count();
  const uint8_t act = activation_code(op);
  for (int64_t i = 0; i < count; ++i) {
    if (op == "Identity" || op == "Cast") {
      if (dtype_is_integral(a.dtype)) {
        out.set_int(i, a.as_int(i));
      } else {
        out.set_double(i, a.as_double(i));
      }
    } else if (op == "Not") {
      out.set_int(i, a.as_int(i) == 0);
    } else if (dtype_is_integral(a.dtype)) {
      const int64_t x = a.as_int(i);
      if (op == "Neg") {
        out.set_int(i, static_cast<int64_t>(0 - static_cast<uint64_t>(x)));
      } else if (op == "Abs") {
        out.set_int(i, x < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(x)) : x);
      } else if (op == "Relu") {
        out.set_int(i, x < 0 ? 0 : x);
      } else if (op == "Floor" || op == "Ceil") {
        out.set_int(i, x);
      } else {
        return make_error(ENOTSUP, "no integer form");
      }
    } else if (op == "Floor") {
      out.set_double(i, std::floor(a.as_double(i)));
    } else if (op == "Ceil") {
      out.set_double(i, std::ceil(a.as_double(i)));
    } else if (a.dtype == DType::kFloat32) {
      out.set_double(i, ref::activation(act, static_cast<float>(a.as_double(i)), 0.0f, 0.0f));
    } else {  // float64: the same functions in double
      const double x = a.as_double(i);
      double y = NAN;
      switch (act) {
        case NPU_ACT_NEG:
          y = -x;
          break;
        case NPU_ACT_ABS:
          y = std::fabs(x);
          break;
        case NPU_ACT_SQRT:
          y = std::sqrt(x);
          break;
        case NPU_ACT_EXP:
          y = std::exp(x);
          break;
        case NPU_ACT_LOG:
          y = std::log(x);
          break;
        case NPU_ACT_RECIPROCAL:
          y = 1.0 / x;
          break;
        case NPU_ACT_RELU:
          y = x < 0 ? 0 : x;
          break;
        case NPU_ACT_SIGMOID:
          y = 1.0 / (1.0 + std::exp(-x));
          break;
        case NPU_ACT_TANH:
          y = std::tanh(x);
          break;
        case NPU_ACT_ERF:
          y = std::erf(x);
          break;
        case NPU_ACT_SOFTPLUS:
          y = std::log1p(std::exp(x));
          break;
        default:
          break;
      }
      out.set_double(i, y);
    }
  }
  return std::vector<TensorData>{std::move(out)};
}

Expected<std::vector<TensorData>> eval_where(const TensorData& c, const TensorData& x,
                                             const TensorData& y) {
  if (x.dtype != y.dtype) return make_error(EINVAL, "x and y types differ");
  auto d1 = broadcast_dims(c.dims, x.dims);
  if (!d1) return d1.error();
  auto dims = broadcast_dims(*d1, y.dims);
  if (!dims) return dims.error();
  TensorData out = TensorData::zeros(x.dtype, *dims);
  if (out.element_count() > kMaxFoldElements) return make_error(EFBIG, "too large to fold");
  const auto ic = detail::broadcast_offsets(c.dims, *dims);
  const auto ix = detail::broadcast_offsets(x.dims, *dims);
  const auto iy = detail::broadcast_offsets(y.dims, *dims);
  const size_t es = dtype_size(x.dtype);
  for (size_t i = 0; i < ic.size(); ++i) {
    const TensorData& src = c.as_int(ic[i]) != 0 ? x : y;
    const int64_t off = c.as_int(ic[i]) != 0 ? ix[i] : iy[i];
    std::memcpy(out.bytes.data() + i * es, src.bytes.data() + static_cast<size_t>(off) * es, es);
  }
  return std::vector<TensorData>{std::move(out)};
}

}  // namespace

Expected<std::vector<int64_t>> broadcast_dims(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1) {
      return make_error(EINVAL, "shapes " + shape_to_string(make_shape(a)) + " and " +
                                    shape_to_string(make_shape(b)) + " do not broadcast");
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

bool can_evaluate(const Node& n) {
  if (!n.domain.empty() || n.activation) return false;
  return binary_ops().count(n.op_type) || unary_ops().count(n.op_type) || n.op_type == "Where" ||
         detail::is_shape_op(n.op_type);
}

Expected<std::vector<TensorData>> evaluate_node(const Node& n, Inputs inputs) {
  auto wrap = [&](Expected<std::vector<TensorData>> r) -> Expected<std::vector<TensorData>> {
    if (!r) return make_error(r.error().code, n.label() + ": " + r.error().message);
    return r;
  };
  if (!can_evaluate(n)) return make_error(ENOTSUP, n.label() + ": cannot evaluate on the host");
  auto need = [&](size_t count) {
    if (inputs.size() < count) return false;
    for (size_t i = 0; i < count; ++i) {
      if (!inputs[i]) return false;
    }
    return true;
  };
  if (binary_ops().count(n.op_type)) {
    // Max/Min are variadic: fold left.
    if (!need(2) && !((n.op_type == "Max" || n.op_type == "Min") && need(1))) {
      return make_error(EINVAL, n.label() + ": missing operand");
    }
    if (inputs.size() == 1) return std::vector<TensorData>{*inputs[0]};
    auto acc = eval_binary(n, *inputs[0], *inputs[1]);
    for (size_t i = 2; acc && i < inputs.size(); ++i) {
      if (!inputs[i]) return make_error(EINVAL, n.label() + ": missing operand");
      acc = eval_binary(n, (*acc)[0], *inputs[i]);
    }
    return wrap(std::move(acc));
  }
  if (unary_ops().count(n.op_type)) {
    if (!need(1)) return make_error(EINVAL, n.label() + ": missing operand");
    return wrap(eval_unary(n, *inputs[0]));
  }
  if (n.op_type == "Where") {
    if (!need(3)) return make_error(EINVAL, n.label() + ": missing operand");
    return wrap(eval_where(*inputs[0], *inputs[1], *inputs[2]));
  }
  return wrap(detail::eval_shape_op(n, inputs));
}

}  // namespace npu::compiler
