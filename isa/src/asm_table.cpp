// The payload fields of the assembler and disassembler: field names are exactly the struct
// field names of uapi/npu_isa.h, in struct order. fields_of() maps an opcode to its row's
// payload through npu/isa/opcodes.def.
#include <cstddef>

#include "asm_table.h"

namespace npu::isa::asmtab {
namespace {

#define NPU_F(S, member, type, count, ...)                                                \
  Field {                                                                                 \
#member, static_cast < uint16_t>(offsetof(S, member)), Type::type, count, __VA_ARGS__ \
  }
#define NPU_ADDR(S, member) NPU_F(S, member, U32, 1, Enum::None, Style::Addr)

/// Each payload's fields, named as its union npu_cmd member.
namespace payload {

constexpr std::span<const Field> end{};  // END and NOP carry nothing
constexpr Field fence[] = {NPU_F(npu_cmd_fence, value, U32, 1)};
constexpr Field marker[] = {NPU_F(npu_cmd_marker, id, U32, 1)};
constexpr Field sem[] = {NPU_F(npu_cmd_sem, sem, U32, 1, Enum::None, Style::Key),
                         NPU_F(npu_cmd_sem, count, U32, 1)};

constexpr Field dma[] = {
    NPU_F(npu_cmd_dma, dram_addr, U64, 1, Enum::None, Style::Addr),
    NPU_ADDR(npu_cmd_dma, sram_addr),
    NPU_F(npu_cmd_dma, elem_size, U32, 1),
    NPU_F(npu_cmd_dma, size, U32, 3),
    NPU_F(npu_cmd_dma, dram_stride, U32, 3),
    NPU_F(npu_cmd_dma, sram_stride, U32, 2),
    NPU_F(npu_cmd_dma, pad_before, U16, 3),
    NPU_F(npu_cmd_dma, pad_after, U16, 3),
    NPU_F(npu_cmd_dma, pad_value, U32, 1, Enum::None, Style::Hex),
    NPU_F(npu_cmd_dma, dram_dtype, U8, 1, Enum::Dtype),  // since 1.1; 0 (no conversion) omitted
    NPU_F(npu_cmd_dma, sram_dtype, U8, 1, Enum::Dtype),
};

constexpr Field conv2d[] = {
    NPU_ADDR(npu_cmd_conv2d, in_addr),
    NPU_ADDR(npu_cmd_conv2d, w_addr),
    NPU_ADDR(npu_cmd_conv2d, out_addr),
    NPU_ADDR(npu_cmd_conv2d, chan_addr),
    NPU_F(npu_cmd_conv2d, in_h, U16, 1),
    NPU_F(npu_cmd_conv2d, in_w, U16, 1),
    NPU_F(npu_cmd_conv2d, in_c, U16, 1),
    NPU_F(npu_cmd_conv2d, out_h, U16, 1),
    NPU_F(npu_cmd_conv2d, out_w, U16, 1),
    NPU_F(npu_cmd_conv2d, out_c, U16, 1),
    NPU_F(npu_cmd_conv2d, k_h, U16, 1),
    NPU_F(npu_cmd_conv2d, k_w, U16, 1),
    NPU_F(npu_cmd_conv2d, groups, U16, 1),
    NPU_F(npu_cmd_conv2d, stride_h, U8, 1),
    NPU_F(npu_cmd_conv2d, stride_w, U8, 1),
    NPU_F(npu_cmd_conv2d, dil_h, U8, 1),
    NPU_F(npu_cmd_conv2d, dil_w, U8, 1),
    NPU_F(npu_cmd_conv2d, pad_top, U8, 1),
    NPU_F(npu_cmd_conv2d, pad_left, U8, 1),
    NPU_F(npu_cmd_conv2d, pad_bottom, U8, 1),
    NPU_F(npu_cmd_conv2d, pad_right, U8, 1),
    NPU_F(npu_cmd_conv2d, in_dtype, U8, 1, Enum::Dtype),
    NPU_F(npu_cmd_conv2d, w_dtype, U8, 1, Enum::Dtype),
    NPU_F(npu_cmd_conv2d, out_dtype, U8, 1, Enum::Dtype),
    NPU_F(npu_cmd_conv2d, in_zp, S32, 1),
    NPU_F(npu_cmd_conv2d, out_zp, S32, 1),
    NPU_F(npu_cmd_conv2d, clamp_min, S32, 1),
    NPU_F(npu_cmd_conv2d, clamp_max, S32, 1),
    NPU_F(npu_cmd_conv2d, fclamp_min, F32, 1),
    NPU_F(npu_cmd_conv2d, fclamp_max, F32, 1),
};

constexpr Field matmul[] = {
    NPU_ADDR(npu_cmd_matmul, a_addr),
    NPU_ADDR(npu_cmd_matmul, b_addr),
    NPU_ADDR(npu_cmd_matmul, out_addr),
    NPU_ADDR(npu_cmd_matmul, chan_addr),
    NPU_F(npu_cmd_matmul, m, U32, 1),
    NPU_F(npu_cmd_matmul, k, U32, 1),
    NPU_F(npu_cmd_matmul, n, U32, 1),
    NPU_F(npu_cmd_matmul, batch, U32, 1),
    NPU_F(npu_cmd_matmul, a_batch_stride, U32, 1),
    NPU_F(npu_cmd_matmul, b_batch_stride, U32, 1),
    NPU_F(npu_cmd_matmul, out_batch_stride, U32, 1),
    NPU_F(npu_cmd_matmul, a_dtype, U8, 1, Enum::Dtype),
    NPU_F(npu_cmd_matmul, b_dtype, U8, 1, Enum::Dtype),
    NPU_F(npu_cmd_matmul, out_dtype, U8, 1, Enum::Dtype),
    NPU_F(npu_cmd_matmul, a_zp, S32, 1),
    NPU_F(npu_cmd_matmul, out_zp, S32, 1),
    NPU_F(npu_cmd_matmul, clamp_min, S32, 1),
    NPU_F(npu_cmd_matmul, clamp_max, S32, 1),
    NPU_F(npu_cmd_matmul, fclamp_min, F32, 1),
    NPU_F(npu_cmd_matmul, fclamp_max, F32, 1),
};

constexpr Field eltwise[] = {
    NPU_F(npu_cmd_eltwise, op, U8, 1, Enum::EltOp),
    NPU_F(npu_cmd_eltwise, dtype, U8, 1, Enum::Dtype),
    NPU_F(npu_cmd_eltwise, shape, U32, 4),
    NPU_ADDR(npu_cmd_eltwise, a.addr),
    NPU_F(npu_cmd_eltwise, a.stride, U32, 4),
    NPU_ADDR(npu_cmd_eltwise, b.addr),
    NPU_F(npu_cmd_eltwise, b.stride, U32, 4),
    NPU_ADDR(npu_cmd_eltwise, out.addr),
    NPU_F(npu_cmd_eltwise, out.stride, U32, 4),
};

constexpr Field activation[] = {
    NPU_F(npu_cmd_activation, func, U8, 1, Enum::ActFunc),
    NPU_F(npu_cmd_activation, dtype, U8, 1, Enum::Dtype),
    NPU_F(npu_cmd_activation, shape, U32, 4),
    NPU_ADDR(npu_cmd_activation, in.addr),
    NPU_F(npu_cmd_activation, in.stride, U32, 4),
    NPU_ADDR(npu_cmd_activation, out.addr),
    NPU_F(npu_cmd_activation, out.stride, U32, 4),
    NPU_F(npu_cmd_activation, alpha, F32, 1),
    NPU_F(npu_cmd_activation, beta, F32, 1),
};

constexpr Field pool[] = {
    NPU_F(npu_cmd_pool, kind, U8, 1, Enum::PoolKind),
    NPU_F(npu_cmd_pool, dtype, U8, 1, Enum::Dtype),
    NPU_ADDR(npu_cmd_pool, in_addr),
    NPU_ADDR(npu_cmd_pool, out_addr),
    NPU_F(npu_cmd_pool, in_h, U16, 1),
    NPU_F(npu_cmd_pool, in_w, U16, 1),
    NPU_F(npu_cmd_pool, channels, U16, 1),
    NPU_F(npu_cmd_pool, out_h, U16, 1),
    NPU_F(npu_cmd_pool, out_w, U16, 1),
    NPU_F(npu_cmd_pool, k_h, U16, 1),
    NPU_F(npu_cmd_pool, k_w, U16, 1),
    NPU_F(npu_cmd_pool, stride_h, U8, 1),
    NPU_F(npu_cmd_pool, stride_w, U8, 1),
    NPU_F(npu_cmd_pool, pad_top, U8, 1),
    NPU_F(npu_cmd_pool, pad_left, U8, 1),
    NPU_F(npu_cmd_pool, pad_bottom, U8, 1),
    NPU_F(npu_cmd_pool, pad_right, U8, 1),
};

constexpr Field softmax[] = {
    NPU_ADDR(npu_cmd_softmax, in_addr),
    NPU_ADDR(npu_cmd_softmax, out_addr),
    NPU_F(npu_cmd_softmax, rows, U32, 1),
    NPU_F(npu_cmd_softmax, len, U32, 1),
};

constexpr Field scale_shift[] = {
    NPU_ADDR(npu_cmd_scale_shift, in_addr),    NPU_ADDR(npu_cmd_scale_shift, out_addr),
    NPU_ADDR(npu_cmd_scale_shift, scale_addr), NPU_ADDR(npu_cmd_scale_shift, shift_addr),
    NPU_F(npu_cmd_scale_shift, outer, U32, 1), NPU_F(npu_cmd_scale_shift, channels, U32, 1),
};

constexpr Field quant[] = {
    NPU_ADDR(npu_cmd_quant, in_addr),
    NPU_ADDR(npu_cmd_quant, out_addr),
    NPU_F(npu_cmd_quant, count, U32, 1),
    NPU_F(npu_cmd_quant, channels, U32, 1),
    NPU_F(npu_cmd_quant, inner, U32, 1),
    NPU_ADDR(npu_cmd_quant, params_addr),
    NPU_F(npu_cmd_quant, scale, F32, 1),
    NPU_F(npu_cmd_quant, zp, S32, 1),
    NPU_F(npu_cmd_quant, in_dtype, U8, 1, Enum::Dtype),
    NPU_F(npu_cmd_quant, out_dtype, U8, 1, Enum::Dtype),
};

constexpr Field requant[] = {
    NPU_ADDR(npu_cmd_requant, in_addr),
    NPU_ADDR(npu_cmd_requant, out_addr),
    NPU_F(npu_cmd_requant, count, U32, 1),
    NPU_F(npu_cmd_requant, multiplier, S32, 1),
    NPU_F(npu_cmd_requant, shift, S32, 1),
    NPU_F(npu_cmd_requant, in_zp, S32, 1),
    NPU_F(npu_cmd_requant, out_zp, S32, 1),
    NPU_F(npu_cmd_requant, clamp_min, S32, 1),
    NPU_F(npu_cmd_requant, clamp_max, S32, 1),
    NPU_F(npu_cmd_requant, in_dtype, U8, 1, Enum::Dtype),
    NPU_F(npu_cmd_requant, out_dtype, U8, 1, Enum::Dtype),
};

constexpr Field transpose[] = {
    NPU_ADDR(npu_cmd_transpose, in_addr),        NPU_ADDR(npu_cmd_transpose, out_addr),
    NPU_F(npu_cmd_transpose, in_shape, U32, 4),  NPU_F(npu_cmd_transpose, perm, U8, 4),
    NPU_F(npu_cmd_transpose, elem_size, U32, 1),
};

constexpr Field reduce[] = {
    NPU_F(npu_cmd_reduce, kind, U8, 1, Enum::ReduceKind),
    NPU_ADDR(npu_cmd_reduce, in_addr),
    NPU_ADDR(npu_cmd_reduce, out_addr),
    NPU_F(npu_cmd_reduce, outer, U32, 1),
    NPU_F(npu_cmd_reduce, len, U32, 1),
    NPU_F(npu_cmd_reduce, inner, U32, 1),
};

}  // namespace payload

#undef NPU_ADDR
#undef NPU_F

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

std::span<const Field> fields_of(uint8_t opcode) {
  switch (opcode) {
#define NPU_CONTROL(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, ...) \
  case NPU_OP_##ID:                                             \
    return payload::PAYLOAD;
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, ...) \
  case NPU_OP_##ID:                                          \
    return payload::PAYLOAD;
#include "npu/isa/opcodes.def"
    default:
      return {};
  }
}

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
