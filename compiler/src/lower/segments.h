// Private: building the package's segments, in partition order. A device segment becomes one
// command buffer (one layer per lowered op, FENCEs between them, each a safe point where the
// device may preempt the job) with its replayed cycle estimate and per-layer reports
// (device_segment.cpp). A host segment becomes one package
// segment per node (op type + attributes as JSON for the operator library), plus extra host
// steps for what the device would have fused: a MatMul bias add, then a fused activation
// (host_segment.cpp). Both release dead values' storage as they go (liveness.h). Called by
// lower() only; single-threaded.
#pragma once

#include <optional>

#include "lower/liveness.h"
#include "lower/lower.h"
#include "lower/lowering.h"
#include "lower/package_builder.h"

namespace npu::compiler::detail {

/// Lowers the nodes of device segment `seg` into one command buffer and its package segment.
[[nodiscard]] std::optional<LowerError> lower_device_segment(Lowering& L, PackageBuilder& pb,
                                                             const Liveness& live,
                                                             const Segment& seg);

/// Writes the host segments of host segment `seg` (one per node, plus its extra steps).
[[nodiscard]] std::optional<LowerError> lower_host_segment(Lowering& L, PackageBuilder& pb,
                                                           const Liveness& live,
                                                           const Segment& seg);

}  // namespace npu::compiler::detail
