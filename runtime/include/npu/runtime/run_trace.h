// Run traces: the Chrome/Perfetto trace-event JSON (npu/trace.h) of one model run, from its
// RunStats — the device segments' timelines end to end, each host segment's wall time on a
// "host" track between them (converted to cycles at options.clock_hz), and with racecheck
// every hazard as a flow arrow between its two commands, named by segment and layer.
//
// Semantics: Model::trace_json()/write_trace() are these functions on the model's last run;
// a caller that keeps a copy of RunStats (the Python module's Session, whose runs may happen
// on several Models) writes the trace of that copy later. `metadata` is the package's (for
// the layer names). The run must have collected profiles (RunOptions::collect_profile),
// otherwise the trace has no engine events.
// Threading/lifetime: pure functions of their arguments.
#pragma once

#include <string>

#include "npu/expected.h"
#include "npu/format/package_metadata.h"
#include "npu/runtime/run_stats.h"
#include "npu/trace.h"

namespace npu {

/// The trace of a run as JSON text ('\n'-terminated).
std::string run_trace_json(const RunStats& stats, const format::PackageMetadata& metadata,
                           TraceOptions options = {});
/// Writes run_trace_json() to `path`; errors name the path.
Expected<void> write_run_trace(const RunStats& stats, const format::PackageMetadata& metadata,
                               const std::string& path, TraceOptions options = {});

}  // namespace npu
