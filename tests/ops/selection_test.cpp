// ArgMax, ArgMin and TopK (ops/src/selection.cpp) on hand-computed inputs: axes, keepdims,
// select_last_index, ties, NaN, integer dtypes, TopK's opset forms of K, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "op_call.h"

namespace npu::ops::testing {
namespace {

using ::testing::HasSubstr;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(HostOpsArgMax, AxesKeepdimsAndTies) {
  const NpyArray x = f32({2, 3}, {1, 5, 5, 7, 2, 7});
  NpyArray y = output("ArgMax", {&x}, {{"axis", 1}});
  EXPECT_EQ(y.dtype, DType::kInt64);
  EXPECT_EQ(y.shape, (Shape{2, 1}));
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{1, 0}));  // ties: the first
  y = output("ArgMax", {&x}, {{"axis", -1}, {"select_last_index", 1}});
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{2, 2}));
  y = output("ArgMax", {&x}, {{"keepdims", 0}});  // axis 0 by default
  EXPECT_EQ(y.shape, (Shape{3}));
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
  y = output("ArgMin", {&x}, {{"axis", 0}, {"keepdims", 0}});
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{0, 1, 0}));
  y = output("ArgMin", {&x}, {{"axis", 1}});
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{0, 1}));
  // [2, 2, 2], middle axis.
  const NpyArray x3 = arr<int8_t>({2, 2, 2}, {1, 9, 3, 2, -5, 0, -7, 0});
  y = output("ArgMin", {&x3}, {{"axis", 1}, {"select_last_index", 1}});
  EXPECT_EQ(y.shape, (Shape{2, 1, 2}));
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{0, 1, 1, 1}));
  y = output("ArgMax", {&x3}, {{"axis", 1}, {"keepdims", 0}});
  EXPECT_EQ(y.shape, (Shape{2, 2}));
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{1, 0, 0, 0}));
}

TEST(HostOpsArgMax, NaNIsSelectedByBothAsNumPyDoes) {
  const NpyArray x = f32({5}, {1, kNaN, 3, kNaN, 0});
  EXPECT_EQ(output("ArgMax", {&x}).values<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(output("ArgMin", {&x}).values<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(output("ArgMax", {&x}, {{"select_last_index", 1}}).values<int64_t>(),
            (std::vector<int64_t>{3}));
  // Big unsigned values compare as unsigned.
  const NpyArray u = arr<uint64_t>({3}, {1, std::numeric_limits<uint64_t>::max(), 2});
  EXPECT_EQ(output("ArgMax", {&u}).values<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(output("ArgMin", {&u}).values<int64_t>(), (std::vector<int64_t>{0}));
}

TEST(HostOpsArgMax, Errors) {
  const NpyArray x = f32({2, 3}, {1, 5, 5, 7, 2, 7});
  EXPECT_EQ(error_of("ArgMax", {&x}, {{"axis", 2}}), "ArgMax: axis 2 out of range for rank 2");
  EXPECT_EQ(error_of("ArgMin", {&x}, {{"axis", -3}}), "ArgMin: axis -3 out of range for rank 2");
  EXPECT_EQ(error_of("ArgMax", {&x}, {{"select_last_index", 1}, {"_opset", 11}}),
            "ArgMax: attribute select_last_index needs opset 12 (this is opset 11)");
  const NpyArray empty = f32({2, 0}, {});
  EXPECT_EQ(error_of("ArgMax", {&empty}, {{"axis", 1}}),
            "ArgMax: axis 1 of input [2, 0] is empty: no index to select");
  const NpyArray b = arr<bool>({2}, {true, false});
  EXPECT_EQ(error_of("ArgMax", {&b}), "ArgMax: dtype bool is not supported");
  EXPECT_EQ(error_of("ArgMax", {&x}, {{"axis", 1.5}}), "ArgMax: attribute axis is not an int");
}

TEST(HostOpsTopK, LargestSmallestAndAxes) {
  const NpyArray x = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const NpyArray k3 = i64({1}, {3});
  auto r = outputs("TopK", {&x, &k3}, json::object(), 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].shape, (Shape{3, 3}));
  EXPECT_EQ(r[0].values<float>(), (std::vector<float>{3, 2, 1, 7, 6, 5, 11, 10, 9}));
  EXPECT_EQ(r[1].dtype, DType::kInt64);
  EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{3, 2, 1, 3, 2, 1, 3, 2, 1}));
  r = outputs("TopK", {&x, &k3}, {{"largest", 0}}, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].values<float>(), (std::vector<float>{0, 1, 2, 4, 5, 6, 8, 9, 10}));
  EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1, 2}));
  const NpyArray k2 = i64({1}, {2});
  r = outputs("TopK", {&x, &k2}, {{"axis", 0}}, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].shape, (Shape{2, 4}));
  EXPECT_EQ(r[0].values<float>(), (std::vector<float>{8, 9, 10, 11, 4, 5, 6, 7}));
  EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{2, 2, 2, 2, 1, 1, 1, 1}));
  EXPECT_EQ(outputs("TopK", {&x, &k2}, {{"axis", -2}}, 2), r);
  // K = 0: empty outputs; K = the axis: a full sort.
  const NpyArray k0 = i64({1}, {0}), k4 = i64({1}, {4});
  EXPECT_EQ(outputs("TopK", {&x, &k0}, json::object(), 2)[0].shape, (Shape{3, 0}));
  EXPECT_EQ(outputs("TopK", {&x, &k4}, {{"largest", 0}}, 2)[0], x);
}

