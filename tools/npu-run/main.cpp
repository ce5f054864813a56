// npu-run: compiles a model for the inputs it is given and runs it (docs/tools.md).
//   npu-run MODEL.onnx --input NAME=FILE.npy ... [--output-dir DIR] [--stats] [--trace T.json]
//           [--repeat N [--warmup K]] [compile flags]
// Inputs that only parameterize an operator (a Reshape's shape, Clip bounds, weights fed as
// graph inputs) are bound as constants at compile time. Exit status as npu-submit: 0 ok,
// 1 usage/compile/I-O error, 2 the run failed on the device, 3 --racecheck found hazards.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli.h"
#include "compile_cli.h"
#include "model_cli.h"
#include "npu/compiler/compile.h"
#include "npu/device.h"
#include "npu/runtime/model.h"

static int tool_main(int argc, char** argv) {
  CLI::App app{"Compile an ONNX model and run it on an NPU device", "npu-run"};
  npu::tools::CompileFlags flags;
  npu::tools::RunFlags run;
  std::vector<std::string> input_specs;
  std::string device, save;
  app.add_option("MODEL", flags.model, "the model (.onnx, or a TVM BYOC .json graph)")->required();
  app.add_option("--input", input_specs, "NAME=FILE.npy: a graph input (repeatable)");
  app.add_option("--output-dir", run.output_dir, "write DIR/<output name>.npy per output");
  app.add_option("--trace", run.trace, "write a Chrome/Perfetto trace of the engines");
  app.add_flag("--stats", run.stats, "print cycles, per-engine utilization and wall time");
  app.add_flag("--json", run.json, "print the run report as JSON");
  app.add_flag("--racecheck", run.racecheck,
               "run under the synchronization checker: print every hazard and exit 3 if there "
               "is one");
  app.add_option("--timeout-ms", run.timeout_ms,
                 "bound the run (device jobs and host segments) to N ms")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--device", device, "device string (default: $NPU_DEVICE, else emu:)");
  app.add_option("--save", save, "also write the compiled package here (.npub)");
  npu::tools::add_benchmark_flags(app, run);
  npu::tools::add_compile_flags(app, flags);
  if (auto status = npu::tools::parse_args(app, argc, argv, "npu-run")) return *status;
  if (auto e = npu::tools::check_benchmark_flags(run); !e.empty()) {
    return npu::tools::fail("npu-run", e);
  }
  auto inputs = npu::tools::read_inputs(input_specs);
  if (!inputs) return npu::tools::fail("npu-run", inputs.error().message);
  if (device.empty() && !flags.device_config.empty()) device = "emu:" + flags.device_config;
  auto dev = npu::Device::open(device);
  if (!dev) return npu::tools::fail("npu-run", dev.error().message);
  auto options = npu::tools::compile_options(flags, &*inputs);
  if (!options) return npu::tools::fail("npu-run", options.error().message);
  if (flags.device_config.empty()) options->device = dev->config();
  auto result = npu::tools::compile_model(flags, *options);
  if (!result) return npu::tools::fail("npu-run", result.error().message);
  if (!save.empty()) {
    if (auto w = npu::format::write_package(save, result->package); !w)
      return npu::tools::fail("npu-run", w.error().message);
  }
  if (flags.report) {
    std::cout << result->partition_report << "\n"
              << npu::compiler::format_layer_report(result->package) << "\n";
  }
  auto model = npu::Model::load(*dev, std::move(result->package), flags.model);
  if (!model) return npu::tools::fail("npu-run", model.error().message);
  run.label = flags.model;
  return npu::tools::run_and_report("npu-run", *dev, *model, *inputs, run);
}

int main(int argc, char** argv) {
  return npu::tools::guarded_main("npu-run", [&] { return tool_main(argc, argv); });
}
