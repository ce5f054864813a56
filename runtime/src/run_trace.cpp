// The trace of one model run from its RunStats (npu/runtime/run_trace.h).
#include "npu/runtime/run_trace.h"

#include <utility>
#include <vector>

namespace npu {

namespace {

/// The run's timeline for a trace; completes `options` (its commands and hazards point into
/// `cmds` and `hazards`, which must outlive its use).
JobProfile trace_profile(const RunStats& stats, const format::PackageMetadata& metadata,
                         TraceOptions& options, std::vector<npu_cmd>& cmds,
                         std::vector<Hazard>& hazards) {
  JobProfile p = stats.merged_profile_with_host(options.clock_hz, &options.host_spans);
  cmds = stats.merged_commands();
  options.commands = cmds;
  hazards = stats.merged_hazards().hazards;
  if (!hazards.empty()) {
    options.hazards = hazards;
    if (!options.label) options.label = stats.hazard_labels(metadata);
  }
  return p;
}

}  // namespace

std::string run_trace_json(const RunStats& stats, const format::PackageMetadata& metadata,
                           TraceOptions options) {
  std::vector<npu_cmd> cmds;
  std::vector<Hazard> hazards;
  const JobProfile p = trace_profile(stats, metadata, options, cmds, hazards);
  return chrome_trace_json(p, options);
}

Expected<void> write_run_trace(const RunStats& stats, const format::PackageMetadata& metadata,
                               const std::string& path, TraceOptions options) {
  std::vector<npu_cmd> cmds;
  std::vector<Hazard> hazards;
  const JobProfile p = trace_profile(stats, metadata, options, cmds, hazards);
  return write_chrome_trace(p, path, options);
}

}  // namespace npu
