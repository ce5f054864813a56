// The opcode table (npu/isa/opcodes.def) as constexpr data, and the name lookups built on it.
// Each row is checked at compile time against uapi/npu_isa.h: its value is its NPU_OP_*
// macro and its payload is a 128-byte member of union npu_cmd that starts with the header.
#include "npu/isa/opcodes.h"

#include <array>
#include <bit>
#include <cstddef>
#include <iterator>
#include <string_view>

namespace npu::isa {
namespace {

/// The ENGINES column's names.
namespace engines {
constexpr uint8_t bit(int engine) {
  return static_cast<uint8_t>(1u << engine);
}
constexpr uint8_t CP = bit(NPU_ENGINE_CP);
constexpr uint8_t DMA_IN = bit(NPU_ENGINE_DMA_IN);
constexpr uint8_t DMA_OUT = bit(NPU_ENGINE_DMA_OUT);
constexpr uint8_t MATRIX = bit(NPU_ENGINE_MATRIX);
constexpr uint8_t VECTOR = bit(NPU_ENGINE_VECTOR);
constexpr uint8_t ANY = static_cast<uint8_t>((1u << NPU_NUM_ENGINES) - 1);
constexpr uint8_t NON_CP = ANY & ~CP;
}  // namespace engines

constexpr const char* kEngineNames[NPU_NUM_ENGINES] = {"cp", "dma_in", "dma_out", "matrix",
                                                       "vector"};

// Compile-time checks of every row against the uapi header.
#define NPU_ROW_CHECKS(VALUE, ID, PAYLOAD)                                                  \
  static_assert(VALUE == NPU_OP_##ID, "opcodes.def: row " #ID " differs from NPU_OP_" #ID); \
  static_assert(sizeof(npu_cmd::PAYLOAD) == NPU_CMD_SIZE,                                   \
                "opcodes.def: payload " #PAYLOAD " of " #ID " is not a whole command");     \
  static_assert(offsetof(npu_cmd, PAYLOAD.hdr) == 0,                                        \
                "opcodes.def: payload " #PAYLOAD " of " #ID " does not start with hdr");
#define NPU_CONTROL(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, ...) NPU_ROW_CHECKS(VALUE, ID, PAYLOAD)
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, ...) NPU_ROW_CHECKS(VALUE, ID, PAYLOAD)
#include "npu/isa/opcodes.def"
#undef NPU_ROW_CHECKS

// Each row's flags, as an array ending in a {nullptr, 0} sentinel (so that it is never empty).
#define NPU_FLAG(NAME, BIT) FlagName{NAME, BIT},
#define NPU_CONTROL(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, ...) \
  constexpr FlagName k##ID##Flags[] = {FLAGS FlagName{nullptr, 0}};
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, ...) \
  constexpr FlagName k##ID##Flags[] = {FLAGS FlagName{nullptr, 0}};
#include "npu/isa/opcodes.def"

template <size_t N>
constexpr uint16_t flag_bits(const FlagName (&flags)[N]) {
  uint16_t bits = 0;
  for (const FlagName& f : flags) bits |= f.bit;
  return bits;
}

#define NPU_ROW(VALUE, MNEMONIC, ENGINES, ID, DATA)       \
  OpcodeInfo{VALUE,                                       \
             MNEMONIC,                                    \
             engines::ENGINES,                            \
             flag_bits(k##ID##Flags),                     \
             {k##ID##Flags, std::size(k##ID##Flags) - 1}, \
             DATA},
#define NPU_CONTROL(VALUE, ID, MNEMONIC, ENGINES, ...) NPU_ROW(VALUE, MNEMONIC, ENGINES, ID, false)
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, ...) NPU_ROW(VALUE, MNEMONIC, ENGINES, ID, true)
constexpr OpcodeInfo kOpcodes[] = {
#include "npu/isa/opcodes.def"
};
#undef NPU_ROW

/// kOpcodes index of each opcode byte, -1 where there is none.
constexpr std::array<int8_t, 256> kIndex = [] {
  std::array<int8_t, 256> index{};
  index.fill(-1);
  for (size_t i = 0; i < std::size(kOpcodes); ++i) {
    index[kOpcodes[i].opcode] = static_cast<int8_t>(i);
  }
  return index;
}();

constexpr bool rows_are_sane() {
  for (size_t i = 0; i < std::size(kOpcodes); ++i) {
    if (i > 0 && kOpcodes[i - 1].opcode >= kOpcodes[i].opcode) return false;  // sorted, unique
    if (kOpcodes[i].engines == 0) return false;
    for (size_t j = 0; j < i; ++j) {
      if (std::string_view(kOpcodes[i].mnemonic) == kOpcodes[j].mnemonic) return false;
    }
  }
  return true;
}
static_assert(rows_are_sane(),
              "opcodes.def: rows must be in opcode order with unique "
              "values and mnemonics and at least one engine");

}  // namespace

std::optional<uint8_t> OpcodeInfo::sole_engine() const {
  if (std::popcount(engines) != 1) return std::nullopt;
  return static_cast<uint8_t>(std::countr_zero(engines));
}

std::span<const OpcodeInfo> opcodes() {
  return kOpcodes;
}

const OpcodeInfo* find_opcode(uint8_t opcode) {
  const int8_t i = kIndex[opcode];
  return i < 0 ? nullptr : &kOpcodes[i];
}

const OpcodeInfo* find_opcode(std::string_view mnemonic) {
  for (const OpcodeInfo& op : kOpcodes) {
    if (mnemonic == op.mnemonic) return &op;
  }
  return nullptr;
}

bool opcode_allows_engine(uint8_t opcode, uint8_t engine) {
  const OpcodeInfo* op = find_opcode(opcode);
  return op != nullptr && op->allows(engine);
}

const char* opcode_name(uint8_t opcode) {
  const OpcodeInfo* op = find_opcode(opcode);
  return op ? op->mnemonic : "unknown";
}

const char* engine_name(uint8_t engine) {
  return engine < NPU_NUM_ENGINES ? kEngineNames[engine] : "unknown";
}

std::optional<uint8_t> find_engine(std::string_view name) {
  for (uint8_t e = 0; e < NPU_NUM_ENGINES; ++e) {
    if (name == kEngineNames[e]) return e;
  }
  return std::nullopt;
}

}  // namespace npu::isa
