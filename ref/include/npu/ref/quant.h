// Reference (de)quantization and requantization of contiguous tensors (NPU_OP_QUANTIZE,
// NPU_OP_DEQUANTIZE, NPU_OP_REQUANTIZE semantics), per tensor or per axis, built on the
// scalar rules of scalar.h.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "npu/expected.h"
#include "npu/ref/scalar.h"
#include "npu/ref/tensor.h"
#include "npu_isa.h"

namespace npu::ref {

/// Scale and zero point of a tensor: with channels <= 1 the per-tensor (scale, zp) apply;
/// otherwise element i uses params[(i / inner) % channels].
struct QuantParams {
  float scale = 1.0f;
  int32_t zp = 0;
  uint32_t channels = 1;
  uint32_t inner = 1;
  std::span<const npu_qparam> params;
};

/// Error unless per-axis params are consistent (inner >= 1, params.size() >= channels).
inline Expected<void> check_quant_params(const char* op, const QuantParams& p) {
  if (p.channels <= 1) return ok();
  if (p.inner == 0) return make_error(EINVAL, std::string(op) + ": inner must be >= 1");
  return check_size((std::string(op) + ": params").c_str(), p.params.size(), p.channels);
}

/// (scale, zp) of element i.
inline npu_qparam quant_param_at(const QuantParams& p, uint64_t i) {
  if (p.channels <= 1) return {p.scale, p.zp};
  return p.params[(i / p.inner) % p.channels];
}

/// out[i] = quantize(in[i], scale, zp, dtype range of T); T = int8_t or uint8_t.
template <typename T>
Expected<void> quantize_tensor(std::span<const float> in, std::span<T> out, const QuantParams& p) {
  if (auto r = check_quant_params("quantize", p); !r) return r;
  if (auto r = check_size("quantize: out", out.size(), in.size()); !r) return r;
  for (uint64_t i = 0; i < in.size(); ++i) {
    const npu_qparam q = quant_param_at(p, i);
    out[i] = static_cast<T>(
        quantize(in[i], q.scale, q.zp, dtype_min(dtype_of<T>()), dtype_max(dtype_of<T>())));
  }
  return ok();
}

/// out[i] = dequantize(in[i], scale, zp); T = int8_t, uint8_t or int32_t.
template <typename T>
Expected<void> dequantize_tensor(std::span<const T> in, std::span<float> out,
                                 const QuantParams& p) {
  if (auto r = check_quant_params("dequantize", p); !r) return r;
  if (auto r = check_size("dequantize: out", out.size(), in.size()); !r) return r;
  for (uint64_t i = 0; i < in.size(); ++i) {
    const npu_qparam q = quant_param_at(p, i);
    out[i] = dequantize(in[i], q.scale, q.zp);
  }
  return ok();
}

/// Requantization parameters of REQUANTIZE.
struct RequantParams {
  int32_t multiplier = 0;
  int32_t shift = 0;
  int32_t in_zp = 0;
  int32_t out_zp = 0;
  int32_t clamp_min = -128;
  int32_t clamp_max = 127;
};

/// out[i] = requantize(in[i] - in_zp, multiplier, shift, out_zp, clamp_min, clamp_max),
/// further clamped to the range of TOut. TIn = int8_t, uint8_t or int32_t; TOut = int8_t or
/// uint8_t.
template <typename TIn, typename TOut>
Expected<void> requantize_tensor(std::span<const TIn> in, std::span<TOut> out,
                                 const RequantParams& p) {
  if (auto r = check_size("requantize: out", out.size(), in.size()); !r) return r;
  const int32_t lo =
      p.clamp_min > dtype_min(dtype_of<TOut>()) ? p.clamp_min : dtype_min(dtype_of<TOut>());
  const int32_t hi =
      p.clamp_max < dtype_max(dtype_of<TOut>()) ? p.clamp_max : dtype_max(dtype_of<TOut>());
  for (uint64_t i = 0; i < in.size(); ++i) {
    const int64_t x = static_cast<int64_t>(in[i]) - p.in_zp;
    const int32_t y = requantize(x, p.multiplier, p.shift, p.out_zp, lo, hi);
    // An inconsistent clamp (lo > hi) can leave y outside TOut; saturate it back.
    out[i] = static_cast<TOut>(
        detail::clamp64(y, dtype_min(dtype_of<TOut>()), dtype_max(dtype_of<TOut>())));
  }
  return ok();
}

}  // namespace npu::ref
