// Private: liveness of values over a partition's execution order, for the activation arena.
// The order is every segment's nodes in segment order; a value dies after the last node that
// reads it (graph outputs never die), and then its arena bytes are free for later values.
// Built once per lower() call from the graph and the partition, read-only afterwards (the
// graph must outlive it).
#pragma once

#include <cstddef>
#include <vector>

#include "npu/compiler/graph.h"
#include "npu/compiler/support.h"

namespace npu::compiler::detail {

class Lowering;

class Liveness {
 public:
  Liveness(const Graph& g, const Partition& p);

  /// Whether a device node reads v (it then needs device storage even if the host makes it).
  bool read_by_device(ValueId v) const { return device_reads_[static_cast<size_t>(v)]; }
  /// After node `node` ran: releases the storage of its inputs and outputs that no later
  /// node reads (Lowering::release).
  void release_dead(Lowering& L, size_t node) const;

 private:
  const Graph& g_;
  std::vector<int> step_of_;        // by node index: position in the execution order
  std::vector<int> last_use_;       // by ValueId: step of its last reader (-1: none)
  std::vector<bool> device_reads_;  // by ValueId
};

}  // namespace npu::compiler::detail
