// Private: what the tensor operators (tensor.cpp: data movement; convert.cpp: Cast, shapes,
// comparisons, rounding; gather_scatter.cpp, resize.cpp) share. Errors are "<op>: <what>"
// (common.h).
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "op_call.h"

namespace npu::ops::detail {

/// memcpy that accepts empty ranges (whose pointers may be null).
void copy_bytes(std::byte* dst, const std::byte* src, size_t n);
/// Attribute `name`, or nullptr when absent.
const json* find_attr(const OpCall& c, const char* name);
/// The values of an int32/int64 tensor, any rank (`what` names it in errors).
Expected<Shape> int_values(const OpCall& c, const NpyArray& a, const std::string& what);
/// A single output, or the error.
HostOutputs one(Expected<NpyArray> r);
/// x broadcast to `shape` (which broadcast() accepted).
Expected<NpyArray> broadcast_to(const OpCall& c, const NpyArray& x, const Shape& shape);
/// Output element at index (i0, i1, ...) is x's element at (maps[0][i0], maps[1][i1], ...),
/// with x seen as `in_shape`; a -1 in any map selects `fill` (one element's bytes, zeros when
/// empty) instead. The output (shape: the maps' sizes) is capped by alloc_output().
Expected<NpyArray> remap(const OpCall& c, const NpyArray& x, const Shape& in_shape,
                         const std::vector<Shape>& maps, std::span<const std::byte> fill = {});
/// x converted element-wise to `to` with Cast's rules (convert.cpp).
Expected<NpyArray> convert_to(const OpCall& c, const NpyArray& x, DType to);

}  // namespace npu::ops::detail
