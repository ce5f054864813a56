// The payload fields of the assembler and disassembler come from the field table
// (npu/isa/fields.def): field names are exactly the struct field names of uapi/npu_isa.h, in
// struct order. fields_of() maps an opcode to its row's payload through npu/isa/opcodes.def.
#include <array>
#include <cstddef>

#include "asm_table.h"
#include "npu/isa/fields.def"

namespace npu::isa::asmtab {
namespace {

constexpr Named kDtypes[] = {{NPU_DTYPE_INT8, "int8"},   {NPU_DTYPE_UINT8, "uint8"},
                             {NPU_DTYPE_INT32, "int32"}, {NPU_DTYPE_FP32, "fp32"},
                             {NPU_DTYPE_FP16, "fp16"},   {NPU_DTYPE_BF16, "bf16"}};
constexpr Named kEltOps[] = {{NPU_ELTWISE_ADD, "add"}, {NPU_ELTWISE_SUB, "sub"},
                             {NPU_ELTWISE_MUL, "mul"}, {NPU_ELTWISE_DIV, "div"},
                             {NPU_ELTWISE_MAX, "max"}, {NPU_ELTWISE_MIN, "min"},
                             {NPU_ELTWISE_POW, "pow"}, {NPU_ELTWISE_PRELU, "prelu"}};
constexpr Named kActFuncs[] = {
    {NPU_ACT_COPY, "copy"},
    {NPU_ACT_RELU, "relu"},
    {NPU_ACT_LEAKY_RELU, "leaky_relu"},
    {NPU_ACT_CLIP, "clip"},
    {NPU_ACT_SIGMOID, "sigmoid"},
    {NPU_ACT_TANH, "tanh"},
    {NPU_ACT_GELU, "gelu"},
    {NPU_ACT_HARDSWISH, "hardswish"},
    {NPU_ACT_HARDSIGMOID, "hardsigmoid"},
    {NPU_ACT_EXP, "exp"},
    {NPU_ACT_LOG, "log"},
    {NPU_ACT_SQRT, "sqrt"},
    {NPU_ACT_ABS, "abs"},
    {NPU_ACT_NEG, "neg"},
    {NPU_ACT_ERF, "erf"},
    {NPU_ACT_SOFTPLUS, "softplus"},
    {NPU_ACT_ELU, "elu"},
    {NPU_ACT_RECIPROCAL, "reciprocal"},
};
constexpr Named kPoolKinds[] = {{NPU_POOL_MAX, "max"}, {NPU_POOL_AVG, "avg"}};
constexpr Named kReduceKinds[] = {{NPU_REDUCE_SUM, "sum"},
                                  {NPU_REDUCE_MEAN, "mean"},
                                  {NPU_REDUCE_MAX, "max"},
                                  {NPU_REDUCE_MIN, "min"}};

}  // namespace

// A payload's assembler fields: its field table rows (npu/isa/fields.def) without the reserved
// members, at their offsets in the 128-byte command.
#define NPU_ASM_FIELD(P, MEMBER, T, N, ENUM, STYLE, ...) \
  Field{#MEMBER, offsetof(npu_cmd, P.MEMBER), Type::T, N, Enum::ENUM, Style::STYLE},
#define NPU_ASM_COUNT(...) +1
#define NPU_ASM_SKIP(P, MEMBER)
#define NPU_ASM_FIELDS(P)                                                                    \
  {                                                                                          \
    static constexpr std::array<Field, 0 NPU_FIELDS_##P(NPU_ASM_COUNT, NPU_ASM_SKIP)> kRows{ \
        {NPU_FIELDS_##P(NPU_ASM_FIELD, NPU_ASM_SKIP)}};                                      \
    return kRows;                                                                            \
  }

std::span<const Field> fields_of(uint8_t opcode) {
  switch (opcode) {
#define NPU_CONTROL(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, ...) \
  case NPU_OP_##ID:                                             \
    NPU_ASM_FIELDS(PAYLOAD)
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, ...) \
  case NPU_OP_##ID:                                          \
    NPU_ASM_FIELDS(PAYLOAD)
#include "npu/isa/opcodes.def"
    default:
      return {};
  }
}

#undef NPU_ASM_FIELDS
#undef NPU_ASM_SKIP
#undef NPU_ASM_COUNT
#undef NPU_ASM_FIELD

std::span<const Named> enum_values(Enum e) {
  switch (e) {
    case Enum::Dtype:
      return kDtypes;
    case Enum::EltOp:
      return kEltOps;
    case Enum::ActFunc:
      return kActFuncs;
    case Enum::PoolKind:
      return kPoolKinds;
    case Enum::ReduceKind:
      return kReduceKinds;
    default:
      return {};
  }
}

}  // namespace npu::isa::asmtab
