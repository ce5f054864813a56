// The interpolation a Resize (or Upsample) node performs, axis by axis, as ONNX defines it:
// for every output index of an axis, the input indices it reads and their weights (the
// coordinate transform, the nearest/linear/cubic kernel, antialias and exclude_outside
// applied). The operator library's host Resize computes its values from exactly these taps
// (ops/src/resize.cpp), and the compiler's resize-to-matmul pass turns them into constant
// interpolation matrices for the matrix engine, so the coordinate rules are written once.
// Pure functions; thread-safe; the result owns its data.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "npu/expected.h"
#include "npu/format/npy.h"

namespace npu::ops {

/// One axis of a resize. Output index o reads input indices index[o * taps + k] (already
/// clamped into [0, in)) with weights weight[o * taps + k], k < taps; when outside[o] is set
/// the output is the extrapolation value instead (tf_crop_and_resize outside the crop).
struct ResizeAxisTaps {
  int64_t in = 1, out = 1;
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;
  /// Every output index takes exactly its own input element (the axis needs no pass).
  bool identity = true;

  /// The weights as a dense row-major [out, in] matrix: row o sums the weights o gives each
  /// input index; a row of an `outside` index is all zero.
  std::vector<double> matrix() const;
};

enum class ResizeMode { kNearest, kLinear, kCubic };

/// Every axis of one Resize call.
struct ResizeTaps {
  ResizeMode mode = ResizeMode::kNearest;
  double extrapolation_value = 0.0;
  /// One per dim of X, in order; the output shape is their `out`s.
  std::vector<ResizeAxisTaps> axes;
};

/// The taps of a Resize (opsets 10-19) or Upsample (7-9) call: `op_type`, `attributes` and
/// `inputs` as npu::ops::run() takes them (the attributes with "_opset"), but inputs[0] may
/// be a stand-in with X's dtype and shape and no data; roi, scales and sizes must be given
/// with their values. Fails with the errors the host op gives for the same call.
Expected<ResizeTaps> resize_taps(std::string_view op_type, std::string_view attributes,
                                 std::span<const format::NpyArray* const> inputs);

}  // namespace npu::ops
