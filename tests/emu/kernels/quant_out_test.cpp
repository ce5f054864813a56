// QuantOut (emu/kernels/quant_out.h) against the scalar rule (npu/ref/scalar.h: requantize) on
// every ISA level: 8-bit outputs of 16-channel groups (one 16-byte store), an 8-channel tail,
// and accumulators that leave int32 in some groups (those take the scalar rule), with the clamp
// bounds in either order.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cpu_isa.h"
#include "gemm_q8.h"
#include "matrix_common.h"
#include "npu/ref/scalar.h"
#include "quant_out.h"
#include "test_util.h"

namespace npu::emu {
namespace {

TEST(QuantOut, MatchesTheScalarRuleOnEveryLevel) {
  test::IsaGuard guard;
  std::mt19937_64 rng(11);
  constexpr size_t kRows = 9, kN = 40;  // two 16-channel groups and an 8-channel tail
  constexpr uint64_t kK = 40000;        // large enough that an acc may leave int32: checked
  for (const auto& [lo, hi] : {std::pair{-128, 127}, std::pair{-20, 90}, std::pair{50, -50}}) {
    std::vector<npu_chan_qparams> q(kN);
    for (auto& p : q) {
      p.bias = static_cast<int32_t>(rng() % 2'000'000'000) - 1'000'000'000;
      p.multiplier = static_cast<int32_t>(rng() % (uint64_t{1} << 31));
      p.shift = 20 + static_cast<int32_t>(rng() % 30);
    }
    const kern::QOutput qo(NPU_DTYPE_INT8, static_cast<int32_t>(rng() % 21) - 10, lo, hi);
    std::vector<int32_t> sums(kRows * kN);
    for (size_t i = 0; i < sums.size(); ++i) {
      // Mostly ordinary sums; some near the ends of int32, so that + bias leaves it.
      const uint64_t pick = rng() % 8;
      sums[i] = pick == 0   ? INT32_MAX - static_cast<int32_t>(rng() % 1000)
                : pick == 1 ? INT32_MIN + static_cast<int32_t>(rng() % 1000)
                            : static_cast<int32_t>(rng() % 2'000'000) - 1'000'000;
    }
    std::vector<int8_t> want(kRows * kN);
    for (size_t r = 0; r < kRows; ++r)
      for (size_t j = 0; j < kN; ++j)
        want[r * kN + j] = static_cast<int8_t>(
            ref::requantize(int64_t{sums[r * kN + j]} + q[j].bias, q[j].multiplier, q[j].shift,
                            qo.out_zp, qo.lo, qo.hi));
    for (const kern::Isa isa : {kern::Isa::Portable, kern::Isa::Avx2, kern::Isa::Avx512}) {
      if (!kern::isa_supported(isa)) continue;
      kern::set_kernel_isa(isa);
      const kern::QuantOut out_stage(qo, q.data(), kN, kK);
      std::vector<int8_t> got(kRows * kN, 0x55);
      out_stage.rows(reinterpret_cast<std::byte*>(got.data()), kN, {sums.data(), nullptr, kN},
                     kRows, nullptr);
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << kern::isa_name(isa) << " clamp [" << lo << ", " << hi
                                   << "] row " << i / kN << " channel " << i % kN;
    }
  }
}

}  // namespace
}  // namespace npu::emu
