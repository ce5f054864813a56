// RunStats: what the last Model::run() did — per segment (device cycles, host wall time, the
// device's JobProfile, the synchronization checker's hazards and the command list) and summed
// over the run — and the device segments' profiles and hazards merged into one timeline for
// reports and Chrome/Perfetto traces.
//
// Semantics: a run's device segments are separate jobs; merged_profile() lays their
// profiles end to end as if they were one job (timelines offset by the cycles of the
// segments before, counters summed, command indices offset into merged_commands()).
// merged_profile_with_host() also places each host segment's wall time, converted to device
// cycles, between them. merged_hazards() offsets the hazards' command indices the same way;
// hazard_labels() names those commands by segment and by the compiler's layer (the package's
// per-layer report; a device segment's layers are separated by FENCEs). A dynamic batch run slice
// by slice has every slice's segments in order, and the sums over all slices.
//
// Threading: plain values; the usual rules for const and non-const access.
// Lifetime: values, independent of the Model that produced them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "npu/format/package.h"
#include "npu/hazard.h"
#include "npu/job.h"
#include "npu/trace.h"

namespace npu {

/// One executed segment of the last run.
struct SegmentStats {
  std::string name;
  format::SegmentKind kind = format::SegmentKind::kDevice;
  std::string op_type;                  // host segments
  uint64_t cycles = 0;                  // device segments: modeled device cycles
  uint64_t host_ns = 0;                 // wall time of the segment
  std::optional<JobProfile> profile;    // device segments with RunOptions::collect_profile
  std::optional<HazardReport> hazards;  // device segments with RunOptions::racecheck
  // Device segments: the command buffer's commands, shared with the loaded model (split once,
  // not copied per run) and kept alive by every SegmentStats that refers to them.
  std::shared_ptr<const std::vector<npu_cmd>> command_list;
  uint32_t index = 0;  // the segment's index in the package's segments

  /// The command buffer's commands (empty for host segments).
  std::span<const npu_cmd> commands() const {
    return command_list ? std::span<const npu_cmd>(*command_list) : std::span<const npu_cmd>();
  }
};

struct RunStats {
  uint64_t device_cycles = 0;                               // sum over device segments
  uint64_t wall_ns = 0;                                     // the whole run()
  std::array<uint64_t, DRM_NPU_MAX_ENGINES> busy_cycles{};  // summed from the profiles
  std::vector<SegmentStats> segments;
  bool has_profile = false;  // every device segment had a profile
  /// The device segments' profiles as one job: timelines offset by the cycles of the
  /// segments before, counters summed; `commands` is the concatenation matching its
  /// cmd_index values (for markers in traces). Empty without profiles.
  JobProfile merged_profile() const;
  /// The same timeline with each host segment's wall time (converted to cycles at
  /// `clock_hz`) placed between the device segments, and the host segments as spans (for
  /// traces that show where the host ran).
  JobProfile merged_profile_with_host(uint64_t clock_hz, std::vector<HostSpan>* spans) const;
  std::vector<npu_cmd> merged_commands() const;
  /// Hazards found in the device segments (sum of the reports' totals; 0 without racecheck).
  uint64_t hazard_count() const;
  /// The device segments' hazards with command indices into merged_commands(); checked when
  /// every device segment was (a run without device segments counts as checked), partial when
  /// one was.
  HazardReport merged_hazards() const;
  /// Names the commands of merged_commands(): "segment 'conv_1', layer 'conv1'" (or without
  /// the layer when the segment's layer report does not match its FENCEs).
  CommandLabeler hazard_labels(const format::PackageMetadata& metadata) const;
};

}  // namespace npu
