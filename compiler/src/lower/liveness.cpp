// Liveness of values over the execution order (see liveness.h).
#include "lower/liveness.h"

#include <limits>

#include "lower/lowering.h"

namespace npu::compiler::detail {

namespace {
constexpr int kForever = std::numeric_limits<int>::max();
}  // namespace

Liveness::Liveness(const Graph& g, const Partition& p)
    : g_(g),
      step_of_(g.nodes.size(), -1),
      last_use_(g.num_values(), -1),
      device_reads_(g.num_values(), false) {
  std::vector<size_t> order;
  for (const Segment& s : p.segments) order.insert(order.end(), s.nodes.begin(), s.nodes.end());
  for (size_t i = 0; i < order.size(); ++i) step_of_[order[i]] = static_cast<int>(i);
  for (size_t i = 0; i < order.size(); ++i) {
    const Node& n = g.nodes[order[i]];
    for (ValueId v : n.inputs) {
      if (v < 0) continue;
      last_use_[static_cast<size_t>(v)] = static_cast<int>(i);
      if (n.placement.target == Target::kDevice) device_reads_[static_cast<size_t>(v)] = true;
    }
  }
  for (ValueId v : g.outputs) last_use_[static_cast<size_t>(v)] = kForever;
}

void Liveness::release_dead(Lowering& L, size_t node) const {
  const Node& n = g_.nodes[node];
  const int step = step_of_[node];
  std::vector<ValueId> vs = n.inputs;
  vs.insert(vs.end(), n.outputs.begin(), n.outputs.end());
  for (ValueId v : vs) {
    if (v < 0 || last_use_[static_cast<size_t>(v)] > step) continue;
    L.release(v);
  }
}

}  // namespace npu::compiler::detail
