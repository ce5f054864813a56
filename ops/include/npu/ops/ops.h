// The operator library: the ONNX semantics of every operator the stack supports, by ONNX op
// type, over NpyArray tensors. The runtime runs host segments (docs/package.md) with it and
// the compiler folds constants with it, so both compute the same values. ONNX semantics up to
// opset 17 (18 where an attribute became an input). The compiler places on the host any node the
// device cannot run, so every operator of its supported set is here. Each op is computed by the
// reference operators of libnpuref (npu/ref/*.h) where one exists (convolution, matmul, pooling,
// (de)quantization and requantization, softmax, activations, elementwise rules, transpose),
// the same code the tests and the emulator's checks use, so "what an operator means" is
// written once.
//
// Supported (float32 unless noted; "numeric" = float32, float64 and the integer dtypes):
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
// - MatMul (1-D, 2-D, batched with broadcast batch dims); Gemm (alpha, beta, transA, transB,
//   optional C broadcast to [M, N]);
// - Conv (any spatial rank; 3+ as a direct loop: strides, pads, dilations, group incl.
//   depthwise, auto_pad NOTSET/VALID/SAME_UPPER/SAME_LOWER, kernel_shape, optional bias);
// - ConvTranspose (float32, float64; any spatial rank: strides, pads, output_padding,
//   dilations, group, auto_pad, output_shape overriding pads, kernel_shape, optional bias);
// - MaxPool (float32, int8, uint8; any spatial rank; strides, pads, dilations, ceil_mode,
//   auto_pad, storage_order; num_outputs 2 adds int64 Indices, flat over N*C*spatial),
//   AveragePool (count_include_pad, ceil_mode, auto_pad, dilations), GlobalMaxPool,
//   GlobalAveragePool. With ceil_mode a window may not start in the end padding; averages with
//   count_include_pad divide by the positions inside the padded input;
// - BatchNormalization (epsilon; training_mode 1 uses batch statistics and may output
//   running_mean and running_var with momentum); Dropout (identity, mask all true; training mode
//   only with ratio 0, a random ratio is refused);
// - ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1,
//   ReduceL2 (float32, float64, int8, uint8, int32, int64; integer Mean/L2 truncate),
//   ReduceLogSum, ReduceLogSumExp (float): axes from the attribute or from input 1, keepdims,
//   noop_with_empty_axes;
// - QuantizeLinear (float32 or int32 in; uint8 out unless the zero point is int8; per tensor
//   or per axis with axis; round half to even, saturate), DequantizeLinear (int8, uint8, int32
//   with zero point 0; per tensor or per axis);
// - ConvInteger (int8/uint8 x and w, scalar x zero point, scalar or per-output-channel w zero
//   point, int32 out), QLinearConv (per-tensor x and y, per-tensor or per-output-channel w,
//   int32 bias), MatMulInteger (a zero point per tensor or per row, b per tensor or per
//   column), QLinearMatMul (a per tensor or per row, b per tensor or per column, batched).
//   Requantization multiplies the accumulator by float32(float32(s_x * s_w) / s_y) exactly
//   and rounds half to even (ref::requantize), as ONNX's reference does in float64;
// - Reshape (shape input int64, 0 and -1 as ONNX, allowzero), Flatten (axis), Transpose
//   (perm, any rank), Identity (any dtype);
// - the data-movement, shape and comparison ops of host_ops_tensor (Concat, Split, Gather,
//   Slice, Pad, Tile, Expand, Squeeze, Unsqueeze, Cast, Shape, Size, Range, ConstantOfShape,
//   Where, Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not, Floor, Ceil,
//   Round);
// - LayerNormalization (axis, epsilon; optional Mean and InvStdDev outputs, float32),
//   InstanceNormalization, GroupNormalization (opset 18: scale and bias per group; 21: per
//   channel), float32 and float64, statistics in double;
// - ArgMax, ArgMin (keepdims, select_last_index; int64 out), TopK (K as attribute k before
//   opset 10, input from 10; largest, sorted; ties: the lower index first), numeric;
//   CumSum (axis input, exclusive, reverse); Trilu (upper, k input; any dtype).
// - GatherElements, ScatterND (reduction none/add/mul, max/min from opset 18; negative
//   indices; an index out of range is an error), DepthToSpace (DCR, CRD), SpaceToDepth (every
//   dtype);
// - Resize (opsets 10-19: scales or sizes, roi, axes, keep_aspect_ratio_policy; nearest with
//   every nearest_mode, n-d linear and cubic with exclude_outside and antialias; every
//   coordinate_transformation_mode incl. tf_crop_and_resize) and Upsample (opsets 7-9);
// - Einsum (numeric; explicit or implicit output, ellipsis broadcasting, diagonals, sums).
// - RNN, GRU, LSTM (float32, float64; opsets 7-18, layout from 14): directions, sequence_lens,
//   initial states, peepholes, input_forget, linear_before_reset, clip, the ONNX activation list
//   with activation_alpha/beta; Y, Y_h, Y_c each optional.
// float16: operators that move or select elements take it as it is; the others compute on
// float32 copies of float16 operands and round their float32 outputs back to float16 (as ONNX
// Runtime's CPU kernels do).
// Not supported: ConvInteger/QLinearConv of 3+ spatial dims.
//
// Attributes: a JSON object with the ONNX attribute names. int -> JSON integer, float -> JSON
// number, string -> JSON string, ints/floats/strings -> arrays of those, a TENSOR attribute
// -> {"dtype": "float32", "dims": [..], "values": [..]} (dtype as format::dtype_name gives
// it). The compiler adds "_opset": N, the model's opset of the default ONNX domain (17 when
// absent); ops whose semantics changed between opsets follow it.
//
// What each operator accepts — its opsets, attributes and input-0 element types — is the
// registry's (npu/ops/registry.h, npu/ops/operators.def); run() checks it before computing.
//
// Errors: lowercase one-liners naming the op, e.g. "host op 'Foo' is not supported",
// "Add: shapes [2, 3] and [4] do not broadcast", "Softmax: dtype int8 is not supported",
// "Conv: missing input 1", "MaxPool: missing attribute 'kernel_shape'", "Pad: unknown
// attribute 'foo'", "Pad: attribute mode is not a string", "Relu: opset 30 is outside the
// supported range 1..18". An output over RunOptions::max_output_bytes (4 GiB) is EFBIG
// ("Pad: output shape [..] is too large"), and so is work over RunOptions::max_work ("Conv:
// 2^40 multiply-accumulates ... exceed the host limit ..."); a failed allocation is ENOMEM
// ("Tile: out of memory"); a call stopped at its deadline is ETIMEDOUT ("Conv: stopped: the
// time limit passed"); every other error is EINVAL, or ENOTSUP for an unknown op.
// Threading/lifetime: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npu/expected.h"
#include "npu/format/npy.h"

