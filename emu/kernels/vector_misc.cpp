// The remaining VECTOR commands: SOFTMAX (max-subtracted), SCALE_SHIFT, QUANTIZE,
// DEQUANTIZE, REQUANTIZE (per-element semantics from npu/ref/scalar.h; QUANTIZE and 8-bit
// DEQUANTIZE 16 elements per AVX-512 instruction when that level is selected, cpu_isa.h, bit
// for bit the scalar rule), TRANSPOSE (4-D permutation, contiguous runs copied whole) and
// REDUCE over the middle axis (vectorized across the inner axis).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cpu_isa.h"
#include "npu/ref/scalar.h"
#include "ops.h"
#include "sram.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NPU_KERN_X86 1
#include <immintrin.h>
#endif

namespace npu::emu::kern {

void softmax(const npu_cmd_softmax& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  const size_t len = c.len;
  if (len == 0) return;
  std::vector<float> x(len);
  for (size_t r = 0; r < c.rows; ++r) {
    std::memcpy(x.data(), sram.data() + c.in_addr + r * len * 4, len * 4);
    float m = x[0];
    for (size_t i = 1; i < len; ++i) m = ref::eltwise(NPU_ELTWISE_MAX, m, x[i]);
    std::byte* out = sram.data() + c.out_addr + r * len * 4;
    double sum = 0.0;
    if ((c.hdr.flags & NPU_SOFTMAX_FLAG_LOG) != 0) {
      for (size_t i = 0; i < len; ++i) sum += std::exp(x[i] - m);
      const float lse = static_cast<float>(std::log(sum));
      for (size_t i = 0; i < len; ++i) sti<float>(out, i, (x[i] - m) - lse);
    } else {
      for (size_t i = 0; i < len; ++i) {
        x[i] = std::exp(x[i] - m);
        sum += x[i];
      }
      const float s = static_cast<float>(sum);
      for (size_t i = 0; i < len; ++i) sti<float>(out, i, x[i] / s);
    }
  }
}

void scale_shift(const npu_cmd_scale_shift& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  const size_t ch = c.channels;
  const std::vector<float> scale = read_array<float>(sram, c.scale_addr, ch);
  const std::vector<float> shift = read_array<float>(sram, c.shift_addr, ch);
  for (size_t o = 0; o < c.outer; ++o) {
    const std::byte* in = sram.data() + c.in_addr + o * ch * 4;
    std::byte* out = sram.data() + c.out_addr + o * ch * 4;
    for (size_t i = 0; i < ch; ++i) sti<float>(out, i, ldi<float>(in, i) * scale[i] + shift[i]);
  }
}

namespace {

/// Calls f(begin, end, scale, zp) over runs of elements sharing one (scale, zp).
template <class F>
void for_qparam_runs(const npu_cmd_quant& c, std::span<std::byte> sram, F&& f) {
  const size_t count = c.count;
  if (c.channels <= 1) return f(size_t{0}, count, c.scale, int32_t{c.zp});
  const std::vector<npu_qparam> q = read_array<npu_qparam>(sram, c.params_addr, c.channels);
  const size_t inner = std::max<size_t>(1, c.inner);
  for (size_t i0 = 0, blk = 0; i0 < count; i0 += inner, ++blk) {
    const npu_qparam& p = q[blk % c.channels];
    f(i0, std::min(count, i0 + inner), p.scale, int32_t{p.zp});
  }
}

#ifdef NPU_KERN_X86
#define NPU_QUANT512 "avx512f,avx512bw,avx512vl"
/// ref::quantize on n floats, 16 at a time: the same fp32 division, round half to even
/// (vrndscaleps), then the clamp, which commutes with + zp as lo <= hi are the dtype's
/// bounds: clamp(round(q) + zp, lo, hi) = clamp(round(q), lo - zp, hi - zp) + zp (exact
/// integers in fp32 for |zp| <= 2^23, which callers keep); NaN gives clamp(zp, lo, hi).
template <class T>
[[gnu::target(NPU_QUANT512)]] void quantize_avx512(const std::byte* in, std::byte* out, size_t n,
                                                   float scale, int32_t zp, int32_t lo,
                                                   int32_t hi) {
  const __m512 sv = _mm512_set1_ps(scale);
  const __m512 flo = _mm512_set1_ps(static_cast<float>(int64_t{lo} - zp));
  const __m512 fhi = _mm512_set1_ps(static_cast<float>(int64_t{hi} - zp));
  const __m512i zv = _mm512_set1_epi32(zp);
  const __m512i nan_value = _mm512_set1_epi32(std::clamp(zp, lo, hi));
  for (size_t i = 0; i < n; i += 16) {
    const size_t len = std::min<size_t>(16, n - i);
    const auto m = static_cast<__mmask16>((1u << len) - 1);
    const __m512 q = _mm512_div_ps(_mm512_maskz_loadu_ps(m, in + i * 4), sv);
    __m512 r = _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_min_ps(_mm512_max_ps(r, flo), fhi);
    __m512i v = _mm512_add_epi32(_mm512_cvtps_epi32(r), zv);
    v = _mm512_mask_mov_epi32(v, _mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q), nan_value);
    _mm512_mask_cvtepi32_storeu_epi8(out + i, m, v);  // in [lo, hi]: the low byte
  }
}

/// ref::dequantize on n 8-bit values: (float)(q - zp) * scale, the difference exact in int32
/// (callers keep |zp| <= 2^30).
template <class T>
[[gnu::target(NPU_QUANT512)]] void dequantize_avx512(const std::byte* in, std::byte* out, size_t n,
                                                     float scale, int32_t zp) {
  const __m512 sv = _mm512_set1_ps(scale);
  const __m512i zv = _mm512_set1_epi32(zp);
  for (size_t i = 0; i < n; i += 16) {
    const size_t len = std::min<size_t>(16, n - i);
    const auto m = static_cast<__mmask16>((1u << len) - 1);
    const __m128i b = _mm_maskz_loadu_epi8(m, in + i);
    const __m512i x = std::is_signed_v<T> ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
    const __m512 f = _mm512_cvtepi32_ps(_mm512_sub_epi32(x, zv));
    _mm512_mask_storeu_ps(out + i * 4, m, _mm512_mul_ps(f, sv));
  }
}
#undef NPU_QUANT512
#endif

template <class T>
void quantize_to(const npu_cmd_quant& c, std::span<std::byte> sram) {
  const std::byte* in = sram.data() + c.in_addr;
  std::byte* out = sram.data() + c.out_addr;
  const int32_t lo = ref::dtype_min(c.out_dtype), hi = ref::dtype_max(c.out_dtype);
#ifdef NPU_KERN_X86
  const bool vec = isa_at_least(Isa::Avx512);
#endif
  for_qparam_runs(c, sram, [&](size_t b, size_t e, float scale, int32_t zp) {
#ifdef NPU_KERN_X86
    if (vec && zp >= -(1 << 23) && zp <= (1 << 23))
      return quantize_avx512<T>(in + b * 4, out + b, e - b, scale, zp, lo, hi);
#endif
    for (size_t i = b; i < e; ++i)
      sti<T>(out, i, static_cast<T>(ref::quantize(ldi<float>(in, i), scale, zp, lo, hi)));
  });
}

template <class T>
void dequantize_from(const npu_cmd_quant& c, std::span<std::byte> sram) {
  const std::byte* in = sram.data() + c.in_addr;
  std::byte* out = sram.data() + c.out_addr;
#ifdef NPU_KERN_X86
  const bool vec = sizeof(T) == 1 && isa_at_least(Isa::Avx512);
#endif
  for_qparam_runs(c, sram, [&](size_t b, size_t e, float scale, int32_t zp) {
#ifdef NPU_KERN_X86
    if constexpr (sizeof(T) == 1)
      if (vec && zp >= -(1 << 30) && zp <= (1 << 30))
        return dequantize_avx512<T>(in + b, out + b * 4, e - b, scale, zp);
#endif
    for (size_t i = b; i < e; ++i) sti<float>(out, i, ref::dequantize(ldi<T>(in, i), scale, zp));
  });
}

template <class Tin, class Tout>
void requantize_typed(const npu_cmd_requant& c, std::span<std::byte> sram) {
  const std::byte* in = sram.data() + c.in_addr;
  std::byte* out = sram.data() + c.out_addr;
  const int32_t lo = std::max(c.clamp_min, ref::dtype_min(c.out_dtype));
  const int32_t hi = std::min(c.clamp_max, ref::dtype_max(c.out_dtype));
  const int64_t in_zp = c.in_zp;
  for (size_t i = 0; i < c.count; ++i)
    sti<Tout>(out, i,
              static_cast<Tout>(ref::requantize(int64_t{ldi<Tin>(in, i)} - in_zp, c.multiplier,
                                                c.shift, c.out_zp, lo, hi)));
}

template <class Tin>
void requantize_from(const npu_cmd_requant& c, std::span<std::byte> sram) {
  if (c.out_dtype == NPU_DTYPE_UINT8)
    requantize_typed<Tin, uint8_t>(c, sram);
  else
    requantize_typed<Tin, int8_t>(c, sram);
}

template <class T>
void transpose_typed(const npu_cmd_transpose& c, std::span<std::byte> sram) {
  uint64_t in_st[4];
  in_st[3] = 1;
  for (int d = 2; d >= 0; --d) in_st[d] = in_st[d + 1] * c.in_shape[d + 1];
  uint64_t od[4], st[4];
  for (int d = 0; d < 4; ++d) {
    const unsigned p = c.perm[d] & 3u;
    od[d] = c.in_shape[p];
    st[d] = in_st[p];
  }
  const std::byte* in = sram.data() + c.in_addr;
  std::byte* out = sram.data() + c.out_addr;
  uint64_t o = 0;
  for (uint64_t i0 = 0; i0 < od[0]; ++i0)
    for (uint64_t i1 = 0; i1 < od[1]; ++i1)
      for (uint64_t i2 = 0; i2 < od[2]; ++i2) {
        const std::byte* src = in + (i0 * st[0] + i1 * st[1] + i2 * st[2]) * sizeof(T);
        std::byte* dst = out + o * sizeof(T);
        if (st[3] == 1) {
          std::memcpy(dst, src, od[3] * sizeof(T));
        } else {
          for (uint64_t i3 = 0; i3 < od[3]; ++i3) sti<T>(dst, i3, ldi<T>(src, i3 * st[3]));
        }
        o += od[3];
      }
}

template <uint8_t kKind>
void reduce_kind(const npu_cmd_reduce& c, std::span<std::byte> sram) {
  const size_t len = c.len, inner = c.inner;
  std::vector<float> acc(inner);
  for (size_t o = 0; o < c.outer; ++o) {
    const std::byte* in = sram.data() + c.in_addr + o * len * inner * 4;
    std::byte* out = sram.data() + c.out_addr + o * inner * 4;
    if (len == 0) {
      std::fill(acc.begin(), acc.end(), 0.0f);
    } else {
      for (size_t i = 0; i < inner; ++i) acc[i] = ldi<float>(in, i);
      for (size_t l = 1; l < len; ++l) {
        const std::byte* row = in + l * inner * 4;
        for (size_t i = 0; i < inner; ++i) {
          const float v = ldi<float>(row, i);
          if constexpr (kKind == NPU_REDUCE_MAX)
            acc[i] = ref::eltwise(NPU_ELTWISE_MAX, acc[i], v);
          else if constexpr (kKind == NPU_REDUCE_MIN)
            acc[i] = ref::eltwise(NPU_ELTWISE_MIN, acc[i], v);
          else
            acc[i] += v;
        }
      }
    }
    if constexpr (kKind == NPU_REDUCE_MEAN) {
      const float d = static_cast<float>(len);
      for (size_t i = 0; i < inner; ++i) acc[i] /= d;
    }
    std::memcpy(out, acc.data(), inner * 4);
  }
}

/// MOMENTS: both sums in one pass over each row of the input, in the reference's order
/// (ascending l per output element; ref::moments_f32).
void moments_rows(const npu_cmd_moments& c, std::span<std::byte> sram) {
  const size_t len = c.len, inner = c.inner;
  std::vector<float> sum(inner), sum_sq(inner);
  const float n = static_cast<float>(len);
  for (size_t o = 0; o < c.outer; ++o) {
    const std::byte* in = sram.data() + c.in_addr + o * len * inner * 4;
    for (size_t i = 0; i < inner; ++i) {
      const float x = ldi<float>(in, i);
      sum[i] = x;
      sum_sq[i] = x * x;
    }
    for (size_t l = 1; l < len; ++l) {
      const std::byte* row = in + l * inner * 4;
      for (size_t i = 0; i < inner; ++i) {
        const float x = ldi<float>(row, i);
        sum[i] += x;
        sum_sq[i] += x * x;
      }
    }
    for (size_t i = 0; i < inner; ++i) {
      sum[i] /= n;
      sum_sq[i] /= n;
    }
    std::memcpy(sram.data() + c.mean_addr + o * inner * 4, sum.data(), inner * 4);
    std::memcpy(sram.data() + c.sq_addr + o * inner * 4, sum_sq.data(), inner * 4);
  }
}

}  // namespace

