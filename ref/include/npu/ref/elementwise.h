// Reference elementwise operators over strided 4-D views: binary ELTWISE with broadcasting
// through zero strides, unary ACTIVATION, and per-channel SCALE_SHIFT. Each element is
// computed by the scalar rules of scalar.h.
#pragma once

#include <cstdint>
#include <span>

#include "npu/expected.h"
#include "npu/ref/scalar.h"
#include "npu/ref/tensor.h"

namespace npu::ref {

/// out[i] = eltwise(op, a[i], b[i]) for every index i of `shape` (fp32).
Expected<void> eltwise_f32(uint8_t op, const Dims4& shape, const View4<const float>& a,
                           const View4<const float>& b, const View4<float>& out);

/// out[i] = eltwise_int(op, a[i], b[i], dtype_of<T>()) (int32 wrapping, int8/uint8 saturating).
template <typename T>
Expected<void> eltwise_int_tensor(uint8_t op, const Dims4& shape, const View4<const T>& a,
                                  const View4<const T>& b, const View4<T>& out) {
  if (auto r = check_view("eltwise: a", a, shape); !r) return r;
  if (auto r = check_view("eltwise: b", b, shape); !r) return r;
  if (auto r = check_out_view("eltwise: out", out, shape); !r) return r;
  for (uint64_t i0 = 0; i0 < shape[0]; ++i0) {
    for (uint64_t i1 = 0; i1 < shape[1]; ++i1) {
      for (uint64_t i2 = 0; i2 < shape[2]; ++i2) {
        for (uint64_t i3 = 0; i3 < shape[3]; ++i3) {
          out.at(i0, i1, i2, i3) = static_cast<T>(
              eltwise_int(op, a.at(i0, i1, i2, i3), b.at(i0, i1, i2, i3), dtype_of<T>()));
        }
      }
    }
  }
  return ok();
}

/// out[i] = activation(func, in[i], alpha, beta) (fp32).
Expected<void> activation_f32(uint8_t func, float alpha, float beta, const Dims4& shape,
                              const View4<const float>& in, const View4<float>& out);

/// out[i] = activation_int(func, in[i], alpha, beta, dtype_of<T>()).
template <typename T>
Expected<void> activation_int_tensor(uint8_t func, float alpha, float beta, const Dims4& shape,
                                     const View4<const T>& in, const View4<T>& out) {
  if (auto r = check_view("activation: in", in, shape); !r) return r;
  if (auto r = check_out_view("activation: out", out, shape); !r) return r;
  for (uint64_t i0 = 0; i0 < shape[0]; ++i0) {
    for (uint64_t i1 = 0; i1 < shape[1]; ++i1) {
      for (uint64_t i2 = 0; i2 < shape[2]; ++i2) {
        for (uint64_t i3 = 0; i3 < shape[3]; ++i3) {
          out.at(i0, i1, i2, i3) = static_cast<T>(
              activation_int(func, in.at(i0, i1, i2, i3), alpha, beta, dtype_of<T>()));
        }
      }
    }
  }
  return ok();
}

/// fp32 [outer][channels]: out[o][c] = in[o][c] * scale[c] + shift[c] (no fused multiply-add).
Expected<void> scale_shift_f32(uint32_t outer, uint32_t channels, std::span<const float> in,
                               std::span<const float> scale, std::span<const float> shift,
                               std::span<float> out);

}  // namespace npu::ref
