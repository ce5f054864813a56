// Batched MATMUL: out[b] = A[b] x B[b] (B optionally stored transposed), through the packed
// GEMMs of gemm.h. A broadcast B (batch stride 0) is packed once for all batches.
#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "cancel.h"
#include "gemm.h"
#include "gemm_q8.h"
#include "matrix_common.h"
#include "npu/isa/dtype.h"
#include "ops.h"
#include "quant_out.h"

namespace npu::emu::kern {
namespace {

/// The float modes: fp32, and (ISA 1.1) fp16/bf16, whose A rows are widened block by block
/// and B as it is packed into fp32 (exact), through the same fp32 GEMM; a half output is
/// rounded to nearest even at the end.
void matmul_f32(const npu_cmd_matmul& c, std::span<std::byte> sram) {
  const size_t m = c.m, k = c.k, n = c.n;
  const uint8_t adt = c.a_dtype, bdt = c.b_dtype, odt = c.out_dtype;
  const size_t aes = isa::dtype_size(adt), bes = isa::dtype_size(bdt), oes = isa::dtype_size(odt);
  std::vector<float> bias;
  if ((c.hdr.flags & NPU_MM_FLAG_BIAS) != 0) bias = read_array<float>(sram, c.chan_addr, n);
  const float* bp = bias.empty() ? nullptr : bias.data();
  std::optional<PackedF32> packed;
  for (size_t bt = 0; bt < c.batch; ++bt) {
    const std::byte* a = sram.data() + c.a_addr + bt * size_t{c.a_batch_stride} * aes;
    const std::byte* b = sram.data() + c.b_addr + bt * size_t{c.b_batch_stride} * bes;
    std::byte* out = sram.data() + c.out_addr + bt * size_t{c.out_batch_stride} * oes;
    if (!packed || c.b_batch_stride != 0) {
      if ((c.hdr.flags & NPU_MM_FLAG_TRANSPOSE_B) != 0)
        packed.emplace(b, bdt, k, n, k);  // already rows [n][k]: packed straight from SRAM
      else
        packed.emplace(PackedF32::KMajor{}, b, bdt, n, n, k);  // [k][n]: rows into panels
    }
    gemm_f32(
        *packed, m,
        [&](size_t m0, size_t r, float* dst, size_t lda) {
          rows_as_f32(dst, lda, a + m0 * k * aes, adt, k, r);
        },
        [&](size_t m0, size_t r, const float* acc, size_t ldc) {
          for (size_t i = 0; i < r; ++i)
            store_float_row(out + (m0 + i) * n * oes, odt, acc + i * ldc, bp, c.fclamp_min,
                            c.fclamp_max, n);
        },
        worth_splitting(m, n, k) && !ranges_overlap(reinterpret_cast<uintptr_t>(a), m * k * aes,
                                                    reinterpret_cast<uintptr_t>(out), m * n * oes),
        adt == NPU_DTYPE_FP32 && aligned4(a) ? reinterpret_cast<const float*>(a) : nullptr);
  }
}

/// Direct loop in wrapping 64-bit arithmetic for parameters outside the GEMM's bounds.
void matmul_q_direct(const npu_cmd_matmul& c, std::span<std::byte> sram,
                     const std::vector<npu_chan_qparams>& q, const QOutput& qo) {
  const size_t m = c.m, k = c.k, n = c.n;
  const bool tb = (c.hdr.flags & NPU_MM_FLAG_TRANSPOSE_B) != 0;
  const size_t oes = isa::dtype_size(qo.dtype);
  std::vector<int64_t> acc(n);
  for (size_t bt = 0; bt < c.batch; ++bt) {
    const std::byte* a = sram.data() + c.a_addr + bt * size_t{c.a_batch_stride};
    const std::byte* b = sram.data() + c.b_addr + bt * size_t{c.b_batch_stride};
    std::byte* out = sram.data() + c.out_addr + bt * size_t{c.out_batch_stride} * oes;
    for (size_t i = 0; i < m && !cancelled(); ++i) {
      for (size_t j = 0; j < n; ++j) {
        uint64_t s = 0;
        for (size_t kk = 0; kk < k; ++kk) {
          const int64_t av = ld_int(a, i * k + kk, c.a_dtype) - int64_t{c.a_zp};
          const int64_t bv = ld_int(b, tb ? j * k + kk : kk * n + j, c.b_dtype) - q[j].w_zp;
          s += static_cast<uint64_t>(av) * static_cast<uint64_t>(bv);
        }
        acc[j] = static_cast<int64_t>(s);
      }
      qo.store_row(out + i * n * oes, acc.data(), q.data(), n);
    }
  }
}

void matmul_q(const npu_cmd_matmul& c, std::span<std::byte> sram) {
  const size_t m = c.m, k = c.k, n = c.n;
  const std::vector<npu_chan_qparams> q = read_qparams(sram, c.chan_addr, n);
  const QOutput qo(c.out_dtype, c.out_zp, c.clamp_min, c.clamp_max);
  const bool a_signed = c.a_dtype == NPU_DTYPE_INT8;
  const int64_t azp = c.a_zp;  // in A's own domain
  std::vector<int32_t> wzp(n);
  for (size_t j = 0; j < n; ++j) wzp[j] = q[j].w_zp;
  if (!q8_gemm_ok(a_signed, azp, wzp, k)) return matmul_q_direct(c, sram, q, qo);

  const bool tb = (c.hdr.flags & NPU_MM_FLAG_TRANSPOSE_B) != 0;
  const size_t oes = isa::dtype_size(qo.dtype);
  const Q8Kernel& kr = q8_kernel(n);
  const PackedQ8::Layout layout{n, 1, k, c.b_dtype == NPU_DTYPE_INT8, a_signed};
  std::optional<PackedQ8> packed;
  std::optional<QuantOut> qout;
  for (size_t bt = 0; bt < c.batch; ++bt) {
    const auto* a =
        reinterpret_cast<const uint8_t*>(sram.data() + c.a_addr + bt * size_t{c.a_batch_stride});
    const auto* b =
        reinterpret_cast<const uint8_t*>(sram.data() + c.b_addr + bt * size_t{c.b_batch_stride});
    std::byte* out = sram.data() + c.out_addr + bt * size_t{c.out_batch_stride} * oes;
    if (!packed || c.b_batch_stride != 0) {
      if (tb)
        packed.emplace(kr, layout, b, k, wzp);
      else
        packed.emplace(PackedQ8::KMajor{}, kr, layout, b, n, wzp);
      qout.emplace(qo, q.data(), *packed, azp);
    }
    const auto store = [&](size_t m0, size_t r, QSums s) {
      std::array<int64_t, kGemmMB> rowsums;  // a block has at most kGemmMB rows
      if (qout->needs_rowsum())
        for (size_t i = 0; i < r; ++i) rowsums[i] = q8_row_sum(a + (m0 + i) * k, k, a_signed);
      qout->rows(out + m0 * n * oes, n * oes, s, r,
                 qout->needs_rowsum() ? rowsums.data() : nullptr);
    };
    const bool split =
        worth_splitting(m, n, k) && !ranges_overlap(reinterpret_cast<uintptr_t>(a), m * k,
                                                    reinterpret_cast<uintptr_t>(out), m * n * oes);
    if (k % 4 == 0) {  // A's rows read where they lie
      gemm_q8_taps(
          *packed, m, static_cast<uint8_t>(azp),
          [&](size_t m0, size_t r, const uint8_t** table, size_t, const uint8_t*) {
            for (size_t i = 0; i < r; ++i) table[i] = a + (m0 + i) * k;
          },
          store, split);
    } else {
      gemm_q8_rows(
          *packed, m, k,
          [&](size_t m0, size_t r, uint8_t* dst, size_t lda) {
            for (size_t i = 0; i < r; ++i) std::memcpy(dst + i * lda, a + (m0 + i) * k, k);
          },
          store, split);
    }
  }
}

}  // namespace

void matmul(const npu_cmd_matmul& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  if (c.m == 0 || c.n == 0 || c.batch == 0) return;
  if (isa::dtype_is_float(c.a_dtype))
    matmul_f32(c, sram);
  else
    matmul_q(c, sram);
}

}  // namespace npu::emu::kern
