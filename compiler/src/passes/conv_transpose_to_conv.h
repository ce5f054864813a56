// Private: when the conv-transpose-to-conv pass turns a ConvTranspose into a Conv the device
// runs, shared by the pass and the support check (which reports the reason of those that
// stay on the host). Pure functions of the graph; thread-safe.
#pragma once

#include <string>

#include "npu/compiler/graph.h"

namespace npu::compiler {

/// Why ConvTranspose node `n` is not rewritten into a device Conv ("" when it is): it must be
/// 1-D or 2-D float32 with static spatial dims (all dims static when a stride is above 1, for
/// the zero insertion), constant weights (and bias) and pads that leave the equivalent
/// Conv's pads >= 0.
std::string conv_transpose_host_reason(const Graph& g, const Node& n);

}  // namespace npu::compiler
