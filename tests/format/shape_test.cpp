// shape.h: the one shape text of the stack and the overflow-checked element count.
#include "npu/format/shape.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace npu::format {
namespace {

TEST(ShapeText, BracketsAndCommaSpace) {
  EXPECT_EQ(shape_text(std::vector<int64_t>{3, 2}), "[3, 2]");
  EXPECT_EQ(shape_text(std::vector<int64_t>{7}), "[7]");
  EXPECT_EQ(shape_text(std::vector<int64_t>{}), "[]");
  EXPECT_EQ(shape_text(std::vector<int64_t>{1, 0, -1}), "[1, 0, -1]");
}

TEST(ShapeText, SymbolicDimsByName) {
  const std::vector<Dim> dims = {Dim::named("N"), Dim::fixed(3), Dim::fixed(224)};
  EXPECT_EQ(shape_text(dims), "[N, 3, 224]");
  EXPECT_EQ(shape_text(std::vector<Dim>{}), "[]");
}

TEST(ElementCount, ProductOrMinusOne) {
  EXPECT_EQ(element_count(std::vector<int64_t>{}), 1);
  EXPECT_EQ(element_count(std::vector<int64_t>{2, 3, 4}), 24);
  EXPECT_EQ(element_count(std::vector<int64_t>{5, 0, 7}), 0);
  EXPECT_EQ(element_count(std::vector<int64_t>{2, -1}), -1);
  EXPECT_EQ(element_count(std::vector<int64_t>{int64_t{1} << 32, int64_t{1} << 32}), -1);
  EXPECT_EQ(element_count(std::vector<int64_t>{int64_t{1} << 31, int64_t{1} << 31}),
            int64_t{1} << 62);
}

}  // namespace
}  // namespace npu::format
