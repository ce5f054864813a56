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
// Which operators, opsets, attributes and input-0 element types: the registry
// (npu/ops/operators.def; `npu-compile --list-ops` prints it). What each operator accepts and
// computes beyond ONNX's text (dtypes, edge cases, opset differences) is in the header
// comment of its implementation file in ops/src/ (the Host column names the function).
//
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
// run() checks what the registry declares (npu/ops/registry.h) before computing.
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
