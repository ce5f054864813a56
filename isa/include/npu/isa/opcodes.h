// The ISA's opcodes as data: for every NPU_OP_* its mnemonic, the engines that may run it and
// its defined flags, one row per opcode of npu/isa/opcodes.def (the X-macro table that also
// generates the validator's, the timing model's, the interpreter's and the emulator's
// per-opcode dispatch). The table is immutable static data: every function here is pure and
// thread-safe, and the returned pointers and spans live as long as the program.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "npu_isa.h"

namespace npu::isa {

/// A defined flag bit of an opcode and its assembler word ("bias").
struct FlagName {
  const char* name;
  uint16_t bit;
};

/// One row of the opcode table.
struct OpcodeInfo {
  uint8_t opcode;                        // NPU_OP_*
  const char* mnemonic;                  // "conv2d", as npu-as and npu-objdump spell it
  uint8_t engines;                       // bit mask of allowed engines: 1 << NPU_ENGINE_*
  uint16_t flags;                        // every defined NPU_*_FLAG_* bit
  std::span<const FlagName> flag_names;  // the defined flags, in table order
  bool data;  // reads/writes memory operands (false: a control command such as FENCE)

  bool allows(uint8_t engine) const { return engine < 8 && (engines >> engine) & 1u; }
  /// The engine when exactly one is allowed (the default where the text omits it).
  std::optional<uint8_t> sole_engine() const;
};

/// Every opcode, in opcode order.
std::span<const OpcodeInfo> opcodes();

/// The row of `opcode` or of `mnemonic`, or nullptr when there is none.
const OpcodeInfo* find_opcode(uint8_t opcode);
const OpcodeInfo* find_opcode(std::string_view mnemonic);

/// True when `opcode` is known and may run on `engine`.
bool opcode_allows_engine(uint8_t opcode, uint8_t engine);

/// Lowercase name of an opcode ("conv2d") or "unknown".
const char* opcode_name(uint8_t opcode);

/// Lowercase name of an engine ("matrix") or "unknown".
const char* engine_name(uint8_t engine);

/// The engine called `name` ("dma_in"), if any.
std::optional<uint8_t> find_engine(std::string_view name);

}  // namespace npu::isa
