// The ISA's element types (NPU_DTYPE_*): size, name and integer range, defined once for the
// validator, the builder, the reference operators and the engines.
#pragma once

#include <cstdint>
#include <limits>

#include "npu_isa.h"

namespace npu::isa {

/// Bytes of one element (0 for an unknown dtype).
constexpr uint32_t dtype_size(uint8_t dtype) {
  switch (dtype) {
    case NPU_DTYPE_INT8:
    case NPU_DTYPE_UINT8:
      return 1;
    case NPU_DTYPE_FP16:
    case NPU_DTYPE_BF16:
      return 2;
    case NPU_DTYPE_INT32:
    case NPU_DTYPE_FP32:
      return 4;
    default:
      return 0;
  }
}

/// Lowercase name ("int8"), or "unknown".
constexpr const char* dtype_name(uint8_t dtype) {
  switch (dtype) {
    case NPU_DTYPE_INT8:
      return "int8";
    case NPU_DTYPE_UINT8:
      return "uint8";
    case NPU_DTYPE_INT32:
      return "int32";
    case NPU_DTYPE_FP32:
      return "fp32";
    case NPU_DTYPE_FP16:
      return "fp16";
    case NPU_DTYPE_BF16:
      return "bf16";
    default:
      return "unknown";
  }
}

/// True for the floating-point dtypes (fp32, fp16, bf16).
constexpr bool dtype_is_float(uint8_t dtype) {
  return dtype == NPU_DTYPE_FP32 || dtype == NPU_DTYPE_FP16 || dtype == NPU_DTYPE_BF16;
}
/// True for the half-precision dtypes (fp16, bf16).
constexpr bool dtype_is_half(uint8_t dtype) {
  return dtype == NPU_DTYPE_FP16 || dtype == NPU_DTYPE_BF16;
}

/// Smallest / largest value of an integer dtype; other dtypes give the int32 range.
constexpr int32_t dtype_min(uint8_t dtype) {
  switch (dtype) {
    case NPU_DTYPE_INT8:
      return -128;
    case NPU_DTYPE_UINT8:
      return 0;
    default:
      return std::numeric_limits<int32_t>::min();
  }
}
constexpr int32_t dtype_max(uint8_t dtype) {
  switch (dtype) {
    case NPU_DTYPE_INT8:
      return 127;
    case NPU_DTYPE_UINT8:
      return 255;
    default:
      return std::numeric_limits<int32_t>::max();
  }
}

}  // namespace npu::isa
