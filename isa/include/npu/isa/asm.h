// The npu assembler and disassembler: a line-oriented text form of ISA command buffers
// (docs/asm.md). assemble() and disassemble() are exact inverses: any buffer with a valid
// header round-trips byte for byte, commands the text cannot express going through `.raw`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npu/expected.h"
#include "npu/isa/device_config.h"

namespace npu::isa {

/// An assembled buffer plus the 1-based source line of each command (for diagnostics).
struct Assembly {
  std::vector<std::byte> bytes;
  std::vector<uint32_t> lines;  // lines[i]: source line of command i
};

/// Assembles .npuasm text into a command buffer. Errors are EINVAL with a message like
/// "prog.npuasm:12: conv2d: unknown field 'strid_h'". The assembler checks syntax and field
/// ranges only; run validate() (or validate_assembly()) for the ISA's semantic rules.
Expected<std::vector<std::byte>> assemble(std::string_view text,
                                          std::string_view filename = "<input>");
/// assemble() that also reports the source line of every command.
Expected<Assembly> assemble_listing(std::string_view text, std::string_view filename = "<input>");

/// Runs validate() on an assembly; a command error is prefixed with its source location:
/// "prog.npuasm:12: command 3 (conv2d): field out_h: expected 14, got 15".
Expected<void> validate_assembly(const Assembly& assembly, const DeviceConfig& cfg,
                                 std::string_view filename = "<input>");

struct DisasmOptions {
  bool index_comments = true;  // append "# [i]" to every command line
};

/// Disassembles a command buffer into canonical text that assemble() turns back into the
/// same bytes. Only the header must be sane (at least 32 bytes, magic, size == buffer size ==
/// 32 + num_cmds * 128, num_cmds >= 1, reserved zero); otherwise an EINVAL Error
/// ("header: bad magic 0x12345678"). Any command is printed, unexpressible ones as `.raw`.
Expected<std::string> disassemble(std::span<const std::byte> buffer, DisasmOptions opts = {});

/// Every validation problem of a buffer, for tools that warn instead of failing: each
/// command's check_command() error, then validate()'s error if it is a different one.
std::vector<Error> validation_problems(std::span<const std::byte> buffer, const DeviceConfig& cfg);

}  // namespace npu::isa
