// Private: one call of an operator (OpCall), the names every implementation uses, and the
// implementations themselves. Each row of the registry (npu/ops/operators.def) names its
// implementation in the Host column: a function `detail::<Host>(const OpCall&)`, declared
// below from the table (elementwise.cpp: elementwise, softmax and shape ops; nn.cpp: matmul,
// Gemm, convolution, pooling, batch normalization and reductions; quant.cpp: the quantized
// operators; tensor.cpp: data movement; convert.cpp: Cast, shapes, comparisons, rounding;
// normalization.cpp: Layer/Instance/GroupNormalization; selection.cpp: ArgMax, ArgMin, TopK;
// scan.cpp: CumSum; triangular.cpp: Trilu; gather_scatter.cpp: GatherElements, ScatterND;
// depth_space.cpp: DepthToSpace, SpaceToDepth; resize.cpp: Resize, Upsample; einsum.cpp:
// Einsum; recurrent.cpp: RNN, GRU, LSTM; conv_transpose.cpp: ConvTranspose; one_hot.cpp:
// OneHot). Rows of one family share an implementation that reads the row (c.schema: its Code
// and attribute defaults). run() (run.cpp) has already checked the opset, the attributes
// against the schema, input 0's dtype against the row's Types and every input with
// check_npy() when it calls one, and it turns exceptions into errors (std::bad_alloc: ENOMEM).
// Every helper reports errors as "<op>: <what>" (op_error).
//
// The helpers the implementations share live beside this file, one concept each: operands.h
// (inputs and their dtypes), attributes.h, dtype_dispatch.h, work_limits.h (the work and
// output size limits), broadcasting.h, permute.h, matmul_geometry.h, window_geometry.h (the
// window of a convolution or pooling) and conv_geometry.h.
// Threading: every function is pure; an OpCall and what it refers to live for one call.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "npu/expected.h"
#include "npu/format/npy.h"
#include "npu/format/shape.h"
#include "npu/ops/ops.h"
#include "npu/ops/registry.h"

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

/// "[3, 2]" (format::shape_text; takes a Shape so a braced list of dims converts).
inline std::string shape_text(const Shape& s) {
  return format::shape_text(s);
}
/// Elements of a shape (format::element_count: -1 for a negative dim or an overflow).
inline int64_t count(const Shape& s) {
  return format::element_count(s);
}
/// Error EINVAL "<op>: <what>".
Error op_error(const OpCall& c, const std::string& what);

/// For queries about a call that do not compute its outputs (npu/ops/resize_taps.h): finds
/// `op_type`, parses and checks the attributes as run() does and calls f with the call. The
/// inputs go to f unchecked, so a stand-in without data may take a tensor's place.
Expected<void> with_call(std::string_view op_type, std::string_view attributes,
                         std::span<const NpyArray* const> inputs,
                         const std::function<Expected<void>(const OpCall&)>& f);
inline HostOutputs single(NpyArray a) {
  return std::vector<NpyArray>{std::move(a)};
}

}  // namespace detail
}  // namespace npu::ops
