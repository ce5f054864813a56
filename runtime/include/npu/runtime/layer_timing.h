// Layer timing: the compiler's estimate and the device's measurement side by side, per layer
// (BRIEF §5, "predicted vs measured"; npu-submit --stats prints it as a table, the Python
// module returns it as Session.last_stats.layers).
//
// Semantics: a compiled device segment separates its layers with FENCEs; the package's layer
// reports (format::LayerReport: op, engine, tiles, MACs, bytes, estimated cycles) list them in
// the same order. A layer's measured cycles are the device cycles between the end of the FENCE
// before it (0 for the first) and the end of the FENCE after it (the segment's cycles for the
// last). Each device segment is matched with its first execution in the run (a dynamic batch
// repeats the segments; the first slice is reported). A segment without a profile, or whose
// FENCE count does not match its layer count (a package compiled another way), has no rows.
// Threading/lifetime: a pure function returning values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npu/format/package_metadata.h"
#include "npu/runtime/run_stats.h"

namespace npu {

struct LayerTiming {
  std::string segment;           // the device segment the layer belongs to
  format::LayerReport estimate;  // the compiler's row: name, op, engine, MACs, bytes, cycles
  uint64_t measured_cycles = 0;  // device cycles between the layer's FENCEs
  uint64_t start_cycle = 0;      // where the layer starts in its segment's job
};

/// The layers of `metadata`'s device segments with their measured cycles in `stats` (see the
/// header comment); empty when the run collected no profiles.
std::vector<LayerTiming> layer_timings(const format::PackageMetadata& metadata,
                                       const RunStats& stats);

}  // namespace npu
