// Private: when the resize-to-matmul pass turns a Resize into matrix products the device
// runs, and when the device runs a nearest Resize as a copy instead; shared by the pass and
// the support check (which reports why the others stay on the host). Pure functions of the
// graph; thread-safe.
#pragma once

#include <string>

#include "npu/compiler/graph.h"

namespace npu::compiler {

/// Why Resize/Upsample node `n` is not rewritten into MatMuls ("" when it is): it must be a
/// float32 4-D resize of H and W only with static shapes, constant roi/scales/sizes, an
/// interpolation matrix per axis of at most kMaxResizeMatrix elements and no
/// tf_crop_and_resize extrapolation_value other than 0; a nearest resize the device copies
/// (resize_copy_reason() empty) is left to that copy.
std::string resize_matmul_reason(const Graph& g, const Node& n);

/// Why a nearest Resize cannot run on the device as a copy with zero strides ("" when it
/// can): it needs integer factors on H and W of a 4-D tensor whose coordinate rule reads
/// input index floor(o / factor) (support.cpp).
std::string resize_copy_reason(const Graph& g, const Node& n);

/// The most elements one interpolation matrix [out, in] may have (16 MiB of float32).
inline constexpr int64_t kMaxResizeMatrix = int64_t{1} << 22;

}  // namespace npu::compiler
