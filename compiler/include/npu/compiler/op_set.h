// The operator set the compiler accepts: every ONNX operator the IR represents, with its
// class (which decides how the support check, the layout pass and lowering treat it). Models
// using an operator outside this set are rejected at import (or, on request, imported and kept
// on the host with the reason "unsupported operator").
#pragma once

#include <string_view>
#include <vector>

namespace npu::compiler {

/// What kind of computation an operator is.
enum class OpClass {
  kConv,        // Conv, ConvInteger, QLinearConv: the matrix engine's CONV2D
  kMatMul,      // MatMul, Gemm, MatMulInteger, QLinearMatMul: MATMUL
  kEltwise,     // binary elementwise with broadcasting: ELTWISE
  kActivation,  // unary elementwise: ACTIVATION
  kPool,        // MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: POOL
  kSoftmax,     // Softmax, LogSoftmax: SOFTMAX
  kNorm,        // BatchNormalization: SCALE_SHIFT
  kQuant,       // QuantizeLinear, DequantizeLinear: QUANTIZE / DEQUANTIZE
  kReduce,      // ReduceMean, ReduceSum, ReduceMax, ReduceMin: REDUCE
  kTranspose,   // Transpose: TRANSPOSE
  kMove,        // data movement the DMA does: Concat, Pad, Reshape, Flatten, Squeeze, Unsqueeze
  kNoOp,        // Identity, Dropout: removed by the passes
  kHostOnly,    // shape arithmetic and the rest: host reference implementations only
};

struct OpInfo {
  std::string_view op_type;  // in the default ONNX domain
  OpClass op_class;
};

/// The entry for `op_type` (default ONNX domain), or nullptr if the compiler does not support it.
const OpInfo* find_op(std::string_view op_type);
/// The whole supported set, in a fixed order (for docs and tools).
const std::vector<OpInfo>& supported_ops();

}  // namespace npu::compiler
