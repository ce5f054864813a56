// Model runs for npu-submit and npu-run (see model_cli.h).
#include "model_cli.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>
#include "npu/elide.h"
#include "npu/format/shape.h"

#include "npu/job_report.h"
#include "npu/runtime/benchmark.h"
#include "npu/runtime/layer_timing.h"
#include "npu/trace.h"

namespace npu::tools {

namespace {

std::string join_path(const std::string& dir, const std::string& file) {
  if (dir.empty() || std::filesystem::path(file).is_absolute()) return file;
  return (std::filesystem::path(dir) / file).string();
}

}  // namespace

std::string hazards_error(const HazardReport& report, const CommandLabeler& label) {
  std::string s = "racecheck: " + std::to_string(report.total) + " hazard";
  if (report.total != 1) s += "s";
  if (!report.hazards.empty()) {
    s += report.total == 1 ? ": " : ", the first: ";
    s += describe_hazard(report.hazards.front(), label);
  }
  return s;
}

std::string output_file_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    out += keep ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "_" + out;
  return out + ".npy";
}

Expected<std::map<std::string, format::NpyArray>> read_inputs(
    const std::vector<std::string>& specs) {
  std::map<std::string, format::NpyArray> inputs;
  for (const auto& text : specs) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
      return make_error(EINVAL, "--input '" + text + "': expected NAME=FILE.npy");
    }
    const std::string name = text.substr(0, eq);
    if (inputs.count(name)) return make_error(EINVAL, "--input '" + name + "' given twice");
    auto a = format::read_npy(text.substr(eq + 1));
    if (!a) return make_error(a.error().code, "--input '" + name + "': " + a.error().message);
    inputs.emplace(name, std::move(*a));
  }
  return inputs;
}

void add_benchmark_flags(CLI::App& app, RunFlags& flags) {
  app.add_option("--repeat", flags.repeat,
                 "benchmark mode: after the run, time N more inferences and print latency "
                 "min/median/p90/mean, throughput and host CPU time (with --json: a "
                 "\"benchmark\" object)");
  app.add_option("--warmup", flags.warmup,
                 "benchmark mode: untimed inferences before the N timed ones (default 1)");
}

std::string check_benchmark_flags(const RunFlags& flags) {
  if (flags.repeat && *flags.repeat < 1) {
    return "--repeat N: N must be at least 1 (got " + std::to_string(*flags.repeat) + ")";
  }
  if (flags.repeat && *flags.repeat > 1000000000) {
    return "--repeat N: N must be at most 1000000000 (got " + std::to_string(*flags.repeat) + ")";
  }
  if (flags.warmup && !flags.repeat) return "--warmup K needs --repeat N";
  if (flags.warmup && (*flags.warmup < 0 || *flags.warmup > 1000000000)) {
    return "--warmup K: K must be between 0 and 1000000000 (got " + std::to_string(*flags.warmup) +
           ")";
  }
  return "";
}

