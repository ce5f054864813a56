// npu-compile: compiles an ONNX model into a model package (docs/tools.md).
//   npu-compile MODEL.onnx -o OUT.npub [--device-config FILE] [--report] [--precision fp16]
//               [--input-shape ...]
//   npu-compile --list-ops
// Exit status: 0 ok, 1 any error (one line on stderr).
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli.h"
#include "compile_cli.h"
#include "model_cli.h"
#include "npu/compiler/compile.h"
#include "npu/compiler/op_set.h"
#include "npu/format/package.h"

static int tool_main(int argc, char** argv) {
  CLI::App app{"Compile an ONNX model to an NPU model package (.npub)", "npu-compile"};
  npu::tools::CompileFlags flags;
  std::string output;
  app.add_option("MODEL", flags.model, "the model (.onnx, or a TVM BYOC .json graph)")->required();
  app.add_option("-o,--output", output, "the package to write (.npub)")->required();
  npu::tools::add_compile_flags(app, flags);
  app.add_flag_callback(
      "--list-ops",
      [] {
        std::cout << npu::compiler::format_supported_ops();
        throw CLI::Success();
      },
      "print the supported operators (opsets, device family, types, attributes) and exit");
  if (auto status = npu::tools::parse_args(app, argc, argv, "npu-compile")) return *status;
  auto options = npu::tools::compile_options(flags, nullptr);
  if (!options) return npu::tools::fail("npu-compile", options.error().message);
  auto result = npu::tools::compile_model(flags, *options);
  if (!result) return npu::tools::fail("npu-compile", result.error().message);
  if (auto w = npu::format::write_package(output, result->package); !w) {
    return npu::tools::fail("npu-compile", w.error().message);
  }
  if (flags.report) {
    std::cout << result->partition_report << "\n"
              << npu::compiler::format_layer_report(result->package);
    if (options->precision != npu::compiler::Precision::kFp32) {  // what the precision saves
      auto fp32_options = *options;
      fp32_options.precision = npu::compiler::Precision::kFp32;
      auto fp32 = npu::tools::compile_model(flags, fp32_options);
      if (!fp32) return npu::tools::fail("npu-compile", fp32.error().message);
      std::cout << "\n"
                << npu::compiler::format_precision_report(result->package, fp32->package,
                                                          flags.precision);
    }
  }
  std::cout << "wrote " << output << " (" << result->device_ops << " ops on the NPU, "
            << result->host_ops << " on the host)\n";
  return 0;
}

int main(int argc, char** argv) {
  return npu::tools::guarded_main("npu-compile", [&] { return tool_main(argc, argv); });
}
