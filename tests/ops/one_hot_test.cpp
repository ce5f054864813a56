// OneHot (ops/src/one_hot.cpp) on hand-computed inputs: the axis anywhere, negative and
// out-of-range indices by opset, float indices and depth truncated, values of another dtype,
// and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "op_call.h"

namespace npu::ops::testing {
namespace {

NpyArray f32_values(float off, float on) {
  return f32({2}, {off, on});
}

TEST(HostOpsOneHot, LastAxisNegativeAndOutOfRangeIndices) {
  const NpyArray idx = arr<int64_t>({4}, {0, 2, -1, 3});
  const NpyArray depth = scalar_i64(3);
  const NpyArray values = f32_values(0.5f, 7.0f);
  const NpyArray y = output("OneHot", {&idx, &depth, &values});
  EXPECT_EQ(y.shape, (Shape{4, 3}));
  // -1 is the last position (opset 11); 3 is out of range: a row of off_values.
  EXPECT_EQ(y.values<float>(),
            (std::vector<float>{7, 0.5f, 0.5f, 0.5f, 0.5f, 7, 0.5f, 0.5f, 7, 0.5f, 0.5f, 0.5f}));
  // Opset 9 has no negative indices: -1 is out of range too.
  const NpyArray y9 = output("OneHot", {&idx, &depth, &values}, {{"_opset", 9}});
  EXPECT_EQ(y9.values<float>(),
            (std::vector<float>{7, 0.5f, 0.5f, 0.5f, 0.5f, 7, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}));
}

TEST(HostOpsOneHot, AxisInsertsTheDepthDimension) {
  // indices [2, 2]; axis 0 gives [depth, 2, 2], axis 1 [2, depth, 2].
  const NpyArray idx = arr<int32_t>({2, 2}, {0, 1, 1, 0});
  const NpyArray depth = scalar_i64(2);
  const NpyArray values = f32_values(0, 1);
  const NpyArray a0 = output("OneHot", {&idx, &depth, &values}, {{"axis", 0}});
  EXPECT_EQ(a0.shape, (Shape{2, 2, 2}));
  EXPECT_EQ(a0.values<float>(), (std::vector<float>{1, 0, 0, 1, 0, 1, 1, 0}));
  const NpyArray a1 = output("OneHot", {&idx, &depth, &values}, {{"axis", 1}});
  EXPECT_EQ(a1.shape, (Shape{2, 2, 2}));
  EXPECT_EQ(a1.values<float>(), (std::vector<float>{1, 0, 0, 1, 0, 1, 1, 0}));
  const NpyArray am1 = output("OneHot", {&idx, &depth, &values}, {{"axis", -1}});
  EXPECT_EQ(am1.values<float>(), (std::vector<float>{1, 0, 0, 1, 0, 1, 1, 0}));
  // Axis 1 on [2, 3] indices: out[i][d][j] = on where idx[i][j] == d.
  const NpyArray idx23 = arr<int64_t>({2, 3}, {0, 1, 2, 2, 1, 0});
  const NpyArray depth3 = scalar_i64(3);
  const NpyArray b1 = output("OneHot", {&idx23, &depth3, &values}, {{"axis", 1}});
  EXPECT_EQ(b1.shape, (Shape{2, 3, 3}));
  EXPECT_EQ(b1.values<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1,  //
                                                    0, 0, 1, 0, 1, 0, 1, 0, 0}));
}

TEST(HostOpsOneHot, FloatIndicesAndDepthAreTruncatedValuesKeepTheirDtype) {
  const NpyArray idx = f32({3}, {1.9f, -0.5f, 2.0f});
  const NpyArray depth = f32({1}, {3.7f});  // depth 3
  const NpyArray values = arr<int64_t>({2}, {-5, 9});
  const NpyArray y = output("OneHot", {&idx, &depth, &values});
  EXPECT_EQ(y.dtype, format::DType::kInt64);
  EXPECT_EQ(y.shape, (Shape{3, 3}));
  // 1.9 -> 1, -0.5 -> 0 (truncation toward zero), 2.0 -> 2.
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{-5, 9, -5, 9, -5, -5, -5, -5, 9}));
}

TEST(HostOpsOneHot, Errors) {
  const NpyArray idx = arr<int64_t>({2}, {0, 1});
  const NpyArray depth = scalar_i64(2), zero = scalar_i64(0);
  const NpyArray depth2 = arr<int64_t>({2}, {2, 2});
  const NpyArray values = f32_values(0, 1);
  const NpyArray three = f32({3}, {0, 1, 2});
  const NpyArray nan_depth = f32({1}, {std::nanf("")});
  EXPECT_EQ(error_of("OneHot", {&idx, &zero, &values}), "OneHot: depth must be positive, got 0");
  EXPECT_THAT(error_of("OneHot", {&idx, &nan_depth, &values}),
              ::testing::StartsWith("OneHot: depth must be positive, got "));
  EXPECT_EQ(error_of("OneHot", {&idx, &depth2, &values}),
            "OneHot: depth must be a scalar, got shape [2]");
  EXPECT_EQ(error_of("OneHot", {&idx, &depth, &three}),
            "OneHot: values must be [off_value, on_value], got shape [3]");
  EXPECT_EQ(error_of("OneHot", {&idx, &depth}), "OneHot: missing input 2");
  EXPECT_THAT(error_of("OneHot", {&idx, &depth, &values}, {{"axis", 2}}),
              ::testing::HasSubstr("axis 2"));
  // A huge depth is refused by the work limit before anything is allocated.
  const NpyArray huge = scalar_i64(int64_t{1} << 40);
  auto r = call("OneHot", {&idx, &huge, &values});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EFBIG);
}

}  // namespace
}  // namespace npu::ops::testing
