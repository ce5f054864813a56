// libFuzzer target: the command-buffer validator on any bytes, and every buffer it accepts
// executed by the reference interpreter against a small SRAM and two mapped DRAM buffers at
// the addresses the examples use (docs/reliability.md). A validated buffer may still fault
// (an address outside the DRAM mappings): that is an error, never a crash.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "npu/isa/device_config.h"
#include "npu/isa/validate.h"
#include "npu/ref/interp.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const npu::isa::DeviceConfig cfg;  // the default device
  // Reused between inputs (the interpreter's results are not checked, only that it survives).
  static std::vector<std::byte> sram(cfg.sram_size), in(64 * 1024), out(64 * 1024);
  const auto bytes = std::as_bytes(std::span(data, size));
  auto program = npu::isa::validate(bytes, cfg);
  if (!program) return 0;
  npu::ref::FlatDram dram;
  if (!dram.map(0x100000000ull, in) || !dram.map(0x100100000ull, out)) return 0;
  (void)npu::ref::run_program(*program, sram, dram);
  return 0;
}
