// Private: when the instance-norm-to-layernorm pass rewrites an InstanceNormalization for the
// device, shared by the pass and the support check (which reports the reason of those that
// stay on the host). Pure functions of the graph; thread-safe.
#pragma once

#include <string>

#include "npu/compiler/graph.h"

namespace npu::compiler {

/// Why InstanceNormalization node `n` is not rewritten for the device ("" when it is): X must
/// be float32 of rank 3 or more with static dims, scale and B constant float32 [C].
std::string instance_norm_host_reason(const Graph& g, const Node& n);

}  // namespace npu::compiler
