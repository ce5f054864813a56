// The common part of the passes that recognise a chain of nodes an exporter wrote for one
// operator and replace it by that operator (fuse-gelu, fuse-layernorm): the graph's readers
// of every value, the nodes already consumed by a fusion (erased once at the end of run()),
// and the matching helpers both passes use. A chain is fused only when each of its
// intermediates has exactly one reader and is not a graph output.
//
// Threading and lifetime: a pass object runs on one thread; the reader lists are taken at the
// start of run() and stay valid while the pass only marks nodes dead.
#pragma once

#include <cmath>
#include <optional>
#include <vector>

#include "npu/compiler/pass.h"

namespace npu::compiler {

class FusionPass : public Pass {
 protected:
  /// `v` is a one-element constant equal to `want` (to float rounding).
  static bool is_scalar(const Graph& g, ValueId v, double want) {
    const NpyArray* c = g.constant(v);
    if (!c || c->num_elements() != 1) return false;
    return std::abs(format::number_at(*c, 0) - want) <= 1e-6 * std::abs(want);
  }

  /// Node `n` is `op` (default domain) with two inputs, one of them `v`: the other one.
  static std::optional<ValueId> other_operand(const Node& n, const char* op, ValueId v) {
    if (n.op_type != op || !n.domain.empty() || n.inputs.size() != 2) return std::nullopt;
    if (n.inputs[0] == v) return n.inputs[1];
    if (n.inputs[1] == v) return n.inputs[0];
    return std::nullopt;
  }

  /// Takes the readers of every value and clears the dead marks (start of run()).
  void begin(const Graph& g) {
    consumers_ = g.consumers();
    dead_.assign(g.nodes.size(), false);
  }

  /// The node reading `v` when it is the only one (and `v` is no graph output), else -1.
  int sole_reader(const Graph& g, ValueId v) const {
    if (v < 0 || g.is_graph_output(v)) return -1;
    const auto& readers = consumers_[static_cast<size_t>(v)];
    if (readers.size() != 1 || dead_[static_cast<size_t>(readers[0])]) return -1;
    return readers[0];
  }

  std::vector<std::vector<int>> consumers_;
  std::vector<bool> dead_;  // nodes a fusion consumed
};

}  // namespace npu::compiler
