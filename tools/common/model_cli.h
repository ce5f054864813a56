// Shared by npu-submit (model mode) and npu-run: read the --input NAME=FILE.npy flags, run a
// loaded npu::Model, write DIR/<output>.npy (BRIEF §3 naming), and print the run report
// (--stats: modeled cycles, per-engine utilization, wall time, per-segment lines; --json;
// --trace: Chrome/Perfetto JSON; --racecheck: the synchronization checker's hazards, named by
// segment and layer; --repeat N [--warmup K]: the benchmark mode, npu/runtime/benchmark.h).
// Errors are one line prefixed with the tool's name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "npu/device.h"
#include "npu/expected.h"
#include "npu/format/npy.h"
#include "npu/hazard.h"
#include "npu/runtime/model.h"

namespace npu::tools {

constexpr int kJobFailed = 2;
constexpr int kHazardsFound = 3;  // --racecheck found hazards (the job itself succeeded)

/// The one-line error for hazards: "racecheck: 2 hazards, the first: RAW sram ...".
std::string hazards_error(const HazardReport& report, const CommandLabeler& label);

/// Parses --input NAME=FILE.npy flags and reads the arrays.
Expected<std::map<std::string, format::NpyArray>> read_inputs(
    const std::vector<std::string>& specs);

/// The file name of a model output: characters other than [A-Za-z0-9_.-] become '_'.
std::string output_file_name(const std::string& name);

struct RunFlags {
  std::string output_dir, trace;
  bool stats = false, json = false, racecheck = false;
  std::optional<int64_t> timeout_ms;
  std::string label;  // the model's name in traces and errors
  // Benchmark mode (--repeat N [--warmup K]): after the run, K untimed and N timed runs.
  std::optional<int64_t> repeat, warmup;
};

/// Adds --repeat N and --warmup K (the benchmark mode) to `app`.
void add_benchmark_flags(CLI::App& app, RunFlags& flags);

/// Checks --repeat/--warmup: N at least 1, K not negative, --warmup only with --repeat.
/// Returns the one-line error, or an empty string.
std::string check_benchmark_flags(const RunFlags& flags);

/// Predicted vs measured cycles per layer (BRIEF §5): "  layer  estimated  measured" lines,
/// the compiler's estimate from the package next to the cycles the device took between the
/// FENCEs that separate the layers (needs profiles; empty without them).
std::string layer_timing_table(const Model& model, const RunStats& stats);

/// Checks the inputs against the model's (unknown / missing names), runs it, writes the
/// outputs and prints the report. Returns the exit status (0, kUsageError, kJobFailed,
/// kHazardsFound).
int run_and_report(const std::string& tool, const Device& device, Model& model,
                   const std::map<std::string, format::NpyArray>& inputs, const RunFlags& flags);

}  // namespace npu::tools
