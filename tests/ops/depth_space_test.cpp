// DepthToSpace and SpaceToDepth (ops/src/depth_space.cpp) through npu::ops::run(): both
// DepthToSpace modes on a case where they differ (values from the numpy reshape/transpose
// definition in the spec), the round trip, and the errors.
#include "op_test_util.h"

namespace npu::ops::test {
namespace {

using ::testing::HasSubstr;

std::vector<float> iota0(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

TEST(DepthToSpace, DcrAndCrd) {
  const NpyArray x = f32({1, 8, 1, 2}, iota0(16));
  const NpyArray dcr = run1("DepthToSpace", {&x}, {{"blocksize", 2}}, 13);
  EXPECT_EQ(dcr.shape, (Shape{1, 2, 2, 4}));
  EXPECT_EQ(dcr.values<float>(),
            (std::vector<float>{0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15}));
  const NpyArray crd = run1("DepthToSpace", {&x}, {{"blocksize", 2}, {"mode", "CRD"}}, 13);
  EXPECT_EQ(crd.values<float>(),
            (std::vector<float>{0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15}));
  // Opset 1 has only DCR.
  EXPECT_EQ(run1("DepthToSpace", {&x}, {{"blocksize", 2}}, 1).values<float>(), dcr.values<float>());
  EXPECT_THAT(error_of("DepthToSpace", {&x}, {{"blocksize", 2}, {"mode", "CRD"}}, 10),
              HasSubstr("attribute mode needs opset 11"));
}

TEST(SpaceToDepth, InvertsDcr) {
  const NpyArray y = f32({1, 1, 4, 4}, iota0(16));
  const NpyArray s = run1("SpaceToDepth", {&y}, {{"blocksize", 2}}, 13);
  EXPECT_EQ(s.shape, (Shape{1, 4, 2, 2}));
  EXPECT_EQ(s.values<float>(),
            (std::vector<float>{0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15}));
  const NpyArray back = run1("DepthToSpace", {&s}, {{"blocksize", 2}}, 13);
  EXPECT_EQ(back, y);
  const NpyArray i = i64({1, 1, 2, 2}, {1, 2, 3, 4});  // any dtype
  EXPECT_EQ(run1("SpaceToDepth", {&i}, {{"blocksize", 2}}, 13).values<int64_t>(),
            (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(DepthToSpace, Errors) {
  const NpyArray x = f32({1, 6, 1, 1}, iota0(6));
  EXPECT_THAT(error_of("DepthToSpace", {&x}, {{"blocksize", 2}}, 13),
              HasSubstr("channels 6 are not a multiple of blocksize^2 4"));
  EXPECT_THAT(error_of("DepthToSpace", {&x}, {{"blocksize", 0}}, 13),
              HasSubstr("blocksize 0 must be >= 1"));
  EXPECT_THAT(error_of("DepthToSpace", {&x}, {{"blocksize", 1}, {"mode", "XYZ"}}, 13),
              HasSubstr("mode 'XYZ' is not supported"));
  EXPECT_THAT(error_of("DepthToSpace", {&x}, json::object(), 13),
              HasSubstr("missing attribute 'blocksize'"));
  const NpyArray r3 = f32({1, 4, 1}, iota0(4));
  EXPECT_THAT(error_of("SpaceToDepth", {&r3}, {{"blocksize", 2}}, 13),
              HasSubstr("input must have rank 4"));
  const NpyArray odd = f32({1, 1, 3, 2}, iota0(6));
  EXPECT_THAT(error_of("SpaceToDepth", {&odd}, {{"blocksize", 2}}, 13),
              HasSubstr("not multiples of blocksize 2"));
  EXPECT_THAT(error_of("SpaceToDepth", {&odd}, {{"blocksize", int64_t{1} << 62}}, 13),
              HasSubstr("not multiples"));
}

}  // namespace
}  // namespace npu::ops::test
