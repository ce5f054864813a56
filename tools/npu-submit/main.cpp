// npu-submit: runs a job on an NPU device (docs/tools.md).
//   raw mode:   npu-submit CMDBUF.bin --buffer ADDR=FILE|size:N[:ro] ... [--dump ADDR:LEN=OUT]
//   model mode: npu-submit MODEL.npub --input NAME=FILE.npy ... --output-dir DIR
//               [--repeat N [--warmup K]]  (benchmark mode)
//   either with --racecheck: run under the synchronization checker, print its hazards, and
//   --priority low|normal|high|realtime: the priority of the context the jobs run on
// Exit status: 0 job ok, 1 usage or I/O error, 2 job faulted, aborted or timed out,
// 3 (--racecheck) the job ran but the checker found hazards.
#include <CLI/CLI.hpp>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "model_cli.h"
#include "npu/device.h"
#include "npu/format/file.h"
#include "npu/format/npy.h"
#include "npu/format/package.h"
#include "npu/job_report.h"
#include "npu/raw_job.h"
#include "npu/runtime/model.h"
#include "npu/trace.h"

namespace {

using npu::tools::kHazardsFound;
using npu::tools::kJobFailed;
using npu::tools::kUsageError;

int fail(std::string message, int status = kUsageError) {
  return npu::tools::fail("npu-submit", std::move(message), status);
}

struct Options {
  std::string input;
  std::vector<std::string> buffers, dumps, inputs;
  std::string output_dir, trace, device, config_path;
  npu::Priority priority = npu::Priority::kNormal;
  bool stats = false, json = false, skip_validation = false, racecheck = false;
  std::optional<int64_t> timeout_ms;
  npu::tools::RunFlags bench;  // only repeat and warmup
};

std::string join_path(const std::string& dir, const std::string& file) {
  if (dir.empty() || std::filesystem::path(file).is_absolute()) return file;
  return (std::filesystem::path(dir) / file).string();
}

int run_raw(const Options& o, std::span<const std::byte> cmdbuf) {
  if (o.bench.repeat || o.bench.warmup) {
    return fail(
        "--repeat/--warmup (the benchmark mode) are for model packages (.npub), not raw "
        "command buffers (" +
        o.input + ")");
  }
  if (!o.inputs.empty()) {
    return fail(
        "--input is for model packages (.npub); a raw command buffer takes --buffer "
        "ADDR=FILE|size:N");
  }
  std::vector<npu::BufferSpec> buffers;
  for (const auto& text : o.buffers) {
    auto spec = npu::parse_buffer_spec(text);
    if (!spec) return fail(spec.error().message);
    buffers.push_back(std::move(*spec));
  }
  std::vector<npu::DumpSpec> dumps;
  for (const auto& text : o.dumps) {
    auto spec = npu::parse_dump_spec(text);
    if (!spec) return fail(spec.error().message);
    dumps.push_back(std::move(*spec));
  }

  auto dev = npu::Device::open(o.device);
  if (!dev) return fail(dev.error().message);
  npu::RawJobOptions options;
  options.skip_validation = o.skip_validation;
  options.racecheck = o.racecheck;
  options.priority = o.priority;
  if (o.timeout_ms) options.timeout = std::chrono::milliseconds(*o.timeout_ms);
  auto run = npu::run_raw_job(*dev, cmdbuf, buffers, options);
  if (!run) return fail(run.error().message);

  auto engines = dev->engine_info();
  if (!engines) return fail(engines.error().message);
  const std::vector<npu_cmd> commands = npu::split_commands(cmdbuf);
  npu::JobReport report;
  report.result = run->result;
  report.timed_out = run->timed_out;
  report.profile = run->profile;
  report.clock_hz = dev->params().clock_hz;
  report.host_ns = run->host_ns;
  report.engines = *engines;
  report.commands = commands;
  report.hazards = run->hazards;

  if (run->ok()) {
    if (!o.output_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(o.output_dir, ec);
      if (ec) return fail("--output-dir '" + o.output_dir + "': " + ec.message());
    }
    std::vector<npu::DumpSpec> writes = dumps;
    for (auto& d : writes) d.file = join_path(o.output_dir, d.file);
    if (dumps.empty() && !o.output_dir.empty()) {
      for (const auto& spec : run->specs) {
        if (spec.read_only) continue;
        writes.push_back({spec.address, spec.size,
                          join_path(o.output_dir, npu::buffer_file_name(spec.address))});
      }
    }
    for (const auto& d : writes) {
      auto bytes = run->read_range(d.address, d.length);
      if (!bytes) return fail("--dump " + d.file + ": " + bytes.error().message);
      if (auto w = npu::format::write_file(d.file, *bytes); !w) return fail(w.error().message);
      report.outputs.push_back({d.address, d.length, d.file});
    }
  }

  if (!o.trace.empty()) {
    if (run->profile) {
      npu::TraceOptions trace_options;
      trace_options.clock_hz = dev->params().clock_hz;
      trace_options.engines = *engines;
      trace_options.commands = commands;
      trace_options.process_name = "npu-submit " + o.input;
      if (run->hazards) trace_options.hazards = run->hazards->hazards;
      if (auto w = npu::write_chrome_trace(*run->profile, o.trace, trace_options); !w) {
        return fail(w.error().message);
      }
    } else if (run->ok()) {
      return fail("--trace: the device reported no job profile (capability job_profile)");
    }
  }

  std::cout << (o.json ? npu::job_report_json(report) : npu::format_job_report(report, o.stats));
  std::cout.flush();

  if (run->timed_out) {
    return fail("job timed out: still pending after " + std::to_string(*o.timeout_ms) + " ms",
                kJobFailed);
  }
  if (!run->result.ok()) {
    std::string what = std::string("job ") + npu::to_string(run->result.status);
    if (run->result.fault.kind != DRM_NPU_FAULT_NONE) {
      what += ": " + npu::describe_fault(run->result.fault, commands);
    }
    return fail(what, kJobFailed);
  }
  if (!std::cout) return fail("cannot write to standard output");
  if (run->hazards && run->hazards->total > 0) {
    return fail(npu::tools::hazards_error(*run->hazards, npu::marker_labels(commands)),
                kHazardsFound);
  }
  return 0;
}

// The package's constants are views of `mapping`, not copies.
int run_model(const Options& o, std::shared_ptr<const npu::format::MappedFile> mapping) {
  const std::pair<bool, const char*> raw_only[] = {
      {!o.buffers.empty(), "--buffer"},
      {!o.dumps.empty(), "--dump"},
      {o.skip_validation, "--skip-validation"},
  };
  for (const auto& [given, name] : raw_only) {
    if (given) {
      return fail(std::string(name) + " is for raw command buffers, not model packages (" +
                  o.input + ")");
    }
  }
  auto dev = npu::Device::open(o.device);
  if (!dev) return fail(dev.error().message);
  // The device checks run in load().
  const std::span<const std::byte> bytes = mapping->bytes();
  auto package = npu::format::parse_package(bytes, std::move(mapping), o.input);
  if (!package) return fail(package.error().message);
  auto model = npu::Model::load(*dev, std::move(*package), o.input);
  if (!model) return fail(model.error().message);
  if (o.priority != npu::Priority::kNormal) {
    if (auto p = model->set_priority(o.priority); !p) return fail(p.error().message);
  }
  auto inputs = npu::tools::read_inputs(o.inputs);
  if (!inputs) return fail(inputs.error().message);
  npu::tools::RunFlags flags{o.output_dir, o.trace, o.stats,        o.json,        o.racecheck,
                             o.timeout_ms, o.input, o.bench.repeat, o.bench.warmup};
  return npu::tools::run_and_report("npu-submit", *dev, *model, *inputs, flags);
}

}  // namespace

