// A node's output 0 by the registry's shape rule (shape_rule.h).
#include "shape_rule.h"

#include <vector>

namespace npu::compiler::detail {

std::optional<ops::TensorType> shape_rule_output(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.outputs.empty() || n.outputs[0] < 0) return std::nullopt;
  std::vector<ops::TensorType> inputs;
  for (ValueId v : n.inputs) {
    if (v < 0) return std::nullopt;
    const auto dims = g.value(v).static_dims();
    const auto dtype = g.value(v).dtype;
    if (!dims || !dtype) return std::nullopt;
    inputs.push_back({*dtype, *dims});
  }
  auto out = ops::infer_output(n.op_type, inputs);
  if (!out || !*out) return std::nullopt;
  return std::move(**out);
}

}  // namespace npu::compiler::detail
