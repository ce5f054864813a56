// Private: permuting a tensor's axes (Transpose, and the layout changes around the reference
// convolution): ranks up to 4 through the reference transpose, higher ranks element by
// element. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "op_call.h"

namespace npu::ops::detail {

/// `x` (any rank and dtype) transposed: output axis d is input axis perm[d].
Expected<NpyArray> permute(const OpCall& c, const NpyArray& x, const std::vector<int64_t>& perm);

}  // namespace npu::ops::detail
