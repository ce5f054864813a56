// q8_row_sum (emu/kernels/gemm_q8.h) against a plain loop on every ISA level: int8 and uint8
// rows of every length from 0 to 200 (whole 64-byte steps, a masked tail, both), at offsets
// that are not 64-byte aligned, with the extreme byte values.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cpu_isa.h"
#include "gemm_q8.h"
#include "test_util.h"

namespace npu::emu {
namespace {

TEST(RowSum, MatchesAPlainLoopOnEveryLevel) {
  test::IsaGuard guard;
  std::mt19937_64 rng(5);
  std::vector<uint8_t> bytes(256 + 3);
  for (uint8_t& b : bytes) {
    const uint64_t pick = rng() % 4;  // the ends of both domains often
    b = pick == 0 ? 0x80 : pick == 1 ? 0x7f : pick == 2 ? 0xff : static_cast<uint8_t>(rng());
  }
  for (const kern::Isa isa : {kern::Isa::Portable, kern::Isa::Avx2, kern::Isa::Avx512}) {
    if (!kern::isa_supported(isa)) continue;
    kern::set_kernel_isa(isa);
    for (const bool is_signed : {false, true}) {
      for (size_t n = 0; n <= 200; ++n) {
        const uint8_t* row = bytes.data() + 3;  // not aligned
        int64_t want = 0;
        for (size_t i = 0; i < n; ++i)
          want += is_signed ? int64_t{static_cast<int8_t>(row[i])} : int64_t{row[i]};
        ASSERT_EQ(kern::q8_row_sum(row, n, is_signed), want)
            << kern::isa_name(isa) << (is_signed ? " int8" : " uint8") << " n " << n;
      }
    }
  }
}

}  // namespace
}  // namespace npu::emu
