// quantize: post-training int8 quantization of a float graph (npu-compile --quantize int8
// --calibration FILE.npy). The flow has three steps, driven by compile_graph() when
// CompileOptions::quantize_int8 is set:
//
//   1. calibration_graph(g): the fused float graph with every float tensor a Conv/Gemm/MatMul
//      reads or writes added as a graph output;
//   2. the caller runs it in float on representative inputs; calibration_ranges() takes the
//      min/max of each returned tensor;
//   3. quantize_int8(g, ranges) rewrites each float Conv/Gemm/MatMul it can into QLinearConv /
//      QLinearMatMul: weights symmetric int8 per output channel, activations asymmetric int8
//      per tensor from their ranges, int32 bias; QuantizeLinear where a float tensor enters an
//      int8 op, DequantizeLinear where an int8 tensor leaves to a float reader or the graph's
//      outputs, and int8 carried through ops that are exact on it (MaxPool, Flatten, Reshape,
//      ...). A fused Relu/Clip becomes the output's quantization range. Everything else stays
//      float. docs/compiler.md "Quantization" states the scheme.
//
// quantize_int8 emits one IR extension: QLinearMatMul may have a 9th input, an int32 bias per
// output column (ONNX's QLinearMatMul has none), which the lowering and the host op add to the
// accumulator. Plain functions over a Graph value; no shared state.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "npu/compiler/graph.h"
#include "npu/expected.h"
#include "npu/format/npy.h"

namespace npu::compiler {

/// Observed value range of a float tensor.
struct TensorRange {
  float min = 0.0f, max = 0.0f;
};
/// Ranges by value name.
using Ranges = std::map<std::string, TensorRange>;

/// Per-tensor affine int8 parameters: real = scale * (q - zero_point).
struct QuantParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

/// Asymmetric int8 parameters of an activation range: the range is widened to include 0 (so 0
/// is exact), scale = (max - min) / 255, zero_point = round(-128 - min / scale) clamped to
/// [-128, 127]. An empty range (max == min == 0) gets scale 1.
QuantParams activation_qparams(TensorRange r);

/// `g` with every float32, non-constant tensor that a float Conv/Gemm/MatMul reads (input 0)
/// or writes added to the graph's outputs, so that running it yields the values
/// quantize_int8() needs ranges for. Intermediate tensors keep their names; a graph input
/// (which a package cannot also list as an output) is copied by an Identity node to an output
/// named "<input>/calibration".
Graph calibration_graph(const Graph& g);

/// Min/max of every float32 array (non-finite elements ignored; arrays without a finite
/// element are left out); other element types are ignored.
Ranges ranges_of(const std::map<std::string, format::NpyArray>& tensors);

/// ranges_of() the outputs of a run of `calibration` (from calibration_graph()), keyed by the
/// tensors of the original graph (an input's copy counts for the input).
Ranges calibration_ranges(const Graph& calibration,
                          const std::map<std::string, format::NpyArray>& outputs);

/// Rewrites `g` (after fuse-activation, before check-support) to int8 as described above. A
/// Conv/Gemm/MatMul is quantized when its input and output are float32 with static shapes,
/// its weights (and bias) are constant float32, its fused activation is none, Relu or a Clip
/// whose bounds include 0, and `ranges` has its output (and its input, unless that is already
/// int8). Errors only for a graph it cannot rewrite consistently (none expected).
[[nodiscard]] Expected<void> quantize_int8(Graph& g, const Ranges& ranges);

}  // namespace npu::compiler
