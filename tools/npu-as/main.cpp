// npu-as: assembles a .npuasm program (docs/asm.md) into a binary command buffer.
#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "npu/isa/asm.h"
#include "npu/isa/device_config.h"

namespace {

int fail(const std::string& message) {
  std::cerr << "npu-as: " << message << "\n";
  return 1;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  CLI::App app{"Assemble a .npuasm program into an NPU command buffer"};
  std::string input, output, config_path;
  bool validate = false;
  app.add_option("input", input, ".npuasm source file")->required();
  app.add_option("-o,--output", output, "output command buffer")->required();
  app.add_flag("--validate", validate, "validate the result against the device config");
  app.add_option("--device-config", config_path,
                 "device-config JSON for --validate (default: built-in)");
  if (auto status = npu::tools::parse_args(app, argc, argv, "npu-as")) return *status;

  std::ifstream in(input, std::ios::binary);
  if (!in) return fail("cannot open '" + input + "': " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  auto assembled = npu::isa::assemble_listing(text.str(), input);
  if (!assembled) return fail(assembled.error().message);

  if (validate || !config_path.empty()) {
    npu::isa::DeviceConfig cfg;
    if (!config_path.empty()) {
      auto loaded = npu::isa::DeviceConfig::load(config_path);
      if (!loaded) return fail(loaded.error().message);
      cfg = *loaded;
    }
    if (auto r = npu::isa::validate_assembly(*assembled, cfg, input); !r) {
      return fail(r.error().message);
    }
  }

  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  if (!out) return fail("cannot write '" + output + "'");
  out.write(reinterpret_cast<const char*>(assembled->bytes.data()),
            static_cast<std::streamsize>(assembled->bytes.size()));
  out.close();
  if (!out) return fail("cannot write '" + output + "'");
  return 0;
}

int main(int argc, char** argv) {
  return npu::tools::guarded_main("npu-as", [&] { return tool_main(argc, argv); });
}
