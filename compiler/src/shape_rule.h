// Private: a node's output 0 by its operator's shape rule in the registry (npu/ops/registry.h:
// elementwise, broadcasting and comparison operators), from the graph's static input types.
// The infer-shapes pass fills unknown outputs with it, and Graph::verify checks declared ones
// against it. Pure functions of the graph.
#pragma once

#include <optional>

#include "npu/compiler/graph.h"
#include "npu/ops/registry.h"

namespace npu::compiler::detail {

/// Output 0 of `n` by its operator's shape rule; nullopt when `n` is not a standard-domain
/// node with an output 0, an input is missing or not static and typed, the operator has no
/// shape rule, or the inputs do not fit it (shapes that do not broadcast).
std::optional<ops::TensorType> shape_rule_output(const Graph& g, const Node& n);

}  // namespace npu::compiler::detail