int run_and_report(const std::string& tool, const Device& device, Model& model,
                   const std::map<std::string, format::NpyArray>& inputs, const RunFlags& o) {
  auto failure = [&](std::string m, int status = kUsageError) {
    return fail(tool, std::move(m), status);
  };
  for (const auto& [name, a] : inputs) {
    bool known = false;
    for (const auto& d : model.inputs()) known = known || d.name == name;
    if (!known) {
      std::string names;
      for (const auto& d : model.inputs()) names += (names.empty() ? "" : ", ") + d.name;
      return failure("--input: unknown input '" + name + "' (" + o.label + " has: " + names + ")");
    }
  }
  for (const auto& d : model.inputs()) {
    if (!inputs.count(d.name)) {
      return failure("missing --input " + d.name + "=FILE.npy (" + o.label + ")");
    }
  }
  if (auto e = check_benchmark_flags(o); !e.empty()) return failure(e);
  RunOptions options;
  options.collect_profile =
      (o.stats || o.json || !o.trace.empty()) && device.params().has(DRM_NPU_CAP_JOB_PROFILE);
  if (o.timeout_ms) options.timeout = std::chrono::milliseconds(*o.timeout_ms);
  options.racecheck = o.racecheck;
  auto outputs = model.run(inputs, options);
  if (!outputs) return failure(outputs.error().message, kJobFailed);
  const RunStats& st = model.last_stats();
  std::vector<std::pair<std::string, std::string>> written;  // name, file
  if (!o.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.output_dir, ec);
    if (ec) return failure("--output-dir '" + o.output_dir + "': " + ec.message());
    for (const auto& d : model.outputs()) {
      const std::string file = join_path(o.output_dir, output_file_name(d.name));
      if (auto w = format::write_npy(file, outputs->at(d.name)); !w) {
        return failure(w.error().message);
      }
      written.emplace_back(d.name, file);
    }
  }
  auto engines = device.engine_info();
  if (!engines) return failure(engines.error().message);
  const std::vector<npu_cmd> commands = st.merged_commands();
  JobReport report;
  report.result.cycles = st.device_cycles;
  report.host_ns = st.wall_ns;
  report.clock_hz = device.params().clock_hz;
  report.engines = *engines;
  report.commands = commands;
  if (st.has_profile) report.profile = st.merged_profile();
  if (o.racecheck) {
    report.hazards = st.merged_hazards();
    report.label = st.hazard_labels(model.package().metadata);
  }
  if (!o.trace.empty()) {
    if (!st.has_profile) {
      return failure("--trace: the device reported no job profile (capability job_profile)");
    }
    TraceOptions trace_options;
    trace_options.clock_hz = device.params().clock_hz;
    trace_options.engines = *engines;
    trace_options.process_name = tool + " " + o.label;
    trace_options.label = report.label;
    if (auto w = model.write_trace(o.trace, trace_options); !w) return failure(w.error().message);
  }
  std::optional<BenchmarkResult> bench;
  if (o.repeat) {
    BenchmarkOptions bo;
    bo.repeat = static_cast<uint32_t>(*o.repeat);
    bo.warmup = static_cast<uint32_t>(o.warmup.value_or(1));
    bo.run.timeout = options.timeout;
    bo.run.racecheck = o.racecheck;
    auto b = benchmark(model, inputs, bo);
    if (!b) return failure(b.error().message, kJobFailed);
    bench = std::move(*b);
  }
  if (o.json) {
    if (bench) {
      auto j = nlohmann::ordered_json::parse(job_report_json(report));
      j["benchmark"] = nlohmann::ordered_json::parse(benchmark_json(*bench));
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << job_report_json(report);
    }
  } else {
    std::cout << format_job_report(report, o.stats);
    if (o.stats) {
      for (const auto& s : st.segments) {
        if (s.kind == format::SegmentKind::kDevice) {
          std::cout << "  segment " << s.name << ": device, " << s.cycles << " cycles, host "
                    << static_cast<double>(s.host_ns) / 1e6 << " ms\n";
        } else {
          std::cout << "  segment " << s.name << ": host " << s.op_type << ", "
                    << static_cast<double>(s.host_ns) / 1e6 << " ms\n";
        }
      }
    }
    if (o.stats && st.has_profile) std::cout << layer_timing_table(model, st);
    for (const auto& [name, file] : written) {
      const auto& a = outputs->at(name);
      std::cout << "wrote " << file << " (" << format::dtype_name(a.dtype) << " "
                << format::shape_text(a.shape) << ")\n";
    }
    if (bench) std::cout << format_benchmark(*bench);
  }
  std::cout.flush();
  if (!std::cout) return failure("cannot write to standard output");
  if (report.hazards && report.hazards->total > 0) {
    return failure(hazards_error(*report.hazards, report.label), kHazardsFound);
  }
  return 0;
}

std::string layer_timing_table(const Model& model, const RunStats& st) {
  std::string out;
  for (const LayerTiming& row : layer_timings(model.package().metadata, st)) {
    if (out.empty()) out = "  layer                          estimated   measured\n";
    char line[160];
    std::snprintf(line, sizeof line, "  %s %9llu  %9llu\n",
                  elide_cell(row.estimate.name, 30).c_str(),
                  static_cast<unsigned long long>(row.estimate.cycles),
                  static_cast<unsigned long long>(row.measured_cycles));
    out += line;
  }
  return out;
}

}  // namespace npu::tools
