// Reference batched matrix multiply (NPU_OP_MATMUL semantics): row-major A [m][k] and
// B [k][n] (or [n][k] transposed), batch strides in elements (0 broadcasts), fp32 or integer
// with the same per-column quantization as CONV2D.
#pragma once

#include <cstdint>
#include <span>

#include "npu/expected.h"
#include "npu/ref/conv.h"
#include "npu/ref/tensor.h"
#include "npu_isa.h"

namespace npu::ref {

/// Geometry of a batched matmul: out[b] = A[b] x B[b] for b < batch, where operand X of batch
/// b starts at element b * x_batch_stride.
struct MatmulShape {
  uint32_t m = 1, k = 1, n = 1;
  uint32_t batch = 1;
  uint64_t a_batch_stride = 0, b_batch_stride = 0, out_batch_stride = 0;
  bool transpose_b = false;  // B stored [n][k]
};

/// Elements each operand spans (0 for an empty shape).
uint64_t matmul_a_extent(const MatmulShape& s);
uint64_t matmul_b_extent(const MatmulShape& s);
uint64_t matmul_out_extent(const MatmulShape& s);

/// Checks non-zero m, k, n, batch, non-overlapping output batches and that the operand spans
/// are large enough.
Expected<void> check_matmul(const MatmulShape& s, size_t a_size, size_t b_size, size_t out_size);

/// Integer matmul: acc[i][j] = sum_p (a[i][p] - a_zp) * (b[p][j] - chan[j].w_zp) + chan[j].bias;
/// outputs as conv2d_int (chan has n entries, one per column). TA, TB: int8_t or uint8_t;
/// TOut: int8_t, uint8_t or int32_t. o.in_zp is the A zero point.
template <typename TA, typename TB, typename TOut>
Expected<void> matmul_int(const MatmulShape& s, std::span<const TA> a, std::span<const TB> b,
                          std::span<const npu_chan_qparams> chan, const IntOutput& o,
                          std::span<TOut> out) {
  if (auto r = check_matmul(s, a.size(), b.size(), out.size()); !r) return r;
  if (auto r = check_size("matmul: channel params", chan.size(), s.n); !r) return r;
  for (uint64_t bt = 0; bt < s.batch; ++bt) {
    const uint64_t a0 = bt * s.a_batch_stride;
    const uint64_t b0 = bt * s.b_batch_stride;
    const uint64_t o0 = bt * s.out_batch_stride;
    for (uint64_t i = 0; i < s.m; ++i) {
      if (cancelled()) return make_error(ECANCELED, "matmul: cancelled");
      for (uint64_t j = 0; j < s.n; ++j) {
        const npu_chan_qparams& q = chan[j];
        int64_t acc = 0;
        for (uint64_t p = 0; p < s.k; ++p) {
          const uint64_t b_idx = s.transpose_b ? b0 + j * s.k + p : b0 + p * s.n + j;
          const int64_t av = static_cast<int64_t>(a[a0 + i * s.k + p]) - o.in_zp;
          const int64_t bv = static_cast<int64_t>(b[b_idx]) - q.w_zp;
          acc += av * bv;
        }
        acc += q.bias;
        out[o0 + i * s.n + j] = detail::finish_int<TOut>(acc, q, o);
      }
    }
  }
  return ok();
}

/// fp32 matmul: out[i][j] = clamp(sum_p a[i][p] * b[p][j] (p ascending, fp32 accumulation)
/// + bias[j] if bias is non-empty, fclamp_min, fclamp_max).
Expected<void> matmul_f32(const MatmulShape& s, std::span<const float> a, std::span<const float> b,
                          std::span<const float> bias, float fclamp_min, float fclamp_max,
                          std::span<float> out);

}  // namespace npu::ref
