// Private helpers of libnpuisa: dtype sizes, activation classes, hex formatting and checked
// arithmetic shared by the regions, validator, timing model, builder and disassembler.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "npu/isa/dtype.h"
#include "npu_isa.h"

namespace npu::isa::detail {

using isa::dtype_name;
using isa::dtype_size;

/// Activation functions and eltwise ops that need NPU_FEATURE_TRANSCENDENTAL.
constexpr bool act_needs_transcendental(uint8_t func) {
  switch (func) {
    case NPU_ACT_SIGMOID:
    case NPU_ACT_TANH:
    case NPU_ACT_GELU:
    case NPU_ACT_EXP:
    case NPU_ACT_LOG:
    case NPU_ACT_ERF:
    case NPU_ACT_SOFTPLUS:
    case NPU_ACT_ELU:
      return true;
    default:
      return false;
  }
}

/// "0x1f": how error messages and the disassembler print raw bits.
inline std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

/// Overflow-checked u64 arithmetic: returns false on overflow.
inline bool mul(uint64_t a, uint64_t b, uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}
inline bool add(uint64_t a, uint64_t b, uint64_t& out) {
  return !__builtin_add_overflow(a, b, &out);
}

/// Saturating u64 arithmetic for the timing model (validated commands never saturate in
/// practice; saturation keeps absurd inputs well-defined).
inline uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline uint64_t sat_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}
inline uint64_t ceil_div(uint64_t a, uint64_t b) {
  return b == 0 ? 0 : a / b + (a % b != 0);
}

}  // namespace npu::isa::detail
