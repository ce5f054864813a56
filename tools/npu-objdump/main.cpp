// npu-objdump: prints a binary command buffer as .npuasm text (docs/asm.md) that npu-as
// assembles back into the same bytes.
#include <CLI/CLI.hpp>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include "cli.h"
#include "npu/isa/asm.h"
#include "npu/isa/device_config.h"

namespace {

int fail(const std::string& message) {
  std::cerr << "npu-objdump: " << message << "\n";
  return 1;
}

}  // namespace

static int tool_main(int argc, char** argv) {
  CLI::App app{"Disassemble an NPU command buffer into .npuasm text on stdout"};
  std::string input, config_path;
  bool validate = false, no_index = false;
  app.add_option("input", input, "command buffer file")->required();
  app.add_flag("--validate", validate,
               "also report validation problems on stderr (as warnings; exit status 0)");
  app.add_option("--device-config", config_path,
                 "device-config JSON for --validate (default: built-in)");
  app.add_flag("--no-index", no_index, "omit the '# [i]' command index comments");
  if (auto status = npu::tools::parse_args(app, argc, argv, "npu-objdump")) return *status;

  std::ifstream in(input, std::ios::binary);
  if (!in) return fail("cannot open '" + input + "': " + std::strerror(errno));
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto bytes = std::as_bytes(std::span<const char>(raw));

  auto text = npu::isa::disassemble(bytes, {.index_comments = !no_index});
  if (!text) return fail(input + ": " + text.error().message);

  if (validate || !config_path.empty()) {
    npu::isa::DeviceConfig cfg;
    if (!config_path.empty()) {
      auto loaded = npu::isa::DeviceConfig::load(config_path);
      if (!loaded) return fail(loaded.error().message);
      cfg = *loaded;
    }
    for (const auto& e : npu::isa::validation_problems(bytes, cfg)) {
      std::cerr << "npu-objdump: warning: " << input << ": " << e.message << "\n";
    }
  }
  std::cout << *text << std::flush;
  return std::cout ? 0 : fail("cannot write to stdout");
}

int main(int argc, char** argv) {
  return npu::tools::guarded_main("npu-objdump", [&] { return tool_main(argc, argv); });
}
