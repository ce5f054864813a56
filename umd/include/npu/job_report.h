// Job reports: how a finished job is shown to a person (npu-submit's output) and as JSON
// (npu-submit --json), from its JobResult and, when available, its JobProfile.
//
// Text (docs/tools.md):
//   job ok: 1234 cycles (1.234 us at 1 GHz), host 0.321 ms
//   fault: mmu on dma_in at command 0 (dma_load), address 0x200000000      (faulted jobs)
//   racecheck: 1 hazard                                                    (racecheck runs)
//     RAW sram [0x0, 0x40): command 0 (dma_load on dma_in) writes, command 2 (...) reads; ...
//   wrote out.bin (144 bytes from 0x100100000)                             (per output)
// and with `stats`: per-engine busy cycles and utilization (busy / job cycles), DMA bytes in
// and out, MACs, vector elements and semaphore stall cycles.
// Threading/lifetime: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/hazard.h"
#include "npu/job.h"
#include "npu_isa.h"

namespace npu {

struct JobReport {
  JobResult result;
  bool timed_out = false;
  std::optional<JobProfile> profile;
  uint64_t clock_hz = 0;
  uint64_t host_ns = 0;
  std::vector<EngineInfo> engines;    // tracks to report (empty: the NPU_ENGINE_* five)
  std::span<const npu_cmd> commands;  // for the faulting command's opcode name; may be empty
  struct Output {
    uint64_t address = 0;
    uint64_t length = 0;
    std::string file;
  };
  std::vector<Output> outputs;  // files written from device memory after the job
  /// The synchronization checker's result when the job ran under it (racecheck).
  std::optional<HazardReport> hazards;
  /// Names the commands of hazards; empty: by marker, from `commands`.
  CommandLabeler label;
};

/// "racecheck: 2 hazards" and one indented describe_hazard() line per hazard
/// ('\n'-terminated); "racecheck: no hazards" when clean.
std::string format_hazard_report(const HazardReport& report, const CommandLabeler& label = {});

/// The checker's result as the JSON object npu-submit --json has under "racecheck": checked,
/// partial, total and hazards[] (kind, space, begin, end, first and second command, text).
std::string hazard_report_json(const HazardReport& report, const CommandLabeler& label = {});

/// The one-line fault description: "mmu on dma_in at command 0 (dma_load), address 0x200000000".
std::string describe_fault(const Fault& fault, std::span<const npu_cmd> commands = {});
/// The human-readable report ('\n'-terminated lines); `stats` adds the per-engine table and
/// the counters.
std::string format_job_report(const JobReport& report, bool stats);
/// The report as a JSON object (2-space indented, '\n'-terminated); keys in docs/tools.md.
std::string job_report_json(const JobReport& report);

}  // namespace npu
