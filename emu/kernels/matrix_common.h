// Private helpers shared by CONV2D and MATMUL: per-channel quantization parameters, the
// integer output stage (bias, requantize or int32; quant_out.h is the GEMM's), the fp32
// output stage.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "half_convert.h"
#include "npu/isa/half.h"
#include "npu/ref/scalar.h"
#include "npu_isa.h"
#include "sram.h"

namespace npu::emu::kern {

/// Output stage of integer CONV2D / MATMUL for one output type.
struct QOutput {
  uint8_t dtype;
  int32_t out_zp, lo, hi;

  QOutput(uint8_t out_dtype, int32_t zp, int32_t clamp_min, int32_t clamp_max)
      : dtype(out_dtype),
        out_zp(zp),
        lo(std::max(clamp_min, ref::dtype_min(out_dtype))),
        hi(std::min(clamp_max, ref::dtype_max(out_dtype))) {}

  /// acc + bias, wrapping (exact whenever the accumulator is, i.e. on every fast path).
  static int64_t add(int64_t acc, int32_t bias) {
    return static_cast<int64_t>(static_cast<uint64_t>(acc) + static_cast<uint64_t>(int64_t{bias}));
  }

  /// Writes `count` outputs (element stride 1) from exact accumulators (bias not yet added).
  void store_row(std::byte* out, const int64_t* acc, const npu_chan_qparams* q,
                 size_t count) const {
    if (dtype == NPU_DTYPE_INT32) {
      for (size_t j = 0; j < count; ++j)
        sti<int32_t>(out, j, static_cast<int32_t>(add(acc[j], q[j].bias)));  // wraps (C++20)
    } else {
      auto* o = reinterpret_cast<uint8_t*>(out);
      for (size_t j = 0; j < count; ++j)
        o[j] = static_cast<uint8_t>(
            ref::requantize(add(acc[j], q[j].bias), q[j].multiplier, q[j].shift, out_zp, lo, hi));
    }
  }
};

inline std::vector<npu_chan_qparams> read_qparams(std::span<const std::byte> sram, uint32_t addr,
                                                  size_t count) {
  return read_array<npu_chan_qparams>(sram, addr, count);
}

/// fp32 output stage: + bias (optional), then clamp to [lo, hi] (NaN passes through).
inline void store_f32_row(std::byte* out, const float* acc, const float* bias, float lo, float hi,
                          size_t count) {
  for (size_t j = 0; j < count; ++j) {
    float y = bias != nullptr ? acc[j] + bias[j] : acc[j];
    y = y < lo ? lo : y;
    y = y > hi ? hi : y;
    sti<float>(out, j, y);
  }
}

/// Float output stage of the fp32 and half modes: + bias, clamp, then store as `out_dtype`
/// (fp32, or fp16/bf16 rounded to nearest even at the end; ISA 1.1).
inline void store_float_row(std::byte* out, uint8_t out_dtype, const float* acc, const float* bias,
                            float lo, float hi, size_t count) {
  if (out_dtype == NPU_DTYPE_FP32) return store_f32_row(out, acc, bias, lo, hi, count);
  narrow_half_clamped(acc, bias, lo, hi, out_dtype, count, out);
}

/// `count` elements of float dtype `dtype` (fp32, fp16 or bf16) at SRAM `addr` as fp32.
inline std::vector<float> read_float_array(std::span<const std::byte> sram, uint8_t dtype,
                                           uint64_t addr, size_t count) {
  if (dtype == NPU_DTYPE_FP32) return read_array<float>(sram, addr, count);
  std::vector<float> out(count);
  widen_half(sram.data() + addr, dtype, count, out.data());
  return out;
}

/// Reads element i of an integer tensor of `dtype` as int32.
inline int32_t ld_int(const std::byte* p, size_t i, uint8_t dtype) {
  switch (dtype) {
    case NPU_DTYPE_INT8:
      return ldi<int8_t>(p, i);
    case NPU_DTYPE_UINT8:
      return ldi<uint8_t>(p, i);
    default:
      return ldi<int32_t>(p, i);
  }
}

}  // namespace npu::emu::kern
