// npu-info: prints a device's identity, parameters, engines and counters (docs/tools.md).
#include <CLI/CLI.hpp>

#include <cctype>
#include <iostream>
#include <string>

#include "cli.h"
#include "npu/device.h"
#include "npu/device_report.h"

namespace {

int fail(std::string message) {
  if (!message.empty()) {
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  }
  std::cerr << "npu-info: " << message << "\n";
  return 1;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  CLI::App app{"Print the identity, parameters, engines and counters of an NPU device"};
  std::string device, config_path;
  bool json = false;
  app.add_flag("--json", json, "print one JSON object (keys in docs/tools.md)");
  app.add_option("--device", device,
                 "device string: emu:[CONFIG.json] or /dev/accel/accelN (default: "
                 "$NPU_DEVICE, else emu:)");
  app.add_option("--device-config", config_path,
                 "device-config JSON for the emulator (same as --device emu:FILE)");
  if (auto status = npu::tools::parse_args(app, argc, argv, "npu-info")) return *status;

  if (!config_path.empty()) {
    if (!device.empty() && device != "emu:" && device != "emu") {
      return fail("--device-config applies to the emulator only, not --device '" + device + "'");
    }
    device = "emu:" + config_path;
  }
  auto dev = npu::Device::open(device);
  if (!dev) return fail(dev.error().message);
  auto report = npu::query_device_report(*dev);
  if (!report) return fail(report.error().message);
  std::cout << (json ? npu::device_report_json(*report) : npu::format_device_report(*report));
  std::cout.flush();
  if (!std::cout) return fail("cannot write to standard output");
  return 0;
}

int main(int argc, char** argv) {
  return npu::tools::guarded_main("npu-info", [&] { return tool_main(argc, argv); });
}
