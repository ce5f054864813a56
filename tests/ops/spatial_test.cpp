// auto_pad and pads resolution (npu/ops/spatial.h), the one rule the host implementations and
// the compiler's lowering share.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "npu/ops/spatial.h"

namespace {

using npu::ops::AutoPad;
using npu::ops::parse_auto_pad;
using npu::ops::resolve_pads;

TEST(Spatial, ParseAutoPad) {
  EXPECT_EQ(parse_auto_pad("NOTSET"), AutoPad::kNotSet);
  EXPECT_EQ(parse_auto_pad(""), AutoPad::kNotSet);
  EXPECT_EQ(parse_auto_pad("VALID"), AutoPad::kValid);
  EXPECT_EQ(parse_auto_pad("SAME_UPPER"), AutoPad::kSameUpper);
  EXPECT_EQ(parse_auto_pad("SAME_LOWER"), AutoPad::kSameLower);
  EXPECT_FALSE(parse_auto_pad("same_upper"));
}

TEST(Spatial, ResolvePads) {
  // SAME: out = ceil(in / stride); an odd total pad goes to the end (UPPER) or start (LOWER).
  auto u = resolve_pads(AutoPad::kSameUpper, 5, 4, 1, 1, 0, 0, false);
  EXPECT_EQ(u.out, 5);
  EXPECT_EQ(u.begin, 1);
  EXPECT_EQ(u.end, 2);
  auto l = resolve_pads(AutoPad::kSameLower, 5, 4, 1, 1, 0, 0, false);
  EXPECT_EQ(l.begin, 2);
  EXPECT_EQ(l.end, 1);
  // Explicit pads, dilation: eff = 2 * (3 - 1) + 1 = 5; (7 + 1 + 1 - 5) / 2 + 1 = 3.
  auto e = resolve_pads(AutoPad::kNotSet, 7, 3, 2, 2, 1, 1, false);
  EXPECT_EQ(e.out, 3);
  EXPECT_EQ(e.begin, 1);
  // VALID drops explicit pads.
  EXPECT_EQ(resolve_pads(AutoPad::kValid, 7, 3, 1, 1, 5, 5, false).out, 5);
  // ceil_mode adds a window, but not one that would start in the end padding.
  EXPECT_EQ(resolve_pads(AutoPad::kNotSet, 6, 3, 2, 1, 0, 0, false).out, 2);
  EXPECT_EQ(resolve_pads(AutoPad::kNotSet, 6, 3, 2, 1, 0, 0, true).out, 3);
  EXPECT_EQ(resolve_pads(AutoPad::kNotSet, 5, 2, 2, 1, 0, 1, true).out, 3);
  EXPECT_EQ(resolve_pads(AutoPad::kNotSet, 4, 2, 2, 1, 0, 1, true).out, 2);
  // A window larger than the padded input: no output.
  EXPECT_EQ(resolve_pads(AutoPad::kNotSet, 2, 5, 1, 1, 0, 0, false).out, 0);
}

TEST(Spatial, ArithmeticThatLeavesInt64IsFlaggedNotWrapped) {
  constexpr int64_t kMax = INT64_MAX;
  // pads = [INT64_MAX, 0]: input + pads overflows (it used to wrap, then read "does not fit").
  const auto p = resolve_pads(AutoPad::kNotSet, 4, 1, 1, 1, kMax, 0, false);
  EXPECT_TRUE(p.overflow);
  EXPECT_EQ(p.out, 0);
  // dilation * (kernel - 1) overflows.
  EXPECT_TRUE(resolve_pads(AutoPad::kNotSet, 4, int64_t{1} << 62, 1, 4, 0, 0, false).overflow);
  EXPECT_TRUE(resolve_pads(AutoPad::kSameUpper, 4, kMax, 1, 2, 0, 0, false).overflow);
  // Large but representable windows resolve as usual.
  const auto big = resolve_pads(AutoPad::kSameUpper, 4, int64_t{1} << 40, 1, 1, 0, 0, false);
  EXPECT_FALSE(big.overflow);
  EXPECT_EQ(big.out, 4);
  EXPECT_EQ(big.begin + big.end, (int64_t{1} << 40) - 1);
}

TEST(Spatial, ResolveTransposePads) {
  using npu::ops::resolve_transpose_pads;
  // Full output: stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1 = 2*2+1+2*2+1.
  auto e = resolve_transpose_pads(AutoPad::kNotSet, 3, 3, 2, 2, 1, 1, 2, std::nullopt);
  EXPECT_EQ(e.out, 10 - 3);
  EXPECT_EQ(e.begin, 1);
  EXPECT_EQ(e.end, 2);
  EXPECT_EQ(resolve_transpose_pads(AutoPad::kValid, 3, 3, 2, 2, 1, 1, 2, std::nullopt).out, 10);
  // SAME: out = in * stride; total 7 - 6 = 1 goes to the end (UPPER) or the start (LOWER).
  auto u = resolve_transpose_pads(AutoPad::kSameUpper, 3, 3, 2, 1, 0, 0, 0, std::nullopt);
  EXPECT_EQ(u.out, 6);
  EXPECT_EQ(u.begin, 0);
  EXPECT_EQ(u.end, 1);
  auto l = resolve_transpose_pads(AutoPad::kSameLower, 3, 3, 2, 1, 0, 0, 0, std::nullopt);
  EXPECT_EQ(l.begin, 1);
  EXPECT_EQ(l.end, 0);
  // output_shape overrides the pads; a negative total (8 > 7) floors: begin 0, end -1.
  auto o = resolve_transpose_pads(AutoPad::kNotSet, 3, 3, 2, 1, 0, 5, 5, int64_t{8});
  EXPECT_EQ(o.out, 8);
  EXPECT_EQ(o.begin, 0);
  EXPECT_EQ(o.end, -1);
  auto su = resolve_transpose_pads(AutoPad::kSameUpper, 3, 3, 2, 1, 0, 0, 0, int64_t{8});
  EXPECT_EQ(su.begin, -1);
  EXPECT_EQ(su.end, 0);
  // Pads beyond the full output leave out < 0 for the caller; huge values overflow.
  EXPECT_LT(resolve_transpose_pads(AutoPad::kNotSet, 3, 3, 1, 1, 0, 4, 4, std::nullopt).out, 0);
  EXPECT_TRUE(
      resolve_transpose_pads(AutoPad::kNotSet, int64_t{1} << 50, 3, 1, 1, 0, 0, 0, std::nullopt)
          .overflow);
  EXPECT_TRUE(resolve_transpose_pads(AutoPad::kNotSet, int64_t{1} << 30, 3, int64_t{1} << 30, 1, 0,
                                     0, 0, std::nullopt)
                  .overflow);
}

}  // namespace
