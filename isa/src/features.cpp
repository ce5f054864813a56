// The FEATURES column of the opcode table: which NPU_FEATURE_* datapaths a command needs
// (docs/isa.md, "Features"). Control commands need none. The dispatch in command_features()
// is generated from npu/isa/opcodes.def.
#include <initializer_list>

#include "common.h"
#include "npu/isa/validate.h"
#include "semantics.h"

namespace npu::isa {
namespace detail {
namespace {

uint64_t fp32_if(uint8_t dtype) {
  return dtype == NPU_DTYPE_FP32 ? NPU_FEATURE_FP32 : 0;
}

/// NPU_FEATURE_FP16 when any of the dtypes is fp16 or bf16 (since 1.1).
uint64_t fp16_if(std::initializer_list<uint8_t> dtypes) {
  for (uint8_t d : dtypes) {
    if (dtype_is_half(d)) return NPU_FEATURE_FP16;
  }
  return 0;
}

/// The matrix datapath of an input dtype: fp32, the half array or int8.
uint64_t matrix_datapath(uint8_t in_dtype) {
  if (in_dtype == NPU_DTYPE_FP32) return NPU_FEATURE_FP32;
  if (dtype_is_half(in_dtype)) return NPU_FEATURE_FP16;
  return NPU_FEATURE_INT8;
}

}  // namespace

uint64_t features_dma(const npu_cmd_dma& c) {
  return c.dram_dtype != 0 || c.sram_dtype != 0 ? NPU_FEATURE_FP16 : 0;
}

uint64_t features_conv2d(const npu_cmd_conv2d& c) {
  return matrix_datapath(c.in_dtype) | fp16_if({c.w_dtype, c.out_dtype});
}

uint64_t features_matmul(const npu_cmd_matmul& c) {
  return matrix_datapath(c.a_dtype) | fp16_if({c.b_dtype, c.out_dtype});
}

uint64_t features_eltwise(const npu_cmd_eltwise& c) {
  const uint64_t f = fp32_if(c.dtype) | fp16_if({c.dtype});
  return c.op == NPU_ELTWISE_POW ? f | NPU_FEATURE_TRANSCENDENTAL : f;
}

uint64_t features_activation(const npu_cmd_activation& c) {
  const uint64_t f = (c.func != NPU_ACT_COPY ? fp32_if(c.dtype) : 0) | fp16_if({c.dtype});
  return act_needs_transcendental(c.func) ? f | NPU_FEATURE_TRANSCENDENTAL : f;
}

uint64_t features_pool(const npu_cmd_pool& c) {
  return fp32_if(c.dtype) | fp16_if({c.dtype});
}

uint64_t features_softmax(const npu_cmd_softmax&) {
  return NPU_FEATURE_FP32 | NPU_FEATURE_TRANSCENDENTAL;
}

uint64_t features_scale_shift(const npu_cmd_scale_shift&) {
  return NPU_FEATURE_FP32;
}

uint64_t features_quant(const npu_cmd_quant&) {
  return NPU_FEATURE_FP32;
}

uint64_t features_requant(const npu_cmd_requant&) {
  return 0;
}

uint64_t features_transpose(const npu_cmd_transpose&) {
  return 0;
}

uint64_t features_reduce(const npu_cmd_reduce&) {
  return NPU_FEATURE_FP32;
}

uint64_t features_moments(const npu_cmd_moments&) {
  return NPU_FEATURE_FP32;
}

}  // namespace detail

uint64_t command_features(const npu_cmd& cmd) {
  switch (cmd.hdr.opcode) {
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, FEATURES, ...) \
  case NPU_OP_##ID:                                                                  \
    return detail::FEATURES(cmd.PAYLOAD);
#include "npu/isa/opcodes.def"
    default:
      return 0;  // control commands and unknown opcodes
  }
}

uint64_t program_features(std::span<const npu_cmd> cmds) {
  uint64_t f = 0;
  for (const npu_cmd& c : cmds) f |= command_features(c);
  return f;
}

}  // namespace npu::isa
