// The kernels other than convolution and pooling: matmul/dense, softmax, batch_norm (with its
// axis moved to ONNX's channel axis and the moving statistics passed through), elementwise
// unary/binary operators, relu6 as Clip, and int8 quantize/dequantize (scale and zero point
// brought to the forms QuantizeLinear/DequantizeLinear take).
#include <algorithm>

#include "npu/format/array_values.h"
#include "npu/format/shape.h"
#include "onnx_proto.h"
#include "tvm/tvm_kernels.h"

namespace npu::compiler::tvm {

namespace {

Expected<void> check_out_dtype(const KernelCall& c) {
  const std::string out_dtype = c.attrs.s("out_dtype");
  if (!out_dtype.empty() && out_dtype != c.in_dtype(0)) {
    return c.fail("out_dtype " + out_dtype + " differs from the input's " + c.in_dtype(0) +
                  " (mixed-precision kernels are not supported)");
  }
  return ok();
}

/// An attribute value of the schema's type from its default text (the Fixed column).
AttrValue typed_default(const ops::AttrSchema& s) {
  const std::string text = s.default_value.value_or("");
  switch (s.type) {
    case ops::AttrType::kInt:
      return static_cast<int64_t>(s.number_default());
    case ops::AttrType::kFloat:
      return static_cast<float>(s.number_default());
    default:
      return text;
  }
}

int64_t elements(const std::vector<int64_t>& dims) {
  return format::element_count(dims);
}

/// `v` as a 0-d value (per-tensor scale or zero point): a constant is re-shaped, anything else
/// goes through Reshape.
ValueId as_scalar(Builder& b, ValueId v, const std::vector<int64_t>& dims) {
  if (dims.empty()) return v;
  Graph& g = b.graph();
  if (const NpyArray* a = g.constant(v)) {
    NpyArray s = *a;
    s.shape.clear();
    return b.constant(g.value(v).name + "_scalar", std::move(s));
  }
  return b.node("Reshape", {v, b.constant("scalar_shape",
                                          NpyArray::of<int64_t>({0}, std::vector<int64_t>{}))});
}

/// The zero point in element type `t` (QuantizeLinear's output type, DequantizeLinear's input
/// type): a constant is converted (its values must fit), anything else is Cast.
Expected<ValueId> zero_point_as(Builder& b, const KernelCall& c, ValueId zp,
                                const std::string& zp_dtype, DType t) {
  if (zp_dtype == format::dtype_name(t)) return zp;
  Graph& g = b.graph();
  if (const NpyArray* a = g.constant(zp)) {
    const std::vector<int64_t> v = format::to_ints(*a);
    const auto [lo, hi] = t == DType::kInt8    ? std::pair<int64_t, int64_t>{-128, 127}
                          : t == DType::kUint8 ? std::pair<int64_t, int64_t>{0, 255}
                                               : std::pair<int64_t, int64_t>{INT32_MIN, INT32_MAX};
    for (int64_t x : v) {
      if (x < lo || x > hi) {
        return c.fail("zero point " + std::to_string(x) + " does not fit " + format::dtype_name(t));
      }
    }
    return b.constant(g.value(zp).name + "_" + format::dtype_name(t),
                      format::from_ints(t, a->shape, v));
  }
  return b.node("Cast", {zp}, {{"to", int64_t{detail::dtype_to_onnx(t)}}});
}

/// Scale and zero point of a (de)quantization along `axis` of the input: one value each is a
/// per-tensor pair (made 0-d), otherwise 1-D with the axis' size.
Expected<std::pair<ValueId, ValueId>> quant_params(Builder& b, const KernelCall& c, int64_t axis,
                                                   DType zp_type) {
  const auto& x = c.in[0].dims;
  const auto& sd = c.in[1].dims;
  const auto& zd = c.in[2].dims;
  auto zp = zero_point_as(b, c, c.inputs[2], c.in_dtype(2), zp_type);
  if (!zp) return zp.error();
  if (elements(sd) == 1 && elements(zd) == 1) {
    return std::pair{as_scalar(b, c.inputs[1], sd), as_scalar(b, *zp, zd)};
  }
  const int64_t size =
      axis >= 0 && axis < static_cast<int64_t>(x.size()) ? x[static_cast<size_t>(axis)] : -1;
  if (sd.size() != 1 || sd[0] != size || zd != sd) {
    return c.fail("scale " + format::shape_text(sd) + " and zero point " + format::shape_text(zd) +
                  " are neither per tensor nor per axis " + std::to_string(axis) + " of " +
                  format::shape_text(x));
  }
  return std::pair{c.inputs[1], *zp};
}

Expected<int64_t> quant_axis(const KernelCall& c) {
  const auto rank = static_cast<int64_t>(c.in[0].dims.size());
  int64_t axis = c.attrs.i("axis");
  if (axis < 0) axis += rank;
  if (axis < 0 || (rank > 0 && axis >= rank)) {
    return c.fail("attribute 'axis' " + std::to_string(c.attrs.i("axis")) +
                  " is out of range for rank " + std::to_string(rank));
  }
  return axis;
}

/// QuantizeLinear / DequantizeLinear along the kernel's axis, the zero point in type `zp_type`.
Expected<std::vector<ValueId>> qdq_node(Builder& b, const KernelCall& c, const char* op,
                                        DType zp_type) {
  auto axis = quant_axis(c);
  if (!axis) return axis.error();
  auto p = quant_params(b, c, *axis, zp_type);
  if (!p) return p.error();
  std::map<std::string, AttrValue> attrs;
  Builder::set(attrs, op, "axis", *axis);
  return std::vector<ValueId>{b.node(op, {c.inputs[0], p->first, p->second}, std::move(attrs))};
}

}  // namespace

Expected<std::vector<ValueId>> matmul(Builder& b, const KernelCall& c) {
  NPU_TRY(check_out_dtype(c));
  ValueId out = b.node("MatMul", {c.inputs[0], c.inputs[1]});
  if (!c.row.info.activation.empty()) out = b.node(c.row.info.activation, {out});
  return std::vector<ValueId>{out};
}

Expected<std::vector<ValueId>> dense(Builder& b, const KernelCall& c) {
  NPU_TRY(check_out_dtype(c));
  if (c.in[0].dims.size() != 2 || c.in[1].dims.size() != 2) {
    return c.fail("dense takes 2-D operands, not " + format::shape_text(c.in[0].dims) + " and " +
                  format::shape_text(c.in[1].dims));
  }
  return std::vector<ValueId>{b.node("Gemm", {c.inputs[0], c.inputs[1]}, {{"transB", int64_t{1}}})};
}

Expected<std::vector<ValueId>> softmax(Builder& b, const KernelCall& c) {
  std::map<std::string, AttrValue> attrs;
  Builder::set(attrs, "Softmax", "axis", c.attrs.i("axis"));
  return std::vector<ValueId>{b.node("Softmax", {c.inputs[0]}, std::move(attrs))};
}

Expected<std::vector<ValueId>> batch_norm(Builder& b, const KernelCall& c) {
  const auto& x = c.in[0].dims;
  const auto rank = static_cast<int64_t>(x.size());
  if (c.in[1].dims.size() != 1 || rank < 2) {
    return c.fail("gamma " + format::shape_text(c.in[1].dims) + " and input " +
                  format::shape_text(x) + " do not fit a batch_norm");
  }
  const int64_t channels = c.in[1].dims[0];
  int64_t axis = c.attrs.i("axis");
  if (!c.attrs.given("axis")) {  // the one axis whose size is gamma's length
    std::vector<int64_t> fit;
    for (int64_t a = 0; a < rank; ++a) {
      if (x[static_cast<size_t>(a)] == channels) fit.push_back(a);
    }
    if (fit.size() != 1) {
      return c.fail("attribute 'axis' is missing and the shapes do not determine it (input " +
                    format::shape_text(x) + ", " + std::to_string(channels) +
                    " channels: " + std::to_string(fit.size()) + " axes fit)");
    }
    axis = fit[0];
  }
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || x[static_cast<size_t>(axis)] != channels) {
    return c.fail("axis " + std::to_string(c.attrs.i("axis")) + " of " + format::shape_text(x) +
                  " does not have gamma's " + std::to_string(channels) + " channels");
  }
  if (c.attrs.i("training") != 0) {
    return c.fail("training-mode batch_norm is not supported (export the model for inference)");
  }
  const std::optional<DType> t = format::dtype_from_name(c.in_dtype(1));
  ValueId gamma = c.inputs[1], beta = c.inputs[2];
  if (c.attrs.i("scale") == 0 || c.attrs.i("center") == 0) {
    if (t != DType::kFloat32) return c.fail("batch_norm parameters must be float32");
    const std::vector<float> ones(static_cast<size_t>(channels), 1.0f), zeros(ones.size(), 0.0f);
    if (c.attrs.i("scale") == 0) gamma = b.constant("gamma", NpyArray::of<float>({channels}, ones));
    if (c.attrs.i("center") == 0) beta = b.constant("beta", NpyArray::of<float>({channels}, zeros));
  }
  std::vector<int64_t> rest;  // the channel axis moves to 1, the others keep their order
  for (int64_t a = 0; a < rank; ++a) {
    if (a != axis) rest.push_back(a);
  }
  std::vector<int64_t> perm = {rest[0], axis};
  perm.insert(perm.end(), rest.begin() + 1, rest.end());
  std::map<std::string, AttrValue> attrs;
  Builder::set(attrs, "BatchNormalization", "epsilon", c.attrs.f("epsilon"));
  const ValueId y = b.node("BatchNormalization",
                           {b.transpose(c.inputs[0], perm), gamma, beta, c.inputs[3], c.inputs[4]},
                           std::move(attrs));
  // Inference: the moving statistics are the result's outputs 1 and 2, unchanged.
  return std::vector<ValueId>{b.transpose(y, inverse_perm(perm)), c.inputs[3], c.inputs[4]};
}