void quantize(const npu_cmd_quant& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  if (c.out_dtype == NPU_DTYPE_UINT8)
    quantize_to<uint8_t>(c, sram);
  else
    quantize_to<int8_t>(c, sram);
}

void dequantize(const npu_cmd_quant& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  switch (c.in_dtype) {
    case NPU_DTYPE_INT8:
      return dequantize_from<int8_t>(c, sram);
    case NPU_DTYPE_UINT8:
      return dequantize_from<uint8_t>(c, sram);
    default:
      return dequantize_from<int32_t>(c, sram);
  }
}

void requantize(const npu_cmd_requant& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  switch (c.in_dtype) {
    case NPU_DTYPE_INT8:
      return requantize_from<int8_t>(c, sram);
    case NPU_DTYPE_UINT8:
      return requantize_from<uint8_t>(c, sram);
    default:
      return requantize_from<int32_t>(c, sram);
  }
}

void transpose(const npu_cmd_transpose& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  switch (c.elem_size) {
    case 1:
      return transpose_typed<uint8_t>(c, sram);
    case 2:
      return transpose_typed<uint16_t>(c, sram);
    default:
      return transpose_typed<uint32_t>(c, sram);
  }
}

void reduce(const npu_cmd_reduce& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  switch (c.kind) {
    case NPU_REDUCE_SUM:
      return reduce_kind<NPU_REDUCE_SUM>(c, sram);
    case NPU_REDUCE_MEAN:
      return reduce_kind<NPU_REDUCE_MEAN>(c, sram);
    case NPU_REDUCE_MAX:
      return reduce_kind<NPU_REDUCE_MAX>(c, sram);
    case NPU_REDUCE_MIN:
      return reduce_kind<NPU_REDUCE_MIN>(c, sram);
    default:
      break;
  }
}

void moments(const npu_cmd_moments& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  if (c.len != 0) moments_rows(c, sram);  // validation requires len >= 1
}

}  // namespace npu::emu::kern