TEST(HostOpsTopK, TiesPutTheLowerIndexFirstAndNaNIsLargest) {
  const NpyArray x = arr<int32_t>({5}, {1, 3, 3, 2, 3});
  const NpyArray k3 = i64({1}, {3}), k2 = i64({1}, {2});
  auto r = outputs("TopK", {&x, &k3}, json::object(), 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].values<int32_t>(), (std::vector<int32_t>{3, 3, 3}));
  EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{1, 2, 4}));
  const NpyArray y = arr<int32_t>({4}, {2, 1, 1, 0});
  r = outputs("TopK", {&y, &k3}, {{"largest", 0}}, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].values<int32_t>(), (std::vector<int32_t>{0, 1, 1}));
  EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{3, 1, 2}));
  const NpyArray n = f32({4}, {1, kNaN, 3, kNaN});
  r = outputs("TopK", {&n, &k3}, json::object(), 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{1, 3, 2}));
  r = outputs("TopK", {&n, &k2}, {{"largest", 0}}, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].values<float>(), (std::vector<float>{1, 3}));
  EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{0, 2}));
}

TEST(HostOpsTopK, KIsAnAttributeBeforeOpset10) {
  const NpyArray x = f32({4}, {4, 1, 3, 2});
  auto r = outputs("TopK", {&x}, {{"k", 2}, {"_opset", 1}}, 2);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].values<float>(), (std::vector<float>{4, 3}));
  EXPECT_EQ(r[1].values<int64_t>(), (std::vector<int64_t>{0, 2}));
  const NpyArray k2 = i64({1}, {2});
  EXPECT_EQ(outputs("TopK", {&x, &k2}, {{"_opset", 10}}, 2), r);
  EXPECT_EQ(error_of("TopK", {&x}, {{"_opset", 1}}, 2), "TopK: missing attribute 'k'");
  EXPECT_EQ(error_of("TopK", {&x, &k2}, {{"k", 2}, {"_opset", 9}}, 2),
            "TopK: K is an input from opset 10 on (this is opset 9: attribute k)");
  EXPECT_EQ(error_of("TopK", {&x, &k2}, {{"k", 2}}, 2),
            "TopK: attribute k is K, input 1, from opset 10 on (this is opset 17)");
  EXPECT_EQ(error_of("TopK", {&x, &k2}, {{"largest", 0}, {"_opset", 10}}, 2),
            "TopK: attribute largest needs opset 11 (this is opset 10)");
  const NpyArray xi = arr<int32_t>({2}, {1, 2});
  EXPECT_EQ(error_of("TopK", {&xi, &k2}, {{"_opset", 10}}, 2),
            "TopK: dtype int32 is not supported");
}

TEST(HostOpsTopK, Errors) {
  const NpyArray x = f32({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  const NpyArray k5 = i64({1}, {5}), kneg = i64({1}, {-1}), k2 = i64({1}, {2});
  EXPECT_EQ(error_of("TopK", {&x, &k5}, json::object(), 2),
            "TopK: K 5 is larger than axis 1 of size 4 (input [3, 4])");
  EXPECT_EQ(error_of("TopK", {&x, &k5}, {{"axis", 0}}, 2),
            "TopK: K 5 is larger than axis 0 of size 3 (input [3, 4])");
  EXPECT_EQ(error_of("TopK", {&x, &kneg}, json::object(), 2), "TopK: K -1 is negative");
  EXPECT_EQ(error_of("TopK", {&x, &k2}, {{"axis", 2}}, 2), "TopK: axis 2 out of range for rank 2");
  EXPECT_EQ(error_of("TopK", {&x}, json::object(), 2), "TopK: missing input 1 (K)");
  const NpyArray k32 = arr<int32_t>({1}, {2}), kk = i64({2}, {1, 2});
  EXPECT_EQ(error_of("TopK", {&x, &k32}, json::object(), 2),
            "TopK: K dtype int32 is not supported");
  EXPECT_EQ(error_of("TopK", {&x, &kk}, json::object(), 2),
            "TopK: K must be a 1-element 1-d tensor, got shape [2]");
  EXPECT_THAT(error_of("TopK", {&x, &k2}, json::object(), 3), HasSubstr("has 2 outputs"));
}

TEST(HostOpsSelectionLimits, WorkIsCheckedFirst) {
  const NpyArray x = f32({2, 3}, {1, 5, 5, 7, 2, 7});
  auto r = call("ArgMax", {&x}, {{"axis", 1}}, 1, {.max_work = 5});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EFBIG);
  EXPECT_EQ(r.error().message, "ArgMax: 6 comparisons (2 outputs × 3) exceed the host limit of 5");
  EXPECT_TRUE(call("ArgMax", {&x}, {{"axis", 1}}, 1, {.max_work = 6}));
  // TopK of K = 3 out of 3: about 3 * ceil(log2 3) comparisons per output row.
  const NpyArray k3 = i64({1}, {3});
  auto t = call("TopK", {&x, &k3}, json::object(), 2, {.max_work = 11});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message, "TopK: 12 comparisons (2 outputs × 6) exceed the host limit of 11");
}

}  // namespace
}  // namespace npu::ops::testing
