// Private: the per-op device lowerings. Each op family has one entry with the same signature
// (LowerFn): it lowers one node of L.g onto npu/codegen op descriptors, emitting its layers
// through L.layer() and placing its outputs with L.define()/L.alias(), or says why it cannot
// (the driver then moves the node to the host). Lowering::lower_node (lower_ops.cpp) picks
// the entry by op type. Each node picks the storage order it needs: channels-last for
// convolutions, pools and batch norm; identity for matmuls, softmax, reductions and
// reshapes; whatever the input has for elementwise ops, activations and (de)quantization.
// The helpers below are shared by several families. Single-threaded, like Lowering.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lower/lowering.h"
#include "npu/compiler/op_set.h"

namespace npu::compiler::detail {

/// An op family's lowering entry.
using LowerFn = Expected<void> (*)(Lowering& L, const Node& n);

// ---- the op families' entries ----
// lower_conv.cpp
Expected<void> lower_conv(Lowering& L, const Node& n);  // Conv, ConvInteger, QLinearConv
// lower_matmul.cpp: MatMul, Gemm, MatMulInteger, QLinearMatMul
Expected<void> lower_matmul(Lowering& L, const Node& n);
// lower_vector.cpp
Expected<void> lower_eltwise(Lowering& L, const Node& n);     // Add..Min, Pow, PRelu
Expected<void> lower_activation(Lowering& L, const Node& n);  // unary ops (act_of)
Expected<void> lower_pool(Lowering& L, const Node& n);        // Max/Average/Global pools
Expected<void> lower_softmax(Lowering& L, const Node& n);     // Softmax, LogSoftmax
Expected<void> lower_reduce(Lowering& L, const Node& n);      // ReduceSum/Mean/Max/Min
Expected<void> lower_batchnorm(Lowering& L, const Node& n);   // BatchNormalization
Expected<void> lower_layernorm(Lowering& L, const Node& n);   // LayerNormalization
Expected<void> lower_quant(Lowering& L, const Node& n);       // Quantize/DequantizeLinear
// lower_move.cpp
Expected<void> lower_view(Lowering& L, const Node& n);       // reshape-like (Identity, Dropout too)
Expected<void> lower_transpose(Lowering& L, const Node& n);  // Transpose (an alias)
Expected<void> lower_concat(Lowering& L, const Node& n);     // Concat
Expected<void> lower_slice(Lowering& L, const Node& n);      // Slice (a view or a copy)
Expected<void> lower_pad(Lowering& L, const Node& n);        // Pad (constant mode)
Expected<void> lower_resize(Lowering& L, const Node& n);     // Resize (nearest, integer scales)
/// The Host family: an error (the support check never places such a node on the device).
Expected<void> lower_host(Lowering& L, const Node& n);

// ---- shared helpers (lower_ops.cpp) ----

/// Product of dims [from, to) of d (1 if empty).
int64_t dim_product(const std::vector<int64_t>& d, size_t from, size_t to);

/// Per-element values of a (small) constant, broadcast from 1 element to n when needed:
/// floats (scales, bounds, biases) or integers (zero points, int32 biases; an omitted
/// optional input gives zeros).
Expected<std::vector<float>> floats_n(const Graph& g, ValueId v, size_t n, const char* what);
Expected<std::vector<int64_t>> ints_n(const Graph& g, ValueId v, size_t n, const char* what);

template <typename T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span(v));
}

/// A device activation function with its parameters.
struct Act {
  uint8_t func;
  float alpha, beta;
};

/// The device activation of unary op `op_type` (its registry row's NPU_ACT_* code; alpha/beta
/// from `n` if given, else the schema's defaults), or none.
std::optional<Act> act_of(const std::string& op_type, const Node* n);
/// The ISA function code of n's registry row (NPU_ELTWISE_*, NPU_POOL_*, NPU_REDUCE_*, ...).
uint8_t device_code(const Node& n);

/// A fused activation of a float Conv/MatMul: a clamp when it is one (Relu, Clip), else an
/// ACTIVATION layer on the output in place (`post`, emitted by emit_post).
template <typename Op>
Expected<void> fused_activation(const Node& n, Op& op, std::optional<Act>& post) {
  if (!n.activation) return ok();
  const FusedActivation& f = *n.activation;
  if (f.op_type == "Relu") {
    op.fclamp_min = 0.0f;
    return ok();
  }
  if (f.op_type == "Clip") {
    op.fclamp_min = f.alpha;
    op.fclamp_max = f.beta;
    return ok();
  }
  post = act_of(f.op_type, nullptr);
  if (!post) return make_error(EINVAL, "fused activation " + f.op_type + " is not supported");
  const ops::OpSchema& s = *find_op(f.op_type)->schema;
  if (s.attribute("alpha")) post->alpha = f.alpha;
  if (s.attribute("beta")) post->beta = f.beta;
  return ok();
}

/// The in-place ACTIVATION layer `<name>/act` on `out`, if there is a `post` activation.
Expected<void> emit_post(Lowering& L, const std::optional<Act>& post,
                         const codegen::TensorDesc& out, const std::string& name);

/// Integer conv/matmul parameters: the input and output zero points and one
/// npu_chan_qparams per output channel. ConvInteger/MatMulInteger (`integer_only`): inputs
/// (x, w, x_zp, w_zp), int32 output. QLinearConv/QLinearMatMul: inputs (x, x_scale, x_zp, w,
/// w_scale, w_zp, y_scale, y_zp, bias) with the ONNX float32 scale x_scale * w_scale / y_scale
/// (bias: QLinearConv's B, or the compiler's QLinearMatMul extension).
struct IntParams {
  int32_t in_zp = 0, out_zp = 0;
  std::vector<npu_chan_qparams> chan;
};
Expected<IntParams> int_params(const Graph& g, const Node& n, size_t channels, bool integer_only);

/// TensorDesc of a 1-D conv/pool tensor stored [N][W][C] as [N][1][W][C].
codegen::TensorDesc as_2d(codegen::TensorDesc t);

/// A 2-D conv/pool window (a 1-D one has kh = sh = dh = 1 and no top/bottom pads).
struct Window {
  uint32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  uint32_t pt = 0, pl = 0, pb = 0, pr = 0;
};

/// Kernel, strides, dilations and pads of a 1-D/2-D conv or pool (auto_pad resolved).
Expected<Window> window_of(const Node& n, const std::vector<int64_t>& in_dims,
                           std::vector<int64_t> kernel);

/// v's logical view right-aligned to `rank` dims and permuted into storage order `perm`
/// (constants converted to `as` if given).
Expected<codegen::TensorDesc> broadcast_view(Lowering& L, ValueId v, size_t rank, const Perm& perm,
                                             std::optional<DType> as);

}  // namespace npu::compiler::detail
