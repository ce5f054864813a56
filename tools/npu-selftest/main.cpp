// npu-selftest: runs real command buffers on the emulated device and checks the results.
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli.h"
#include "selftest.h"

static int tool_main(int argc, char** argv) {
  CLI::App app{"Run a self-test job on the emulated NPU and print results, cycles and counters"};
  std::string config_path;
  app.add_option("--device-config", config_path, "device-config JSON (default: built-in)")
      ->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);

  npu::isa::DeviceConfig cfg;
  if (!config_path.empty()) {
    auto loaded = npu::isa::DeviceConfig::load(config_path);
    if (!loaded) {
      std::cerr << "npu-selftest: " << loaded.error().message << "\n";
      return 1;
    }
    cfg = *loaded;
  }
  return npu::selftest::run(cfg, std::cout);
}

int main(int argc, char** argv) {
  return npu::tools::guarded_main("npu-selftest", [&] { return tool_main(argc, argv); });
}
