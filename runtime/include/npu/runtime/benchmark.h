// benchmark(): the benchmark mode of the model tools (npu-submit/npu-run --repeat N
// [--warmup K], issue 9), as a library function: runs a loaded Model K times untimed
// (warm-up: first-touch page faults, caches, lazily created contexts) and then N times timed,
// one inference after the other on the same inputs, and summarizes the N host latencies
// (min, median, p90, mean), the throughput, the process's CPU time (user + system, from
// getrusage(RUSAGE_SELF), so the emulator's device threads count too), its context switches
// and minor page faults per inference, and the modeled device cycles of one inference.
//
// Semantics: the outputs of the runs are discarded; a failing run ends the benchmark with
// that run's error. Latency is wall time around Model::run() (steady_clock). Percentiles are
// of the sorted samples, nearest rank (p90 of 10 samples is the 9th).
// Threading: like Model::run(), one call at a time per Model. Lifetime: the result is a value.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "npu/expected.h"
#include "npu/format/npy.h"
#include "npu/runtime/model.h"

namespace npu {

struct BenchmarkOptions {
  uint32_t warmup = 1;   // untimed runs first
  uint32_t repeat = 10;  // timed runs (at least 1)
  RunOptions run;        // passed to every Model::run()
};

struct BenchmarkResult {
  uint32_t warmup = 0, repeat = 0;
  std::vector<double> latency_ms;  // per timed inference, in run order
  double min_ms = 0, median_ms = 0, p90_ms = 0, mean_ms = 0, max_ms = 0;
  double throughput = 0;            // inferences per second of wall time over the timed runs
  double wall_s = 0;                // wall time of the timed runs
  double cpu_user_s = 0;            // process user CPU time over the timed runs
  double cpu_sys_s = 0;             // process system CPU time over the timed runs
  double voluntary_switches = 0;    // per inference
  double involuntary_switches = 0;  // per inference
  double minor_faults = 0;          // per inference
  uint64_t device_cycles = 0;       // modeled device cycles of one inference (the last)
};

/// Runs `model` options.warmup + options.repeat times on `inputs` (see the header comment).
/// Errors: EINVAL when options.repeat is 0; a run's error, prefixed with "benchmark run K: ".
Expected<BenchmarkResult> benchmark(Model& model,
                                    const std::map<std::string, format::NpyArray>& inputs,
                                    const BenchmarkOptions& options = {});

/// A short table: "latency ms  min … median … p90 … mean …", throughput, CPU time, switches
/// and faults per inference, device cycles.
std::string format_benchmark(const BenchmarkResult& result);

/// The result as one JSON object (fields as in BenchmarkResult, latencies as "latency_ms").
std::string benchmark_json(const BenchmarkResult& result);

}  // namespace npu
