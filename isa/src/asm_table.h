// Private to the assembler/disassembler: the text form of every payload (its typed fields with
// byte offsets, in struct order) and of enum values, shared by both directions so they cannot
// drift apart. An opcode's name, engines and flag words come from the opcode table
// (npu/isa/opcodes.h); its fields are those of the payload its row names.
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

struct Named {
  uint8_t value;
  const char* name;
};

/// The fields of the payload of `opcode` (empty for unknown opcodes and bare commands).
std::span<const Field> fields_of(uint8_t opcode);

/// Names of an enumeration's defined values.
std::span<const Named> enum_values(Enum e);

/// Parses a float field's text (decimal, hex float, inf, nan, bits(0x...)) into its bits;
/// false when the text is not one.
bool parse_f32(std::string_view text, uint32_t& bits);

inline constexpr Named kFeatures[] = {
    {0, "int8"}, {1, "fp32"}, {2, "transcendental"}, {3, "fp16"}};  // value = bit index

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
