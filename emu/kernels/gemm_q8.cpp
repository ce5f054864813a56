// Quantized GEMM tile kernels (exact int32 dot products of uint8 A rows and int8 B panels)
// and run-time ISA selection. AVX-512 VNNI: vpdpbusd on panels [k/4][32][4] (or [k/4][16][4]
// for B of 16 or fewer columns past a multiple of 32); otherwise a
// portable broadcast-multiply kernel on int16 panels [k][16], compiled twice (baseline and
// AVX2) and left to the auto-vectorizer.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "gemm.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NPU_KERN_X86 1
#include <immintrin.h>
#endif

namespace npu::emu::kern {
namespace {

// ---------------------------------------------------------------------- portable kernel

constexpr size_t kPortMR = 4;
constexpr size_t kPortNR = 16;

void pack_portable(const int8_t* b, size_t ldb, size_t nvalid, size_t k, size_t kp,
                   std::byte* panel) {
  auto* out = reinterpret_cast<int16_t*>(panel);  // Scratch storage: new[]-aligned
  for (size_t kk = 0; kk < kp; ++kk)
    for (size_t j = 0; j < kPortNR; ++j)
      out[kk * kPortNR + j] = (j < nvalid && kk < k) ? b[j * ldb + kk] : int16_t{0};
}

[[gnu::always_inline]] inline void block_portable_impl(const uint8_t* a, size_t lda, size_t rows,
                                                       const std::byte* panel, size_t k0, size_t kc,
                                                       int32_t* c, size_t ldc) {
  const auto* bp = reinterpret_cast<const int16_t*>(panel) + k0 * kPortNR;
  for (size_t r0 = 0; r0 < rows; r0 += kPortMR) {
    int32_t acc[kPortMR][kPortNR] = {};
    const uint8_t* ar = a + r0 * lda + k0;
    for (size_t kk = 0; kk < kc; ++kk) {
      const int16_t* bk = bp + kk * kPortNR;
      for (size_t i = 0; i < kPortMR; ++i) {
        const int32_t av = ar[i * lda + kk];
        for (size_t j = 0; j < kPortNR; ++j) acc[i][j] += av * bk[j];
      }
    }
    for (size_t i = 0; i < kPortMR; ++i) std::memcpy(c + (r0 + i) * ldc, acc[i], sizeof(acc[i]));
  }
}

void block_portable(const uint8_t* a, size_t lda, size_t rows, const std::byte* panel, size_t k0,
                    size_t kc, int32_t* c, size_t ldc) {
  block_portable_impl(a, lda, rows, panel, k0, kc, c, ldc);
}

constexpr Q8Kernel kPortable{kPortMR,       kPortNR,       1, kPortNR * sizeof(int16_t),
                             pack_portable, block_portable};

#ifdef NPU_KERN_X86
[[gnu::target("avx2")]] void block_avx2(const uint8_t* a, size_t lda, size_t rows,
                                        const std::byte* panel, size_t k0, size_t kc, int32_t* c,
                                        size_t ldc) {
  block_portable_impl(a, lda, rows, panel, k0, kc, c, ldc);
}
constexpr Q8Kernel kAvx2{kPortMR, kPortNR, 1, kPortNR * sizeof(int16_t), pack_portable, block_avx2};

// ------------------------------------------------------------------ AVX-512 VNNI kernel

// Panels of NR = 32 columns (two vectors) for a 6-row tile, or of 16 (one vector) for a 12-row
// tile when 32-wide panels would pad more columns (n mod 32 in 1..16: a compiler's
// output-channel slices of 16, 48, ...). Integer sums are exact, so the shape changes no bit.
template <size_t NR>
void pack_vnni(const int8_t* b, size_t ldb, size_t nvalid, size_t k, size_t kp, std::byte* panel) {
  auto* out = reinterpret_cast<int8_t*>(panel);
  for (size_t g = 0; g < kp / 4; ++g)
    for (size_t j = 0; j < NR; ++j)
      for (size_t t = 0; t < 4; ++t) {
        const size_t kk = g * 4 + t;
        out[(g * NR + j) * 4 + t] = (j < nvalid && kk < k) ? b[j * ldb + kk] : int8_t{0};
      }
}

template <size_t MR, size_t NV>
[[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni"), gnu::always_inline]] inline void
block_vnni_impl(const uint8_t* a, size_t lda, size_t rows, const std::byte* panel, size_t k0,
                size_t kc, int32_t* c, size_t ldc) {
  constexpr size_t NR = NV * 16;
  const auto* bp = reinterpret_cast<const int8_t*>(panel) + k0 * NR;
  const size_t groups = kc / 4;
  for (size_t r0 = 0; r0 < rows; r0 += MR) {
    __m512i acc[MR][NV];
#pragma GCC unroll 12
    for (size_t i = 0; i < MR; ++i)
#pragma GCC unroll 2
      for (size_t v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_si512();
    const uint8_t* ar = a + r0 * lda + k0;
    for (size_t g = 0; g < groups; ++g) {
      __m512i b[NV];
#pragma GCC unroll 2
      for (size_t v = 0; v < NV; ++v) b[v] = _mm512_loadu_si512(bp + g * NR * 4 + v * 64);
#pragma GCC unroll 12
      for (size_t i = 0; i < MR; ++i) {
        int32_t a4;
        std::memcpy(&a4, ar + i * lda + g * 4, 4);
        const __m512i av = _mm512_set1_epi32(a4);
#pragma GCC unroll 2
        for (size_t v = 0; v < NV; ++v) acc[i][v] = _mm512_dpbusd_epi32(acc[i][v], av, b[v]);
      }
    }
#pragma GCC unroll 12
    for (size_t i = 0; i < MR; ++i)
#pragma GCC unroll 2
      for (size_t v = 0; v < NV; ++v) _mm512_storeu_si512(c + (r0 + i) * ldc + v * 16, acc[i][v]);
  }
}

[[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni")]] void block_vnni(const uint8_t* a,
                                                                        size_t lda, size_t rows,
                                                                        const std::byte* panel,
                                                                        size_t k0, size_t kc,
                                                                        int32_t* c, size_t ldc) {
  block_vnni_impl<6, 2>(a, lda, rows, panel, k0, kc, c, ldc);
}

[[gnu::target("avx512f,avx512bw,avx512vl,avx512vnni")]] void block_vnni_n16(
    const uint8_t* a, size_t lda, size_t rows, const std::byte* panel, size_t k0, size_t kc,
    int32_t* c, size_t ldc) {
  block_vnni_impl<12, 1>(a, lda, rows, panel, k0, kc, c, ldc);
}

constexpr Q8Kernel kVnni{6, 32, 4, 32, pack_vnni<32>, block_vnni};
constexpr Q8Kernel kVnniN16{12, 16, 4, 16, pack_vnni<16>, block_vnni_n16};
#endif

Isa env_isa() {
  const char* e = std::getenv("NPU_EMU_ISA");  // NOLINT(concurrency-mt-unsafe): read once
  if (e == nullptr) return Isa::Auto;
  const std::string_view s(e);
  if (s == "portable") return Isa::Portable;
  if (s == "avx2") return Isa::Avx2;
  if (s == "avx512") return Isa::Avx512;
  return Isa::Auto;
}

Isa best_isa() {
#ifdef NPU_KERN_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
#endif
  return Isa::Portable;
}

std::atomic<Isa>& forced_isa() {
  static std::atomic<Isa> isa{env_isa()};
  return isa;
}

}  // namespace

// Shared with gemm_f32.cpp.
Isa selected_isa() {
  static const Isa best = best_isa();
  const Isa want = forced_isa().load(std::memory_order_relaxed);
  if (want == Isa::Auto) return best;
  return static_cast<uint8_t>(want) < static_cast<uint8_t>(best) ? want : best;
}

void set_kernel_isa(Isa isa) {
  forced_isa().store(isa, std::memory_order_relaxed);
}

const Q8Kernel& q8_kernel(size_t n) {
#ifdef NPU_KERN_X86
  if (selected_isa() == Isa::Avx512 && n % 32 != 0 && n % 32 <= 16) return kVnniN16;
#endif
  return q8_kernel();
}

const Q8Kernel& q8_kernel() {
  switch (selected_isa()) {
#ifdef NPU_KERN_X86
    case Isa::Avx512:
      return kVnni;
    case Isa::Avx2:
      return kAvx2;
#endif
    default:
      return kPortable;
  }
}

PackedQ8::PackedQ8(const int8_t* b, size_t ldb, size_t n, size_t k, std::span<const int32_t> zp)
    : kern_(&q8_kernel(n)),
      n_(n),
      k_(k),
      kp_((k + kern_->kalign - 1) / kern_->kalign * kern_->kalign),
      panels_((n + kern_->nr - 1) / kern_->nr),
      data_(panels_ * kp_ * kern_->panel_bytes_per_k),
      colsum_(n),
      zp_(zp.begin(), zp.end()) {
  for (size_t j = 0; j < n; ++j) {
    int64_t s = 0;
    for (size_t i = 0; i < k; ++i) s += b[j * ldb + i];
    colsum_[j] = s;
  }
  for (size_t p = 0; p < panels_; ++p)
    kern_->pack(b + p * kern_->nr * ldb, ldb, std::min(kern_->nr, n - p * kern_->nr), k, kp_,
                data_.get() + p * kp_ * kern_->panel_bytes_per_k);
}

}  // namespace npu::emu::kern