Expected<std::vector<ValueId>> unary(Builder& b, const KernelCall& c) {
  const std::string op(c.row.info.op);
  std::map<std::string, AttrValue> attrs;
  for (const ops::AttrSchema& s : c.row.attrs) {
    if (s.type == ops::AttrType::kFloat) Builder::set(attrs, op, s.name, c.attrs.f(s.name));
    if (s.type == ops::AttrType::kInt) Builder::set(attrs, op, s.name, c.attrs.i(s.name));
  }
  for (const ops::AttrSchema& s : c.row.fixed) attrs[s.name] = typed_default(s);
  return std::vector<ValueId>{b.node(op, {c.inputs[0]}, std::move(attrs))};
}

Expected<std::vector<ValueId>> clip(Builder& b, const KernelCall& c) {
  if (c.in_dtype(0) != "float32") return c.fail("clip of " + c.in_dtype(0) + " is not supported");
  std::vector<ValueId> inputs = {c.inputs[0]};
  for (const char* bound : {"min", "max"}) {
    float v = 0.0f;
    for (const ops::AttrSchema& s : c.row.fixed) {
      if (s.name == bound) v = static_cast<float>(s.number_default());
    }
    inputs.push_back(b.constant(bound, NpyArray::of<float>({}, std::vector<float>{v})));
  }
  return std::vector<ValueId>{b.node("Clip", std::move(inputs))};
}