static int tool_main(int argc, char** argv) {
  CLI::App app{
      "Submit a job to an NPU device: a raw command buffer (npu-as output) with buffers at fixed "
      "device addresses, or a compiled model package (.npub)"};
  Options o;
  app.add_option("input", o.input, "command buffer (starts with the NPUC magic) or model .npub")
      ->required();
  app.add_option("--buffer", o.buffers,
                 "raw: place a buffer at device address ADDR: ADDR=FILE or ADDR=size:N (zeros), "
                 "':ro' suffix for device read-only (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--dump", o.dumps,
                 "raw: after the job, write LEN bytes at ADDR to FILE: ADDR:LEN=FILE "
                 "(repeatable; relative to --output-dir when given)")
      ->allow_extra_args(false);
  app.add_option("--input", o.inputs, "model: bind graph input NAME to FILE.npy: NAME=FILE.npy")
      ->allow_extra_args(false);
  app.add_option("--output-dir", o.output_dir,
                 "directory for outputs (created if needed); raw mode without --dump writes "
                 "every writable buffer as DIR/buf_<ADDR>.bin");
  app.add_option("--trace", o.trace, "write a Chrome/Perfetto trace-event JSON of the timeline");
  app.add_flag("--stats", o.stats,
               "print per-engine busy cycles and utilization, DMA bytes, MACs, stalls");
  app.add_flag("--json", o.json, "print the job report as one JSON object");
  app.add_flag("--racecheck", o.racecheck,
               "run under the synchronization checker: print every hazard (two engines touching "
               "the same bytes unordered) and exit 3 if there is one");
  app.add_flag("--skip-validation", o.skip_validation,
               "raw: submit unvalidated (emulator), to see the device's own faults");
  std::string priority = "normal";
  app.add_option("--priority", priority,
                 "priority of the job's context: low, normal (default), high or realtime "
                 "(realtime needs CAP_SYS_NICE, or a daemon's --allow-realtime)")
      ->check(CLI::IsMember({"low", "normal", "high", "realtime"}));
  app.add_option("--timeout-ms", o.timeout_ms,
                 "bound the job (raw) or the whole model run, host segments included, to N ms "
                 "(default: no limit)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--device", o.device,
                 "device string: emu:[CONFIG.json] or /dev/accel/accelN (default: $NPU_DEVICE, "
                 "else emu:)");
  app.add_option("--device-config", o.config_path,
                 "device-config JSON for the emulator (same as --device emu:FILE)");
  npu::tools::add_benchmark_flags(app, o.bench);
  if (auto status = npu::tools::parse_args(app, argc, argv, "npu-submit")) return *status;
  if (auto e = npu::tools::check_benchmark_flags(o.bench); !e.empty()) return fail(e);
  o.priority = *npu::parse_priority(priority);

  if (!o.config_path.empty()) {
    if (!o.device.empty() && o.device != "emu:" && o.device != "emu") {
      return fail("--device-config applies to the emulator only, not --device '" + o.device + "'");
    }
    o.device = "emu:" + o.config_path;
  }

  auto file = npu::format::MappedFile::open(o.input);  // a package's weights are not copied
  if (!file) return fail(file.error().message);
  auto mapping = std::make_shared<const npu::format::MappedFile>(std::move(*file));
  const std::span<const std::byte> bytes = mapping->bytes();
  if (npu::is_command_buffer(bytes)) return run_raw(o, bytes);
  if (std::filesystem::path(o.input).extension() == ".npub")
    return run_model(o, std::move(mapping));
  return fail("'" + o.input +
              "': neither a command buffer (no NPUC magic) nor a model package "
              "(.npub)");
}

int main(int argc, char** argv) {
  return npu::tools::guarded_main("npu-submit", [&] { return tool_main(argc, argv); });
}
