// Host ops: the operators a model package runs on the host (host segments, docs/package.md),
// by ONNX op type, over NpyArray tensors. Each op is computed by the reference operators of
// libnpuref (npu/ref/*.h), the same code the tests and the emulator's checks use, so "what an
// operator means" is written once.
//
// Supported: Relu, Sigmoid, Tanh, Exp, Log, Sqrt, Abs, Neg, Erf, Reciprocal, Softplus,
// LeakyRelu (alpha), Elu (alpha), HardSigmoid (alpha, beta), HardSwish, Gelu (float32);
// Softmax, LogSoftmax (axis, default -1; float32); Add, Sub, Mul, Div, Max, Min, Pow with
// NumPy broadcasting (float32; Add/Sub/Mul/Div/Max/Min also int32); MatMul (float32, 1-D, 2-D
// and batched with broadcast batch dims); Reshape (shape input int64, 0 and -1 as ONNX),
// Flatten (axis), Transpose (perm, rank <= 4), Identity (any dtype).
//
// Errors: lowercase one-liners naming the op, e.g. "host op 'Foo' is not supported",
// "Add: shapes [2, 3] and [4] do not broadcast", "Softmax: dtype int8 is not supported".
// Threading/lifetime: pure functions.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npu/expected.h"
#include "npu/format/npy.h"

namespace npu {

/// Whether run_host_op() knows `op_type`.
bool host_op_supported(std::string_view op_type);
/// The supported op types, sorted.
std::vector<std::string> host_op_names();

/// Runs one ONNX operator: `attributes` is a JSON object text (ONNX attribute names, natural
/// JSON types), `inputs` the operator's inputs in ONNX order (a null pointer is an omitted
/// optional input). Returns the outputs (num_outputs of them).
Expected<std::vector<format::NpyArray>> run_host_op(std::string_view op_type,
                                                    std::string_view attributes,
                                                    std::span<const format::NpyArray* const> inputs,
                                                    size_t num_outputs = 1);

}  // namespace npu
