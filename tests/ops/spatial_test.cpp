// auto_pad and pads resolution (npu/ops/spatial.h), the one rule the host implementations and
// the compiler's lowering share.
#include <gtest/gtest.h>

#include <cstdint>

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

}  // namespace
