// npu/elide.h: long layer names keep their head and tail (issue 9).
#include "npu/elide.h"

#include <gtest/gtest.h>

namespace {

TEST(Elide, ShortNamesAreUnchanged) {
  EXPECT_EQ(npu::elide_middle("conv1", 30), "conv1");
  EXPECT_EQ(npu::elide_middle(std::string(30, 'x'), 30), std::string(30, 'x'));
  EXPECT_EQ(npu::elide_cell("conv1", 8), "conv1   ");
}

TEST(Elide, LongNamesKeepTheDistinguishingTail) {
  const std::string a = "/encoder/layers/encoder_layer_11/self_attn/MatMul";
  const std::string b = "/encoder/layers/encoder_layer_12/self_attn/MatMul";
  const std::string ea = npu::elide_middle(a, 30), eb = npu::elide_middle(b, 30);
  EXPECT_NE(ea, eb);
  EXPECT_EQ(ea, "/encoder/\u2026_11/self_attn/MatMul");
  EXPECT_EQ(ea.size(), 30u - 1u + 3u);  // 30 columns, "…" is 3 bytes
  EXPECT_EQ(npu::elide_cell(a, 30), ea);
  EXPECT_EQ(npu::elide_middle(a, 1), "/");
}

}  // namespace
