// Chrome / Perfetto trace-event JSON of a job's engine timeline (chrome://tracing,
// https://ui.perfetto.dev), from a JobProfile.
//
// Format (docs/tools.md): {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}.
// pid 1 is the job; one track (tid = NPU_ENGINE_* id) per engine, named by a "thread_name"
// metadata event; each executed command is one complete event ("ph": "X") named by its opcode
// with args {cmd_index, start_cycle, end_cycle}; MARKER commands are instant events ("ph": "i",
// thread scope) named "marker <id>"; a FENCE with the irq flag adds a global instant event
// "fence irq <value>" at the fence's end. Times: ts/dur in microseconds = cycles * 1e6 /
// clock_hz (fractional), so the timeline reads in device time at the modeled clock.
// Marker ids and fence irq flags come from TraceOptions::commands; without them markers are
// named "marker" and fence interrupts are not shown. Each hazard of TraceOptions::hazards
// (the synchronization checker's, docs/racecheck.md) is a flow arrow ("ph": "s" then "f",
// "cat": "hazard", named "RAW sram [0x0, 0x40)", args {text}) between the slices of its two
// commands, from the one that ran first, so both commands stand out in Perfetto.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/expected.h"
#include "npu/hazard.h"
#include "npu/job.h"
#include "npu_isa.h"

namespace npu {

/// A span of host work (a model's host segment) shown on its own "host" track (tid 100, events
/// with "cat": "host"),
/// in the same device-cycle time base as the engines.
struct HostSpan {
  std::string name;
  uint64_t start_cycle = 0, end_cycle = 0;
};
inline constexpr int kHostTraceTid = 100;

struct TraceOptions {
  /// Modeled clock; cycles are converted to microseconds with it (0: 1 GHz).
  uint64_t clock_hz = 1'000'000'000;
  /// Engines to show as tracks (id and name), e.g. from Device::engine_info(); empty: the
  /// five NPU_ENGINE_* engines with isa::engine_name().
  std::vector<EngineInfo> engines;
  /// The job's commands (header excluded), for marker ids and fence interrupts; may be empty.
  std::span<const npu_cmd> commands;
  /// Name of the process track ("npu job" when empty).
  std::string process_name;
  /// Host work between device work (model host segments); empty: no host track.
  std::vector<HostSpan> host_spans;
  /// Hazards to draw as flow arrows between their commands (cmd_index as in the profile).
  std::span<const Hazard> hazards;
  /// Names the hazards' commands in the flows' text; empty: by marker, from `commands`.
  CommandLabeler label;
};

/// The trace as JSON text ('\n'-terminated).
std::string chrome_trace_json(const JobProfile& profile, const TraceOptions& options = {});
/// Writes chrome_trace_json() to `path`. Errors name the path:
/// "trace: cannot write 'x.json': No such file or directory".
Expected<void> write_chrome_trace(const JobProfile& profile, const std::string& path,
                                  const TraceOptions& options = {});

/// The commands of a command buffer (header + commands, as npu-as writes it) without checking
/// them: at most num_cmds whole commands after the header; empty when the header is short.
std::vector<npu_cmd> split_commands(std::span<const std::byte> cmdbuf);

}  // namespace npu
