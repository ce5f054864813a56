// Reference matmul: operand extents, checks and the fp32 loop nest.
#include "npu/ref/matmul.h"

namespace npu::ref {

namespace {
/// (batch - 1) * batch_stride + per_batch elements, saturating at UINT64_MAX.
uint64_t batched_extent(uint32_t batch, uint64_t batch_stride, uint64_t per_batch) {
  if (batch == 0 || per_batch == 0) return 0;
  uint64_t last = 0;
  uint64_t total = 0;
  if (__builtin_mul_overflow(uint64_t{batch - 1}, batch_stride, &last) ||
      __builtin_add_overflow(last, per_batch, &total)) {
    return UINT64_MAX;
  }
  return total;
}
}  // namespace

uint64_t matmul_a_extent(const MatmulShape& s) {
  return batched_extent(s.batch, s.a_batch_stride, uint64_t{s.m} * s.k);
}
uint64_t matmul_b_extent(const MatmulShape& s) {
  return batched_extent(s.batch, s.b_batch_stride, uint64_t{s.k} * s.n);
}
uint64_t matmul_out_extent(const MatmulShape& s) {
  return batched_extent(s.batch, s.out_batch_stride, uint64_t{s.m} * s.n);
}

Expected<void> check_matmul(const MatmulShape& s, size_t a_size, size_t b_size, size_t out_size) {
  if (s.m == 0 || s.k == 0 || s.n == 0 || s.batch == 0) {
    return make_error(EINVAL, "matmul: m, k, n and batch must be >= 1");
  }
  if (s.batch > 1 && s.out_batch_stride < uint64_t{s.m} * s.n) {
    return make_error(EINVAL, "matmul: out_batch_stride: batches overlap");
  }
  if (auto r = check_size("matmul: a", a_size, matmul_a_extent(s)); !r) return r;
  if (auto r = check_size("matmul: b", b_size, matmul_b_extent(s)); !r) return r;
  return check_size("matmul: out", out_size, matmul_out_extent(s));
}

Expected<void> matmul_f32(const MatmulShape& s, std::span<const float> a, std::span<const float> b,
                          std::span<const float> bias, float fclamp_min, float fclamp_max,
                          std::span<float> out) {
  if (auto r = check_matmul(s, a.size(), b.size(), out.size()); !r) return r;
  if (!bias.empty()) {
    if (auto r = check_size("matmul: bias", bias.size(), s.n); !r) return r;
  }
  for (uint64_t bt = 0; bt < s.batch; ++bt) {
    const uint64_t a0 = bt * s.a_batch_stride;
    const uint64_t b0 = bt * s.b_batch_stride;
    const uint64_t o0 = bt * s.out_batch_stride;
    for (uint64_t i = 0; i < s.m; ++i) {
      if (cancelled()) return make_error(ECANCELED, "matmul: cancelled");
      for (uint64_t j = 0; j < s.n; ++j) {
        float acc = 0.0f;
        for (uint64_t p = 0; p < s.k; ++p) {
          const uint64_t b_idx = s.transpose_b ? b0 + j * s.k + p : b0 + p * s.n + j;
          acc += a[a0 + i * s.k + p] * b[b_idx];
        }
        if (!bias.empty()) acc += bias[j];
        acc = acc < fclamp_min ? fclamp_min : acc;
        acc = acc > fclamp_max ? fclamp_max : acc;
        out[o0 + i * s.n + j] = acc;
      }
    }
  }
  return ok();
}

}  // namespace npu::ref
