// Device-op descriptors: one struct per operator the code generator lowers to the ISA, with
// every tensor already placed in DRAM (TensorDesc). They are independent of any graph IR; the
// compiler maps its nodes onto them. Semantics are those of the ISA commands (docs/isa.md).
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "npu/codegen/tensor.h"
#include "npu_isa.h"

namespace npu::codegen {

constexpr float kInf = std::numeric_limits<float>::infinity();

/// 2-D convolution. input [N][H][W][C], weights [OC][KH][KW][C/groups] (contiguous), output
/// [N][OH][OW][OC]. Integer mode (int8/uint8 in and weights, int8/uint8/int32 out) reads
/// npu_chan_qparams[OC] at chan_va; fp32 mode reads float bias[OC] at chan_va when chan_va != 0.
struct Conv2dOp {
  std::string name = "conv2d";
  TensorDesc input, weights, output;
  uint64_t chan_va = 0;
  uint32_t stride_h = 1, stride_w = 1;
  uint32_t dil_h = 1, dil_w = 1;
  uint32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  uint32_t groups = 1;  // depthwise: groups == C == OC
  int32_t in_zp = 0, out_zp = 0;
  std::optional<int32_t> clamp_min, clamp_max;  // integer clamps (default: output range)
  float fclamp_min = -kInf, fclamp_max = kInf;  // fp32 clamps (fused Relu/Clip)
};

/// Batched matrix multiply / Gemm: out = a x b. a [M][K] or [B][M][K]; b [K][N] ([N][K] with
/// transpose_b), or batched [B][K][N]; out [M][N] or [B][M][N]. A rank-2 b is shared by all
/// batches. Quantization as Conv2dOp with channels = columns N (npu_chan_qparams[N] or fp32
/// bias[N] at chan_va).
struct MatMulOp {
  std::string name = "matmul";
  TensorDesc a, b, output;
  uint64_t chan_va = 0;
  bool transpose_b = false;
  int32_t a_zp = 0, out_zp = 0;
  std::optional<int32_t> clamp_min, clamp_max;
  float fclamp_min = -kInf, fclamp_max = kInf;
};

/// Max / average pooling of NHWC tensors; global pooling is k = (H, W), stride 1, no pads.
struct PoolOp {
  std::string name = "pool";
  uint8_t kind = NPU_POOL_MAX;  // NPU_POOL_MAX | NPU_POOL_AVG
  TensorDesc input, output;     // [N][H][W][C], [N][OH][OW][C]; fp32, int8 or uint8
  uint32_t k_h = 1, k_w = 1;
  uint32_t stride_h = 1, stride_w = 1;
  uint32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool count_pad = false;
  bool global = false;  // k = input H, W (k/stride/pads ignored)
};

/// Binary elementwise op with NumPy broadcasting (dims aligned on the right, up to 4 after
/// merging). fp32, int32 or int8.
struct EltwiseOp {
  std::string name = "eltwise";
  uint8_t op = NPU_ELTWISE_ADD;
  TensorDesc a, b, output;
};

/// Unary function (NPU_ACT_*), same shape in and out; contiguous tensors.
struct ActivationOp {
  std::string name = "activation";
  uint8_t func = NPU_ACT_RELU;
  TensorDesc input, output;
  float alpha = 0.0f, beta = 0.0f;
};

/// Softmax (or log-softmax) over the innermost axis; fp32, contiguous.
struct SoftmaxOp {
  std::string name = "softmax";
  TensorDesc input, output;
  bool log = false;
};

/// QuantizeLinear (fp32 -> int8/uint8) or DequantizeLinear (int8/uint8/int32 -> fp32).
/// Per-tensor (channels == 1: scale, zp) or per-axis: element i uses
/// npu_qparam[(i / inner) % channels] at params_va.
struct QuantizeOp {
  std::string name = "quantize";
  bool dequantize = false;
  TensorDesc input, output;  // contiguous, same element count
  float scale = 1.0f;
  int32_t zp = 0;
  uint32_t channels = 1, inner = 1;
  uint64_t params_va = 0;
};

/// Integer rescale int8/uint8/int32 -> int8/uint8 (NPU_OP_REQUANTIZE).
struct RequantizeOp {
  std::string name = "requantize";
  TensorDesc input, output;  // contiguous, same element count
  int32_t multiplier = 1 << 30, shift = 30;
  int32_t in_zp = 0, out_zp = 0;
  std::optional<int32_t> clamp_min, clamp_max;
};

/// Permutation of up to 4 dims: output dims = input dims[perm[i]]; contiguous tensors, any
/// element size.
struct TransposeOp {
  std::string name = "transpose";
  TensorDesc input, output;
  std::vector<uint32_t> perm;
};

/// Reduction (NPU_REDUCE_*) over the contiguous axis range [axis_begin, axis_end) of an fp32
/// contiguous tensor; the output holds the remaining dims (kept dims of size 1 are fine).
struct ReduceOp {
  std::string name = "reduce";
  uint8_t kind = NPU_REDUCE_MEAN;
  TensorDesc input, output;
  uint32_t axis_begin = 0, axis_end = 1;
};

/// Per-channel y = x * scale[c] + shift[c] over the innermost axis of an fp32 tensor
/// (float scale[C] at scale_va, float shift[C] at shift_va).
struct ScaleShiftOp {
  std::string name = "scale_shift";
  TensorDesc input, output;
  uint64_t scale_va = 0, shift_va = 0;
};

/// Copy between two strided DRAM views of identical dims and dtype, or of two float dtypes
/// (the DMA converts: fp32 <-> fp16/bf16) (Concat into a sub-view
/// of the output, Slice, Expand with zero input strides, layout changes); any element size,
/// any rank (axes beyond the innermost 3 after merging are looped one index per tile).
struct CopyOp {
  std::string name = "copy";
  TensorDesc input, output;
};

/// Constant-mode padding: output dims = input dims + pad_before + pad_after; the output holds
/// fill_bits everywhere but the input, copied at offset pad_before. Strided views are fine.
struct PadOp {
  std::string name = "pad";
  TensorDesc input, output;
  std::vector<uint32_t> pad_before;  // per dim
  uint32_t fill_bits = 0;  // fp32 bits (for fp32, fp16 and bf16 outputs) or the integer value
};

}  // namespace npu::codegen
