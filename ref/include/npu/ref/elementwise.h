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
  map4(
      shape, out, [&](T x, T y) { return static_cast<T>(eltwise_int(op, x, y, dtype_of<T>())); }, a,
      b);
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
  map4(
      shape, out,
      [&](T x) { return static_cast<T>(activation_int(func, x, alpha, beta, dtype_of<T>())); }, in);
  return ok();
}

/// fp32 [outer][channels]: out[o][c] = in[o][c] * scale[c] + shift[c] (no fused multiply-add).
Expected<void> scale_shift_f32(uint32_t outer, uint32_t channels, std::span<const float> in,
                               std::span<const float> scale, std::span<const float> shift,
                               std::span<float> out);

}  // namespace npu::ref
