// benchmark(): K warm-up and N timed Model::run()s (see npu/runtime/benchmark.h).
#include "npu/runtime/benchmark.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace npu {

namespace {

double seconds(const timeval& t) {
  return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6;
}

rusage usage() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u;
}

// Nearest-rank percentile of sorted samples: the ceil(p * n)-th value.
double percentile(const std::vector<double>& sorted, double p) {
  const auto n = sorted.size();
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(n)));
  rank = std::clamp<size_t>(rank, 1, n);
  return sorted[rank - 1];
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

Expected<BenchmarkResult> benchmark(Model& model,
                                    const std::map<std::string, format::NpyArray>& inputs,
                                    const BenchmarkOptions& options) {
  if (options.repeat == 0) {
    return make_error(EINVAL, "benchmark: repeat must be at least 1 (got 0)");
  }
  BenchmarkResult r;
  r.warmup = options.warmup;
  r.repeat = options.repeat;
  for (uint32_t k = 0; k < options.warmup; ++k) {
    if (auto out = model.run(inputs, options.run); !out) {
      return make_error(out.error().code, "benchmark warm-up run " + std::to_string(k + 1) + ": " +
                                              out.error().message);
    }
  }
  r.latency_ms.reserve(options.repeat);
  const rusage u0 = usage();
  const auto t0 = std::chrono::steady_clock::now();
  for (uint32_t k = 0; k < options.repeat; ++k) {
    const auto s = std::chrono::steady_clock::now();
    auto out = model.run(inputs, options.run);
    const auto e = std::chrono::steady_clock::now();
    if (!out) {
      return make_error(out.error().code,
                        "benchmark run " + std::to_string(k + 1) + ": " + out.error().message);
    }
    r.latency_ms.push_back(std::chrono::duration<double, std::milli>(e - s).count());
  }
  const auto t1 = std::chrono::steady_clock::now();
  const rusage u1 = usage();
  r.device_cycles = model.last_stats().device_cycles;
  r.wall_s = std::chrono::duration<double>(t1 - t0).count();
  r.throughput = r.wall_s > 0 ? options.repeat / r.wall_s : 0;
  r.cpu_user_s = seconds(u1.ru_utime) - seconds(u0.ru_utime);
  r.cpu_sys_s = seconds(u1.ru_stime) - seconds(u0.ru_stime);
  const double n = options.repeat;
  r.voluntary_switches = static_cast<double>(u1.ru_nvcsw - u0.ru_nvcsw) / n;
  r.involuntary_switches = static_cast<double>(u1.ru_nivcsw - u0.ru_nivcsw) / n;
  r.minor_faults = static_cast<double>(u1.ru_minflt - u0.ru_minflt) / n;
  std::vector<double> sorted = r.latency_ms;
  std::sort(sorted.begin(), sorted.end());
  r.min_ms = sorted.front();
  r.max_ms = sorted.back();
  r.median_ms = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                  : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  r.p90_ms = percentile(sorted, 0.9);
  r.mean_ms = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  return r;
}

std::string format_benchmark(const BenchmarkResult& r) {
  char buf[512];
  std::string s;
  std::snprintf(buf, sizeof buf, "benchmark: %u timed inferences after %u warm-up\n", r.repeat,
                r.warmup);
  s += buf;
  std::snprintf(buf, sizeof buf,
                "  latency ms    min %.3f  median %.3f  p90 %.3f  mean %.3f  max %.3f\n", r.min_ms,
                r.median_ms, r.p90_ms, r.mean_ms, r.max_ms);
  s += buf;
  std::snprintf(buf, sizeof buf, "  throughput    %.2f inferences/s (%.3f s wall)\n", r.throughput,
                r.wall_s);
  s += buf;
  const double n = r.repeat ? r.repeat : 1;
  std::snprintf(buf, sizeof buf,
                "  host CPU      %.3f s user + %.3f s sys (%.2f ms per inference, %.2f cores)\n",
                r.cpu_user_s, r.cpu_sys_s, (r.cpu_user_s + r.cpu_sys_s) * 1e3 / n,
                r.wall_s > 0 ? (r.cpu_user_s + r.cpu_sys_s) / r.wall_s : 0.0);
  s += buf;
  std::snprintf(buf, sizeof buf,
                "  per inference %.1f voluntary + %.1f involuntary context switches, %.1f minor "
                "page faults\n",
                r.voluntary_switches, r.involuntary_switches, r.minor_faults);
  s += buf;
  std::snprintf(buf, sizeof buf, "  device        %llu modeled cycles per inference\n",
                static_cast<unsigned long long>(r.device_cycles));
  s += buf;
  return s;
}

std::string benchmark_json(const BenchmarkResult& r) {
  std::string s = "{\"warmup\": " + std::to_string(r.warmup) +
                  ", \"repeat\": " + std::to_string(r.repeat) + ", \"latency_ms\": {";
  s += "\"min\": " + number(r.min_ms) + ", \"median\": " + number(r.median_ms) +
       ", \"p90\": " + number(r.p90_ms) + ", \"mean\": " + number(r.mean_ms) +
       ", \"max\": " + number(r.max_ms) + ", \"samples\": [";
  for (size_t i = 0; i < r.latency_ms.size(); ++i) {
    s += (i ? ", " : "") + number(r.latency_ms[i]);
  }
  s += "]}, \"throughput_per_s\": " + number(r.throughput) + ", \"wall_s\": " + number(r.wall_s) +
       ", \"cpu_user_s\": " + number(r.cpu_user_s) + ", \"cpu_sys_s\": " + number(r.cpu_sys_s) +
       ", \"voluntary_switches_per_inference\": " + number(r.voluntary_switches) +
       ", \"involuntary_switches_per_inference\": " + number(r.involuntary_switches) +
       ", \"minor_faults_per_inference\": " + number(r.minor_faults) +
       ", \"device_cycles\": " + std::to_string(r.device_cycles) + "}";
  return s;
}

}  // namespace npu