Expected<std::vector<ValueId>> binary(Builder& b, const KernelCall& c) {
  if (c.in_dtype(0) != c.in_dtype(1)) {
    return c.fail("operands of types " + c.in_dtype(0) + " and " + c.in_dtype(1) + " differ");
  }
  return std::vector<ValueId>{b.node(c.row.info.op, {c.inputs[0], c.inputs[1]})};
}

Expected<std::vector<ValueId>> quantize(Builder& b, const KernelCall& c) {
  std::string name = c.attrs.s("out_dtype");
  if (name.empty()) name = c.out[0].dtype.empty() ? "int8" : c.out[0].dtype;
  const std::optional<DType> t = format::dtype_from_name(name);
  if (t != DType::kInt8 && t != DType::kUint8) {
    return c.fail("quantize to " + name + " is not supported (int8, uint8)");
  }
  if (c.in_dtype(0) != "float32" || c.in_dtype(1) != "float32") {
    return c.fail("quantize takes float32 data and scale, not " + c.in_dtype(0) + " and " +
                  c.in_dtype(1));
  }
  return qdq_node(b, c, "QuantizeLinear", *t);
}

Expected<std::vector<ValueId>> dequantize(Builder& b, const KernelCall& c) {
  const std::string out = c.attrs.s("out_dtype");
  if (!out.empty() && out != "float32")
    return c.fail("dequantize to " + out + " is not supported (float32)");
  const std::optional<DType> t = format::dtype_from_name(c.in_dtype(0));
  if (t != DType::kInt8 && t != DType::kUint8 && t != DType::kInt32) {
    return c.fail("dequantize of " + c.in_dtype(0) + " is not supported (int8, uint8, int32)");
  }
  if (c.in_dtype(1) != "float32") return c.fail("the scale must be float32, not " + c.in_dtype(1));
  return qdq_node(b, c, "DequantizeLinear", *t);
}

}  // namespace npu::compiler::tvm
