// Private to the assembler/disassembler: one table describing every opcode's text form (its
// name, allowed engines, flag words and typed fields with byte offsets), shared by both
// directions so they cannot drift apart.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "npu_isa.h"

namespace npu::isa::asmtab {

enum class Type : uint8_t { U8, U16, U32, U64, S32, F32 };

/// Fields whose values have names (an integer is accepted too, for undefined values).
enum class Enum : uint8_t { None, Dtype, EltOp, ActFunc, PoolKind, ReduceKind };

/// How the disassembler prints a field. Zero-valued Dec/Hex fields are left out (zero is the
/// default); Addr and Key fields are always printed because a reader looks for them.
enum class Style : uint8_t { Dec, Hex, Addr, Key };

struct Field {
  const char* name;
  uint16_t offset;  // byte offset in the 128-byte command
  Type type;
  uint8_t count;  // array length (1 for scalars)
  Enum enumeration = Enum::None;
  Style style = Style::Dec;
};

struct Flag {
  const char* name;
  uint16_t bit;
};

struct Op {
  uint8_t opcode;
  const char* name;
  uint8_t engines;  // bit mask of allowed NPU_ENGINE_*
  std::span<const Field> fields;
  std::span<const Flag> flags;
};

struct Named {
  uint8_t value;
  const char* name;
};

/// The opcode with this value or name, or nullptr.
const Op* find_op(uint8_t opcode);
const Op* find_op(std::string_view name);

/// Names of an enumeration's defined values.
std::span<const Named> enum_values(Enum e);

/// Parses a float field's text (decimal, hex float, inf, nan, bits(0x...)) into its bits;
/// false when the text is not one.
bool parse_f32(std::string_view text, uint32_t& bits);

/// Engine names indexed by NPU_ENGINE_*.
inline constexpr const char* kEngines[NPU_NUM_ENGINES] = {"cp", "dma_in", "dma_out", "matrix",
                                                          "vector"};

inline constexpr Named kFeatures[] = {
    {0, "int8"}, {1, "fp32"}, {2, "transcendental"}};  // value = bit index

constexpr uint32_t type_size(Type t) {
  switch (t) {
    case Type::U8:
      return 1;
    case Type::U16:
      return 2;
    case Type::U64:
      return 8;
    default:
      return 4;
  }
}

}  // namespace npu::isa::asmtab
