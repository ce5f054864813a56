// Slice along one axis as ONNX defines it (opsets 1-18): negative start/end count from the
// end, both are clamped into the axis (to [0, dim] for a positive step, [-1, dim - 1] for a
// negative one), and the elements taken are start, start + step, ... before end. Written once
// for the operator library's host Slice (ops/src/tensor.cpp) and the compiler's lowering of
// Slice to a device view or copy. Pure function; thread-safe.
#pragma once

#include <cstdint>

namespace npu::ops {

/// The elements one axis of a Slice takes: `count` of them, the first at index `start`,
/// then every `step` (count 0: none; start is then meaningless).
struct SliceRange {
  int64_t start = 0, step = 1, count = 0;
};

/// The range Slice takes from an axis of size `dim` >= 0 for `start`, `end` and a nonzero
/// `step` (any int64 values, INT64_MIN/MAX included).
SliceRange slice_range(int64_t dim, int64_t start, int64_t end, int64_t step);

}  // namespace npu::ops
