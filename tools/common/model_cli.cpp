// Model runs for npu-submit and npu-run (see model_cli.h).
#include "model_cli.h"

#include <cctype>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "npu/job_report.h"
#include "npu/trace.h"

namespace npu::tools {

namespace {

std::string join_path(const std::string& dir, const std::string& file) {
  if (dir.empty() || std::filesystem::path(file).is_absolute()) return file;
  return (std::filesystem::path(dir) / file).string();
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

int fail(const std::string& tool, std::string message, int status) {
  if (!message.empty()) {
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  }
  std::cerr << tool << ": " << message << "\n";
  return status;
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
  RunOptions options;
  options.collect_profile =
      (o.stats || o.json || !o.trace.empty()) && device.params().has(DRM_NPU_CAP_JOB_PROFILE);
  if (o.timeout_ms) options.timeout = std::chrono::milliseconds(*o.timeout_ms);
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
  if (!o.trace.empty()) {
    if (!st.has_profile) {
      return failure("--trace: the device reported no job profile (capability job_profile)");
    }
    TraceOptions trace_options;
    trace_options.clock_hz = device.params().clock_hz;
    trace_options.engines = *engines;
    trace_options.process_name = tool + " " + o.label;
    if (auto w = model.write_trace(o.trace, trace_options); !w) return failure(w.error().message);
  }
  if (o.json) {
    std::cout << job_report_json(report);
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
    for (const auto& [name, file] : written) {
      const auto& a = outputs->at(name);
      std::cout << "wrote " << file << " (" << format::dtype_name(a.dtype) << " "
                << shape_text(a.shape) << ")\n";
    }
  }
  std::cout.flush();
  if (!std::cout) return failure("cannot write to standard output");
  return 0;
}

}  // namespace npu::tools
