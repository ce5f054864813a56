// Private: what the operator implementations share. Each row of the registry
// (npu/ops/operators.def) names its implementation in the Host column: a function
// `detail::<Host>(const OpCall&)`, declared below from the table (elementwise.cpp: elementwise,
// softmax and shape ops; nn.cpp: matmul, Gemm, convolution, pooling, batch normalization and
// reductions; quant.cpp: the quantized operators; tensor.cpp: data movement; convert.cpp:
// Cast, shapes, comparisons, rounding; normalization.cpp: Layer/Instance/GroupNormalization;
// selection.cpp: ArgMax, ArgMin, TopK; scan.cpp: CumSum; triangular.cpp: Trilu;
// gather_scatter.cpp: GatherElements, ScatterND; depth_space.cpp: DepthToSpace, SpaceToDepth;
// resize.cpp: Resize, Upsample; einsum.cpp: Einsum; recurrent.cpp: RNN, GRU, LSTM;
// conv_transpose.cpp: ConvTranspose). Rows of
// one family share an implementation that reads the row (c.schema: its Code and attribute
// defaults). run()
// (run.cpp) has already checked the opset, the attributes against the schema, input 0's dtype
// against the row's Types and every input with check_npy() when it calls one, and it turns
// exceptions into errors
// (std::bad_alloc: ENOMEM). Every helper reports errors as "<op>: <what>".
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npu/expected.h"
#include "npu/format/array_values.h"
#include "npu/format/npy.h"
#include "npu/format/shape.h"
#include "npu/ops/ops.h"
#include "npu/ops/registry.h"
#include "npu/ops/spatial.h"
#include "npu/ref/conv.h"
#include "npu/ref/tensor.h"

