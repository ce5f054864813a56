// CumSum (ops/src/scan.cpp) on hand-computed inputs: exclusive/reverse, axes given as int32
// or int64, 0-d or [1], integer wrap-around, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "op_call.h"

namespace npu::ops::testing {
namespace {

TEST(HostOpsCumSum, ExclusiveReverseAndAxes) {
  const NpyArray x = f32({5}, {1, 2, 3, 4, 5});
  const NpyArray a0 = scalar_i64(0);
  EXPECT_EQ(output("CumSum", {&x, &a0}).values<float>(), (std::vector<float>{1, 3, 6, 10, 15}));
  EXPECT_EQ(output("CumSum", {&x, &a0}, {{"exclusive", 1}}).values<float>(),
            (std::vector<float>{0, 1, 3, 6, 10}));
  EXPECT_EQ(output("CumSum", {&x, &a0}, {{"reverse", 1}}).values<float>(),
            (std::vector<float>{15, 14, 12, 9, 5}));
  EXPECT_EQ(output("CumSum", {&x, &a0}, {{"reverse", 1}, {"exclusive", 1}}).values<float>(),
            (std::vector<float>{14, 12, 9, 5, 0}));
  const NpyArray m = arr<double>({2, 3}, {1, 2, 3, 4, 5, 6});
  const NpyArray a1 = arr<int32_t>({1}, {1}), am2 = arr<int32_t>({}, {-2});
  NpyArray y = output("CumSum", {&m, &a1});
  EXPECT_EQ(y.shape, (Shape{2, 3}));
  EXPECT_EQ(y.values<double>(), (std::vector<double>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(output("CumSum", {&m, &am2}).values<double>(), (std::vector<double>{1, 2, 3, 5, 7, 9}));
  // [2, 2, 2] along the middle axis, reversed.
  const NpyArray c = arr<int64_t>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const NpyArray a1l = scalar_i64(1);
  EXPECT_EQ(output("CumSum", {&c, &a1l}, {{"reverse", 1}}).values<int64_t>(),
            (std::vector<int64_t>{4, 6, 3, 4, 12, 14, 7, 8}));
}

TEST(HostOpsCumSum, IntegersWrap) {
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  const NpyArray x = arr<int32_t>({3}, {kMax, 1, 1});
  const NpyArray a0 = scalar_i64(0);
  EXPECT_EQ(output("CumSum", {&x, &a0}).values<int32_t>(),
            (std::vector<int32_t>{kMax, std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::min() + 1}));
  const NpyArray u = arr<uint32_t>({2}, {std::numeric_limits<uint32_t>::max(), 2});
  EXPECT_EQ(output("CumSum", {&u, &a0}).values<uint32_t>(),
            (std::vector<uint32_t>{std::numeric_limits<uint32_t>::max(), 1}));
}

TEST(HostOpsCumSum, Errors) {
  const NpyArray x = f32({2, 2}, {1, 2, 3, 4});
  const NpyArray a2 = scalar_i64(2), pair = i64({2}, {0, 1});
  EXPECT_EQ(error_of("CumSum", {&x, &a2}), "CumSum: axis 2 out of range for rank 2");
  EXPECT_EQ(error_of("CumSum", {&x, &pair}), "CumSum: axis must be a scalar, got shape [2]");
  EXPECT_EQ(error_of("CumSum", {&x}), "CumSum: missing input 1 (axis)");
  const NpyArray af = f32({}, {0});
  EXPECT_EQ(error_of("CumSum", {&x, &af}), "CumSum: axis dtype float32 is not supported");
  const NpyArray i8 = arr<int8_t>({2}, {1, 2});
  const NpyArray a0 = scalar_i64(0);
  EXPECT_EQ(error_of("CumSum", {&i8, &a0}), "CumSum: dtype int8 is not supported");
  EXPECT_EQ(error_of("CumSum", {&x, &a0}, {{"_opset", 10}}),
            "CumSum: opset 10 is outside the supported range 11..18");
}

TEST(HostOpsCumSumLimits, WorkIsCheckedFirst) {
  const NpyArray x = f32({2, 2}, {1, 2, 3, 4});
  const NpyArray a0 = scalar_i64(0);
  auto r = call("CumSum", {&x, &a0}, json::object(), 1, {.max_work = 3});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EFBIG);
  EXPECT_EQ(r.error().message, "CumSum: 4 additions (4 outputs × 1) exceed the host limit of 3");
}

}  // namespace
}  // namespace npu::ops::testing
