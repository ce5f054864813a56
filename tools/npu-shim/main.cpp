// npu-shim: runs an unmodified program with the emulated NPU as /dev/accel/accel0
// (docs/driver-prototyping.md).
//   npu-shim [--device emu:[CONFIG] | unix:PATH] -- PROGRAM [ARGS...]
// The device also comes from NPU_DEVICE (when it names an emu: or unix: device); default emu:.
// Exits with the program's status (128 + N for signal N, 127 when it cannot be started).
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli.h"
#include "npu/shim/launch.h"

static int tool_main(int argc, char** argv) {
  CLI::App app{"Run a program with the emulated NPU as /dev/accel/accel0 (a preload shim)"};
  npu::shim::LaunchOptions options;
  app.add_option("--device", options.device,
                 "emu:[CONFIG] (in-process, default) or unix:PATH (npu-daemon); default: "
                 "NPU_DEVICE when it names one of those");
  app.add_option("--shim", options.library, "the libnpu-shim.so to preload (default: found)");
  app.add_option("program", options.argv, "PROGRAM [ARGS...] (after --)")->required();
  app.positionals_at_end();
  if (auto s = npu::tools::parse_args(app, argc, argv, "npu-shim")) return *s;
  auto status = npu::shim::run_under_shim(options);
  if (!status) return npu::tools::fail("npu-shim", status.error().message);
  return *status;
}

int main(int argc, char** argv) {
  return npu::tools::guarded_main("npu-shim", [&] { return tool_main(argc, argv); });
}
