// Device capability and partitioning: which nodes the NPU can run (uapi/npu_isa.h: CONV2D,
// MATMUL, ELTWISE, ACTIVATION, POOL, SOFTMAX, SCALE_SHIFT, (DE/RE)QUANTIZE, TRANSPOSE, REDUCE
// and DMA for data movement) and, for the rest, why they stay on the host. The check-support
// pass stores the answer in Node::placement; partition() then groups the nodes into device
// and host segments in execution order. Lowering compiles each device segment; the runtime
// runs host segments with the reference operators.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "npu/compiler/graph.h"
#include "npu/expected.h"

namespace npu::compiler {

/// Why `n` cannot run on the device ("" if it can). Reads shapes, dtypes and constants only.
/// The largest tensor (bytes) a device operand may be; larger ones stay on the host.
inline constexpr uint64_t kMaxDeviceTensorBytes = uint64_t{1} << 32;

std::string device_support_reason(const Graph& g, const Node& n);

/// A maximal run of nodes with the same target, in an order that respects dependencies.
struct Segment {
  Target target = Target::kHost;
  std::vector<size_t> nodes;     // indices into Graph::nodes, in execution order
  std::vector<ValueId> inputs;   // non-constant values read here and defined elsewhere
  std::vector<ValueId> outputs;  // values defined here and read later or graph outputs
};

struct Partition {
  std::vector<Segment> segments;
  size_t device_ops = 0;
  size_t host_ops = 0;
};

/// Groups placed nodes (after check-support) into segments. Among the ready nodes it keeps
/// taking ones with the current segment's target, which gives as few segments as a
/// greedy topological order can. Error if a node has no placement.
[[nodiscard]] Expected<Partition> partition(const Graph& g);

/// "N ops on the NPU, M on the host" followed by one line per host op with its reason.
std::string partition_report(const Graph& g, const Partition& p);

}  // namespace npu::compiler
