// The normalizations that compute their statistics (ops/src/normalization.cpp):
// LayerNormalization, InstanceNormalization and GroupNormalization on hand-computed inputs
// (runs of mean 2 and 4 with variance 1 and 4, so epsilon 0 gives exact results), their
// optional outputs, axes, opset forms, and the errors for bad shapes, types and attributes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "op_call.h"

namespace npu::ops::testing {
namespace {

using ::testing::HasSubstr;

TEST(HostOpsLayerNormalization, LastAxisWithScaleBiasAndStatistics) {
  // Rows [1, 3] (mean 2, var 1) and [2, 6] (mean 4, var 4): both normalize to [-1, 1].
  const NpyArray x = f32({2, 2}, {1, 3, 2, 6});
  const NpyArray scale = f32({2}, {2, 3}), bias = f32({2}, {0.5f, -1});
  auto r = outputs("LayerNormalization", {&x, &scale, &bias}, {{"epsilon", 0.0}}, 3);
  ASSERT_EQ(r.size(), 3u);
  expect_near<float>(r[0], {2, 2}, {-1.5, 2, -1.5, 2});
  expect_near<float>(r[1], {2, 1}, {2, 4});    // Mean
  expect_near<float>(r[2], {2, 1}, {1, 0.5});  // InvStdDev
  EXPECT_EQ(r[1].dtype, DType::kFloat32);
  // B is optional; one output is Y alone.
  auto y = output("LayerNormalization", {&x, &scale}, {{"epsilon", 0.0}});
  expect_near<float>(y, {2, 2}, {-2, 3, -2, 3});
  // The default epsilon (1e-5) is in the variance.
  auto d = outputs("LayerNormalization", {&x, &scale}, json::object(), 3);
  ASSERT_EQ(d.size(), 3u);
  expect_near<float>(d[2], {2, 1}, {1 / std::sqrt(1 + 1e-5), 1 / std::sqrt(4 + 1e-5)});
}

TEST(HostOpsLayerNormalization, AxisChoosesTheNormalizedDims) {
  // axis 0 normalizes everything: mean 3, variance (4 + 0 + 1 + 9) / 4 = 3.5.
  const NpyArray x = f32({2, 2}, {1, 3, 2, 6});
  const NpyArray one = f32({1}, {1});
  const double s = 1 / std::sqrt(3.5);
  auto r = outputs("LayerNormalization", {&x, &one}, {{"axis", 0}, {"epsilon", 0.0}}, 2);
  ASSERT_EQ(r.size(), 2u);
  expect_near<float>(r[0], {2, 2}, {-2 * s, 0, -1 * s, 3 * s});
  expect_near<float>(r[1], {1, 1}, {3});
  EXPECT_EQ(output("LayerNormalization", {&x, &one}, {{"axis", -2}, {"epsilon", 0.0}}), r[0]);
  // Rank 3, axis 1 of [2, 1, 2]: the same rows as the last axis of [2, 2]; Scale [1, 2].
  const NpyArray x3 = f32({2, 1, 2}, {1, 3, 2, 6});
  const NpyArray scale = f32({1, 2}, {2, 3});
  auto r3 = outputs("LayerNormalization", {&x3, &scale}, {{"axis", 1}, {"epsilon", 0.0}}, 3);
  ASSERT_EQ(r3.size(), 3u);
  expect_near<float>(r3[0], {2, 1, 2}, {-2, 3, -2, 3});
  EXPECT_EQ(r3[1].shape, (Shape{2, 1, 1}));
  // float64 in, float64 Y; the statistics stay float32 (stash_type 1).
  const NpyArray xd = arr<double>({2}, {1, 3}), sd = arr<double>({2}, {1, 1});
  auto rd = outputs("LayerNormalization", {&xd, &sd}, {{"epsilon", 0.0}}, 2);
  ASSERT_EQ(rd.size(), 2u);
  expect_near<double>(rd[0], {2}, {-1, 1});
  EXPECT_EQ(rd[1].dtype, DType::kFloat32);
}

TEST(HostOpsLayerNormalization, Errors) {
  const NpyArray x = f32({2, 2}, {1, 3, 2, 6});
  const NpyArray s2 = f32({2}, {1, 1}), s3 = f32({3}, {1, 1, 1});
  EXPECT_EQ(error_of("LayerNormalization", {&x, &s2}, {{"axis", 2}}),
            "LayerNormalization: axis 2 out of range for rank 2");
  EXPECT_EQ(error_of("LayerNormalization", {&x, &s3}),
            "LayerNormalization: shapes [2, 2] and [3] do not broadcast");
  const NpyArray wide = f32({2, 2, 1}, {1, 1, 1, 1});
  EXPECT_EQ(error_of("LayerNormalization", {&x, &wide}),
            "LayerNormalization: Scale shape [2, 2, 1] does not broadcast to X's shape [2, 2]");
  const NpyArray sd = arr<double>({2}, {1, 1});
  EXPECT_EQ(error_of("LayerNormalization", {&x, &sd}),
            "LayerNormalization: Scale is float64 but X is float32");
  EXPECT_EQ(error_of("LayerNormalization", {&x, &s2, &sd}),
            "LayerNormalization: B is float64 but X is float32");
  EXPECT_EQ(error_of("LayerNormalization", {&x, &s2}, {{"stash_type", 16}}),
            "LayerNormalization: attribute stash_type 16 is not supported (only 1, float32)");
  EXPECT_EQ(error_of("LayerNormalization", {&x}), "LayerNormalization: missing input 1");
  const NpyArray xi = arr<int32_t>({2}, {1, 2});
  EXPECT_EQ(error_of("LayerNormalization", {&xi, &s2}),
            "LayerNormalization: dtype int32 is not supported");
  EXPECT_THAT(error_of("LayerNormalization", {&x, &s2}, {{"_opset", 16}}),
              HasSubstr("opset 16 is outside the supported range 17..18"));
  EXPECT_THAT(error_of("LayerNormalization", {&x, &s2}, json::object(), 4),
              HasSubstr("has 1 to 3 outputs"));
}

TEST(HostOpsInstanceNormalization, PerInstancePerChannel) {
  // [N=2, C=2, 2]: channel runs [1, 3] and [2, 6] in both instances.
  const NpyArray x = f32({2, 2, 2}, {1, 3, 2, 6, 2, 6, 1, 3});
  const NpyArray scale = f32({2}, {2, 3}), bias = f32({2}, {0.5f, -1});
  auto y = output("InstanceNormalization", {&x, &scale, &bias}, {{"epsilon", 0.0}});
  expect_near<float>(y, {2, 2, 2}, {-1.5, 2.5, -4, 2, -1.5, 2.5, -4, 2});
  // Opset 1 (consumed_inputs) means the same; the default epsilon is 1e-5.
  auto y1 = output("InstanceNormalization", {&x, &scale, &bias}, {{"_opset", 1}});
  const double e = 1 / std::sqrt(1 + 1e-5), f = 2 / std::sqrt(4 + 1e-5);
  expect_near<float>(y1, {2, 2, 2},
                     {0.5 - 2 * e, 0.5 + 2 * e, -1 - 3 * f, -1 + 3 * f, 0.5 - 2 * f, 0.5 + 2 * f,
                      -1 - 3 * e, -1 + 3 * e});
  // 4-d, float64.
  const NpyArray x4 = arr<double>({1, 1, 2, 2}, {1, 1, 3, 3});
  const NpyArray one = arr<double>({1}, {1}), zero = arr<double>({1}, {0});
  expect_near<double>(output("InstanceNormalization", {&x4, &one, &zero}, {{"epsilon", 0.0}}),
                      {1, 1, 2, 2}, {-1, -1, 1, 1});
}

TEST(HostOpsInstanceNormalization, Errors) {
  const NpyArray x = f32({1, 2, 2}, {1, 3, 2, 6});
  const NpyArray s2 = f32({2}, {1, 1}), s3 = f32({3}, {1, 1, 1});
  EXPECT_EQ(error_of("InstanceNormalization", {&x, &s3, &s2}),
            "InstanceNormalization: scale shape [3] does not match 2 channels (expected [2])");
  EXPECT_EQ(error_of("InstanceNormalization", {&x, &s2, &s3}),
            "InstanceNormalization: B shape [3] does not match 2 channels (expected [2])");
  EXPECT_EQ(error_of("InstanceNormalization", {&x, &s2}), "InstanceNormalization: missing input 2");
  const NpyArray flat = f32({2}, {1, 2});
  EXPECT_EQ(error_of("InstanceNormalization", {&flat, &s2, &s2}),
            "InstanceNormalization: X must have rank >= 2 ([N, C, ...]), got [2]");
  const NpyArray sd = arr<double>({2}, {1, 1});
  EXPECT_EQ(error_of("InstanceNormalization", {&x, &sd, &s2}),
            "InstanceNormalization: scale is float64 but X is float32");
}

TEST(HostOpsGroupNormalization, ScaleAndBiasPerGroupAt18PerChannelAt21) {
  // [N=1, C=4, 1] in 2 groups: [1, 3] and [2, 6], each normalized to [-1, 1].
  const NpyArray x = f32({1, 4, 1}, {1, 3, 2, 6});
  const NpyArray gs = f32({2}, {2, 3}), gb = f32({2}, {0.5f, -1});
  expect_near<float>(output("GroupNormalization", {&x, &gs, &gb},
                            {{"num_groups", 2}, {"epsilon", 0.0}, {"_opset", 18}}),
                     {1, 4, 1}, {-1.5, 2.5, -4, 2});
  const NpyArray cs = f32({4}, {1, 2, 3, 4}), cb = f32({4}, {0, 0, 0, 1});
  expect_near<float>(output("GroupNormalization", {&x, &cs, &cb},
                            {{"num_groups", 2}, {"epsilon", 0.0}, {"_opset", 21}}),
                     {1, 4, 1}, {-1, 2, -3, 5});
  // One group: a LayerNormalization over [C, ...]; C groups: an InstanceNormalization.
  const NpyArray one = f32({1}, {1}), zero = f32({1}, {0});
  const double s = 1 / std::sqrt(3.5);
  expect_near<float>(output("GroupNormalization", {&x, &one, &zero},
                            {{"num_groups", 1}, {"epsilon", 0.0}, {"_opset", 18}}),
                     {1, 4, 1}, {-2 * s, 0, -1 * s, 3 * s});
  const NpyArray x2 = f32({2, 2, 2}, {1, 3, 2, 6, 2, 6, 1, 3});
  const NpyArray s4 = f32({2}, {2, 3}), b4 = f32({2}, {0.5f, -1});
  const NpyArray in = output("InstanceNormalization", {&x2, &s4, &b4}, {{"epsilon", 0.0}});
  const auto iv = in.values<float>();
  expect_near<float>(output("GroupNormalization", {&x2, &s4, &b4},
                            {{"num_groups", 2}, {"epsilon", 0.0}, {"_opset", 21}}),
                     {2, 2, 2}, std::vector<double>(iv.begin(), iv.end()));
}

TEST(HostOpsGroupNormalization, EmptyInputs) {
  // No channels: every num_groups divides 0, the output is as empty as X.
  const NpyArray x = f32({1, 0, 2}, {});
  const NpyArray g2 = f32({2}, {1, 1});
  EXPECT_EQ(output("GroupNormalization", {&x, &g2, &g2}, {{"num_groups", 2}, {"_opset", 18}}), x);
  const NpyArray e = f32({2, 4, 0}, {});
  const NpyArray c4 = f32({4}, {1, 1, 1, 1});
  EXPECT_EQ(output("GroupNormalization", {&e, &c4, &c4}, {{"num_groups", 2}, {"_opset", 21}}), e);
  // LayerNormalization over an empty axis: Mean and InvStdDev are NaN (0 / 0) per row.
  const NpyArray l = f32({2, 0}, {});
  const NpyArray s0 = f32({0}, {});
  auto r = outputs("LayerNormalization", {&l, &s0}, json::object(), 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0], l);
  ASSERT_EQ(r[1].shape, (Shape{2, 1}));
  EXPECT_TRUE(std::isnan(r[1].values<float>()[0]));
}

TEST(HostOpsGroupNormalization, Errors) {
  const NpyArray x = f32({1, 4, 1}, {1, 3, 2, 6});
  const NpyArray g2 = f32({2}, {1, 1}), c4 = f32({4}, {1, 1, 1, 1});
  EXPECT_EQ(error_of("GroupNormalization", {&x, &g2, &g2}, {{"num_groups", 3}, {"_opset", 18}}),
            "GroupNormalization: attribute num_groups 3 does not divide 4 channels");
  EXPECT_EQ(error_of("GroupNormalization", {&x, &g2, &g2}, {{"num_groups", 0}, {"_opset", 18}}),
            "GroupNormalization: attribute num_groups 0 does not divide 4 channels");
  EXPECT_EQ(error_of("GroupNormalization", {&x, &c4, &c4}, {{"num_groups", 2}, {"_opset", 18}}),
            "GroupNormalization: scale shape [4] does not match 2 groups (opset 18; per channel "
            "from 21) (expected [2])");
  EXPECT_EQ(error_of("GroupNormalization", {&x, &g2, &g2}, {{"num_groups", 2}, {"_opset", 21}}),
            "GroupNormalization: scale shape [2] does not match 4 channels (opset 21) (expected "
            "[4])");
  EXPECT_EQ(error_of("GroupNormalization", {&x, &c4, &g2}, {{"num_groups", 2}, {"_opset", 21}}),
            "GroupNormalization: bias shape [2] does not match 4 channels (opset 21) (expected "
            "[4])");
  EXPECT_EQ(error_of("GroupNormalization", {&x, &g2, &g2},
                     {{"num_groups", 2}, {"stash_type", 1}, {"_opset", 18}}),
            "GroupNormalization: attribute stash_type needs opset 21 (this is opset 18)");
  EXPECT_EQ(error_of("GroupNormalization", {&x, &c4, &c4},
                     {{"num_groups", 2}, {"stash_type", 11}, {"_opset", 21}}),
            "GroupNormalization: attribute stash_type 11 is not supported (only 1, float32)");
  EXPECT_EQ(error_of("GroupNormalization", {&x, &g2, &g2}, {{"_opset", 18}}),
            "GroupNormalization: missing attribute 'num_groups'");
  EXPECT_THAT(error_of("GroupNormalization", {&x, &g2, &g2}, {{"num_groups", 2}}),
              HasSubstr("opset 17 is outside the supported range 18..21"));
}

// The work limit is checked before the output is allocated; a deadline stops the loops.
TEST(HostOpsNormalizationLimits, WorkAndDeadline) {
  const NpyArray x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const NpyArray s = f32({3}, {1, 1, 1});
  auto r = call("LayerNormalization", {&x, &s}, json::object(), 1, {.max_work = 17});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EFBIG);
  EXPECT_EQ(r.error().message,
            "LayerNormalization: 18 element operations (6 outputs × 3) exceed the host limit of "
            "17");
  EXPECT_TRUE(call("LayerNormalization", {&x, &s}, json::object(), 1, {.max_work = 18}));
  const NpyArray big = NpyArray::zeros(DType::kFloat32, {1, 4, 1 << 20});
  const NpyArray c4 = f32({4}, {1, 1, 1, 1});
  using Clock = std::chrono::steady_clock;
  auto late = call("InstanceNormalization", {&big, &c4, &c4}, json::object(), 1,
                   {.deadline = Clock::now() + std::chrono::microseconds(100)});
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, ETIMEDOUT);
}

}  // namespace
}  // namespace npu::ops::testing
