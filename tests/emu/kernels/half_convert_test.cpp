// half_convert.h against npu/isa/half.h's scalar functions, bit for bit: every fp16 and bf16
// pattern widened; for narrowing, every top 16 bits of an fp32 pattern with low halves that
// sit on, beside and between the rounding points of both types (ties to even, the subnormal
// range, overflow to infinity, NaN payloads). Lengths that leave tails and unaligned pointers
// go through the same checks, and the forced-scalar switch is checked to change nothing; the
// matrix engine's half output stage (bias, clamp, round in one pass) against the scalar steps.
#include "half_convert.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "npu/isa/half.h"
#include "npu_isa.h"

namespace npu::emu::kern {
namespace {

constexpr uint8_t kHalfTypes[] = {NPU_DTYPE_FP16, NPU_DTYPE_BF16};

/// Every top half with these low halves: exact, one ulp below / at / above the fp16 tie (bit
/// 12), at the bf16 tie (bit 15), all ones.
std::vector<uint32_t> fp32_patterns() {
  const uint32_t lows[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff,
                           0x2000, 0x7fff, 0x8000, 0x8001, 0xa5a5, 0xffff};
  std::vector<uint32_t> v;
  v.reserve(65536 * std::size(lows));
  for (uint32_t hi = 0; hi < 65536; ++hi)
    for (const uint32_t lo : lows) v.push_back(hi << 16 | lo);
  return v;
}

class HalfConvert : public ::testing::TestWithParam<bool> {  // param: force the scalar loops
 protected:
  void SetUp() override { set_half_convert_scalar(GetParam()); }
  void TearDown() override { set_half_convert_scalar(false); }
};

TEST_P(HalfConvert, WidensEveryPatternAsTheScalarFunction) {
  for (const uint8_t dt : kHalfTypes) {
    std::vector<uint16_t> h(65536);
    for (uint32_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint16_t>(i);
    // Whole, and in runs of 96 (a signaling NaN hands the rest of a call to the scalar loop:
    // runs make the vector loops see every pattern outside the runs that hold one).
    for (const size_t run : {h.size(), size_t{96}}) {
      std::vector<float> got(h.size());
      for (size_t i0 = 0; i0 < h.size(); i0 += run)
        widen_half(reinterpret_cast<const std::byte*>(h.data() + i0), dt,
                   std::min(run, h.size() - i0), got.data() + i0);
      for (uint32_t i = 0; i < h.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(got[i]),
                  std::bit_cast<uint32_t>(isa::half_to_fp32(dt, h[i])))
            << "dtype " << int{dt} << " pattern 0x" << std::hex << i << " run " << std::dec << run;
    }
  }
}

TEST_P(HalfConvert, NarrowsAsTheScalarFunction) {
  const std::vector<uint32_t> x = fp32_patterns();
  for (const uint8_t dt : kHalfTypes) {
    std::vector<uint16_t> got(x.size());
    narrow_half(reinterpret_cast<const std::byte*>(x.data()), dt, x.size(),
                reinterpret_cast<std::byte*>(got.data()));
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(got[i], isa::fp32_to_half(dt, std::bit_cast<float>(x[i])))
          << "dtype " << int{dt} << " fp32 0x" << std::hex << x[i];
  }
}

TEST_P(HalfConvert, TailsAndUnalignedPointers) {
  // Lengths around the vector widths, at odd byte offsets on both sides.
  for (const uint8_t dt : kHalfTypes) {
    for (size_t n : {0, 1, 7, 8, 9, 15, 16, 17, 33, 100}) {
      std::vector<std::byte> f32(4 * n + 1), half(2 * n + 1), back(4 * n + 1);
      for (size_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(i) * 0.37f - 3.1f;
        std::memcpy(f32.data() + 1 + 4 * i, &v, 4);
      }
      std::vector<std::byte> guard(half.size(), std::byte{0x5a});
      half = guard;
      narrow_half(f32.data() + 1, dt, n, half.data() + 1);
      EXPECT_EQ(half[0], std::byte{0x5a}) << "wrote before the output";
      widen_half(half.data() + 1, dt, n, back.data() + 1);
      for (size_t i = 0; i < n; ++i) {
        float v, w;
        uint16_t h;
        std::memcpy(&v, f32.data() + 1 + 4 * i, 4);
        std::memcpy(&h, half.data() + 1 + 2 * i, 2);
        std::memcpy(&w, back.data() + 1 + 4 * i, 4);
        ASSERT_EQ(h, isa::fp32_to_half(dt, v)) << "n " << n << " i " << i;
        ASSERT_EQ(std::bit_cast<uint32_t>(w), std::bit_cast<uint32_t>(isa::half_to_fp32(dt, h)));
      }
    }
  }
}

// The output stage in one pass: acc (+ bias), clamped to [lo, hi] with the scalar
// comparisons (a NaN passes through, -0 and +0 as they are), then rounded like narrow_half:
// every fp32 pattern as acc with and without a bias, and bounds that clamp some of them.
TEST_P(HalfConvert, NarrowsClampedAsTheScalarStage) {
  const std::vector<uint32_t> x = fp32_patterns();
  std::vector<float> acc(x.size()), bias(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    acc[i] = std::bit_cast<float>(x[i]);
    bias[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f;
  }
  const float bounds[][2] = {{-INFINITY, INFINITY}, {0.0f, 6.0f}, {-0.0f, 1e30f}, {-2.5f, 0.0f}};
  for (const uint8_t dt : kHalfTypes)
    for (const auto& b : bounds)
      for (const bool with_bias : {false, true})
        for (const size_t n : {x.size(), size_t{37}}) {
          std::vector<uint16_t> got(n, 0x5a5a);
          narrow_half_clamped(acc.data(), with_bias ? bias.data() : nullptr, b[0], b[1], dt, n,
                              reinterpret_cast<std::byte*>(got.data()));
          for (size_t i = 0; i < n; ++i) {
            float y = with_bias ? acc[i] + bias[i] : acc[i];
            y = y < b[0] ? b[0] : y;
            y = y > b[1] ? b[1] : y;
            ASSERT_EQ(got[i], isa::fp32_to_half(dt, y))
                << "dtype " << int{dt} << " acc 0x" << std::hex << x[i] << " bias " << with_bias
                << " lo " << b[0] << " hi " << b[1];
          }
        }
}

INSTANTIATE_TEST_SUITE_P(Paths, HalfConvert, ::testing::Values(false, true),
                         [](const auto& p) { return p.param ? "Scalar" : "Native"; });

TEST(HalfConvertIsa, NamesTheLoopsInUse) {
  set_half_convert_scalar(true);
  EXPECT_STREQ(half_convert_isa(), "scalar");
  set_half_convert_scalar(false);
  // Every AVX-512 CPU has F16C: there the vector loops must be the ones in use (a broken
  // feature check would fall back to the scalar loops silently, correct but slow).
  if (__builtin_cpu_supports("avx512f"))
    EXPECT_STREQ(half_convert_isa(), "avx512");
  else if (__builtin_cpu_supports("avx2"))
    EXPECT_STRNE(half_convert_isa(), "avx512");
}

}  // namespace
}  // namespace npu::emu::kern