namespace npu::ops {

/// Whether run() knows `op_type`.
bool is_supported(std::string_view op_type);
/// The supported op types, sorted.
std::vector<std::string> names();

/// The most multiply-accumulates (or window taps) one operator call may do on the host:
/// 2^36, about a minute of the reference loops. A convolution, matmul or pooling beyond it
/// fails with EFBIG before it allocates or loops.
inline constexpr uint64_t kMaxHostWork = uint64_t{1} << 36;

struct RunOptions {
  /// The largest output the operator may allocate; beyond it run() fails with EFBIG (the
  /// compiler's constant folding passes a smaller limit and leaves such nodes alone).
  uint64_t max_output_bytes = uint64_t{1} << 32;
  /// The most work (kMaxHostWork) the call may do; beyond it run() fails with EFBIG.
  uint64_t max_work = kMaxHostWork;
  /// When set, the call stops once the steady clock passes it (the long loops poll
  /// npu::cancelled(), npu/cancel.h) and run() fails with ETIMEDOUT. Without it the call
  /// honours the calling thread's CancelScope, if any.
  std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt;
};

/// Runs one ONNX operator: `attributes` is a JSON object text (ONNX attribute names, natural
/// JSON types), `inputs` the operator's inputs in ONNX order (a null pointer is an omitted
/// optional input). Returns the outputs (num_outputs of them).
Expected<std::vector<format::NpyArray>> run(std::string_view op_type, std::string_view attributes,
                                            std::span<const format::NpyArray* const> inputs,
                                            size_t num_outputs = 1, const RunOptions& options = {});

/// Runs an operator whose result depends only on its input's element type and shape (Shape,
/// Size) on that type alone, without data: what the compiler folds for a tensor whose values
/// are unknown but whose shape is static. ENOTSUP for any other operator.
Expected<std::vector<format::NpyArray>> run_on_type(std::string_view op_type,
                                                    std::string_view attributes,
                                                    format::DType dtype,
                                                    std::span<const int64_t> shape);

}  // namespace npu::ops