namespace npu::ops {

/// The opset assumed when the attributes carry no "_opset".
inline constexpr int64_t kDefaultOpset = 17;
/// The largest output an operator allocates by default (4 GiB): a hostile shape (a huge pad,
/// a Tile repeat) gives an error instead of an allocation the process cannot survive.
inline constexpr uint64_t kMaxOutputBytes = uint64_t{1} << 32;

/// One call of an operator: its registry row, attributes (a JSON object), inputs in ONNX
/// order (nullptr = omitted optional input), the number of outputs wanted, the model's opset
/// and the output size limit.
struct OpCall {
  std::string op;
  const nlohmann::json& attrs;
  std::span<const format::NpyArray* const> inputs;
  size_t num_outputs = 1;
  int64_t opset = kDefaultOpset;
  uint64_t max_output_bytes = kMaxOutputBytes;
  const OpSchema* schema = nullptr;  // set by run(); never null in an implementation
  uint64_t max_work = kMaxHostWork;
};

namespace detail {

using format::DType;
using format::NpyArray;
using json = nlohmann::json;
using Shape = std::vector<int64_t>;
using HostOutputs = Expected<std::vector<NpyArray>>;

/// The host implementations the registry's Host column names (several rows may share one).
#define NPU_OP(Name, Since, Until, Types, Shape, Device, Code, Host, ...) \
  HostOutputs Host(const OpCall& c);
#include "npu/ops/operators.def"
#undef NPU_OP

// ---- errors, inputs, attributes ----

/// "[3, 2]" (format::shape_text; takes a Shape so a braced list of dims converts).
inline std::string shape_text(const Shape& s) {
  return format::shape_text(s);
}
/// Elements of a shape (format::element_count: -1 for a negative dim or an overflow).
inline int64_t count(const Shape& s) {
  return format::element_count(s);
}
Error op_error(const OpCall& c, const std::string& what);
/// Fails with EFBIG when outputs × per_output (multiply-accumulates or window taps per output
/// element; both non-negative) exceeds c.max_work, computed without overflow; `what` names
/// the unit ("multiply-accumulates").
Expected<void> check_work(const OpCall& c, int64_t outputs, int64_t per_output, const char* what);
/// Input i, or an error when it is absent.
Expected<const NpyArray*> input(const OpCall& c, size_t i);
/// Input i or nullptr when omitted.
const NpyArray* optional_input(const OpCall& c, size_t i);
/// Error "<op>: <what> dtype X is not supported" unless a.dtype is in `ok` (`what` defaults
/// to nothing, e.g. "x_zero_point").
Expected<void> need_dtype(const OpCall& c, const NpyArray& a, std::initializer_list<DType> ok,
                          const char* what = nullptr);
/// Error unless `a` has exactly one element; `what` names it ("min").
Expected<void> need_scalar(const OpCall& c, const NpyArray& a, const char* what);
/// Error "<op>: inputs have different dtypes X and Y" unless a and b share a dtype.
Expected<void> need_same_dtype(const OpCall& c, const NpyArray& a, const NpyArray& b);
Expected<int64_t> int_attr(const OpCall& c, const char* name, int64_t def);
/// An integer attribute without a default: error "<op>: missing attribute '<name>'".
Expected<int64_t> required_int_attr(const OpCall& c, const char* name);
Expected<float> float_attr(const OpCall& c, const char* name, float def);
Expected<std::string> string_attr(const OpCall& c, const char* name, const char* def);
/// The same with the default of the row's attribute schema ("alpha:float=0.01").
Expected<float> float_attr(const OpCall& c, const char* name);
Expected<std::string> string_attr(const OpCall& c, const char* name);
Expected<std::optional<std::vector<int64_t>>> ints_attr(const OpCall& c, const char* name);
/// axis in [-rank, rank) (or [-rank-1, rank] with `inclusive`) made non-negative.
Expected<size_t> norm_axis(const OpCall& c, int64_t axis, size_t rank, bool inclusive = false);
/// For queries about a call that do not compute its outputs (npu/ops/resize_taps.h): finds
/// `op_type`, parses and checks the attributes as run() does and calls f with the call. The
/// inputs go to f unchecked, so a stand-in without data may take a tensor's place.
Expected<void> with_call(std::string_view op_type, std::string_view attributes,
                         std::span<const NpyArray* const> inputs,
                         const std::function<Expected<void>(const OpCall&)>& f);
inline HostOutputs single(NpyArray a) {
  return std::vector<NpyArray>{std::move(a)};
}

// ---- outputs ----

/// Error unless an output of dtype `t` and `shape` has no negative dimension (EINVAL) and
/// fits in the call's max_output_bytes (EFBIG).
Expected<void> check_output(const OpCall& c, DType t, const Shape& shape);
/// A zero-filled output, after check_output().
Expected<NpyArray> alloc_output(const OpCall& c, DType t, Shape shape);

// ---- typed element access ----

/// Element i of an integer or float tensor as int64 (floats truncate) / as double
/// (npu/format/array_values.h).
using format::int_at;
using format::number_at;

/// Runs f(T{}) for the element type T of dtype `t`: any numeric dtype but float16 (float,
/// double, int8..int64, uint8..uint64). bool and float16 give "<op>: dtype X is not
/// supported". Callers narrow the accepted dtypes with need_dtype() first; f must compile for
/// every T and return the same Expected type for each.
template <typename F>
auto dispatch(const OpCall& c, DType t, F&& f) -> decltype(f(float{})) {
  switch (t) {
    case DType::kFloat32:
      return f(float{});
    case DType::kFloat64:
      return f(double{});
    case DType::kInt8:
      return f(int8_t{});
    case DType::kUint8:
      return f(uint8_t{});
    case DType::kInt16:
      return f(int16_t{});
    case DType::kUint16:
      return f(uint16_t{});
    case DType::kInt32:
      return f(int32_t{});
    case DType::kUint32:
      return f(uint32_t{});
    case DType::kInt64:
      return f(int64_t{});
    case DType::kUint64:
      return f(uint64_t{});
    default:
      return op_error(c, std::string("dtype ") + format::dtype_name(t) + " is not supported");
  }
}

/// dispatch() on the dtype of `a`.
template <typename F>
auto dispatch(const OpCall& c, const NpyArray& a, F&& f) -> decltype(f(float{})) {
  return dispatch(c, a.dtype, std::forward<F>(f));
}

/// dispatch() that also runs f(bool{}) for bool (only float16 is unsupported).
template <typename F>
auto dispatch_with_bool(const OpCall& c, DType t, F&& f) -> decltype(f(float{})) {
  if (t == DType::kBool) return f(bool{});
  return dispatch(c, t, std::forward<F>(f));
}

/// Error unless `a` is float32 or float64 (`int_ok`: or any integer dtype, bool excluded).
Expected<void> need_numeric(const OpCall& c, const NpyArray& a, bool int_ok,
                            const char* what = nullptr);

// ---- NumPy broadcasting ----

/// The NumPy broadcast of the shapes, or "<op>: shapes A and B [and C...] do not broadcast".
Expected<Shape> broadcast(const OpCall& c, std::span<const Shape* const> shapes);
inline Expected<Shape> broadcast(const OpCall& c, std::initializer_list<const Shape*> shapes) {
  return broadcast(c, std::span<const Shape* const>(shapes.begin(), shapes.size()));
}
inline Expected<Shape> broadcast(const OpCall& c, const Shape& a, const Shape& b) {
  return broadcast(c, {&a, &b});
}
/// Element strides of `s` seen as `out` (0 along broadcast dims).
std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out);

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

// ---- layout ----

/// `x` (any rank and dtype) transposed: output axis d is input axis perm[d].
Expected<NpyArray> permute(const OpCall& c, const NpyArray& x, const std::vector<int64_t>& perm);

// ---- (batched) matrix multiply geometry, shared by MatMul and the integer matmuls ----

/// ONNX MatMul shapes: 1-D operands promoted (and their unit dim dropped from the output),
/// batch dims broadcast.
struct MatmulGeometry {
  int64_t m = 0, k = 0, n = 0;
  Shape batch;                     // broadcast batch dims
  std::vector<int64_t> a_strides;  // batch strides of A / B seen as `batch` (in matrices)
  std::vector<int64_t> b_strides;
  Shape out_shape;
};
Expected<MatmulGeometry> matmul_geometry(const OpCall& c, const Shape& a, const Shape& b);

// ---- convolution geometry, shared by Conv, ConvInteger and QLinearConv ----

/// X [N, C, spatial...] and W [M, C / group, kernel...] with the attributes auto_pad, pads,
/// strides, dilations, group and kernel_shape, as the 2-D reference convolution sees them
/// (1-D convolutions have height 1), plus the ONNX output shape [N, M, spatial...].
struct ConvGeometry {
  ref::Conv2dShape s;
  Shape out_shape;
};
Expected<ConvGeometry> conv_geometry(const OpCall& c, const Shape& x, const Shape& w);

/// ONNX layouts to and from the reference's: X NC(H)W -> NHWC, W MC(H)W -> MHWC, Y NHWC -> NCHW.
Expected<NpyArray> conv_input_nhwc(const OpCall& c, const NpyArray& x, const ConvGeometry& g);
Expected<NpyArray> conv_weights_ohwi(const OpCall& c, const NpyArray& w, const ConvGeometry& g);
Expected<NpyArray> conv_output_nchw(const OpCall& c, const NpyArray& y_nhwc, const ConvGeometry& g);

/// The "auto_pad" attribute (npu/ops/spatial.h), or "<op>: attribute auto_pad: unknown value".
Expected<AutoPad> auto_pad_attr(const OpCall& c);

/// Spatial attributes (strides, dilations, pads, kernel_shape) checked against `rank`
/// (absent: 1s / 0s; pads 2 * rank, begins then ends).
struct SpatialAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;
};
Expected<SpatialAttrs> spatial_attrs(const OpCall& c, size_t rank,
                                     const std::vector<int64_t>& kernel_from_weights);

/// The output size and pads of every spatial dim of input `x` ([N, C, spatial...]) under
/// `a` and auto_pad `mode` (resolve_pads). Errors name the op: a window that does not fit,
/// or attributes whose arithmetic leaves int64.
Expected<std::vector<PadResult>> resolve_windows(const OpCall& c, AutoPad mode,
                                                 const std::vector<int64_t>& x,
                                                 const SpatialAttrs& a, bool ceil_mode);

}  // namespace detail
}  // namespace npu::ops
