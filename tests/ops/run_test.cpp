// npu::ops::run() on plain arrays: broadcasting Add/Mul/Sub, batched MatMul, the shape ops
// (Transpose, Reshape, Flatten), Softmax along an axis, and an unsupported op.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "npu/format/npy.h"
#include "npu/ops/ops.h"
#include "op_test_util.h"

namespace {

using npu::format::NpyArray;

using npu::ops::test::f32;

TEST(HostOps, AddBroadcasts) {
  const NpyArray a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const NpyArray b = f32({3}, {10, 20, 30});
  const NpyArray* ins[] = {&a, &b};
  auto r = npu::ops::run("Add", "{}", ins);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*r)[0].values<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  const NpyArray c = f32({2, 1}, {1, 2});
  const NpyArray* ins2[] = {&c, &b};
  auto r2 = npu::ops::run("Mul", "{}", ins2);
  ASSERT_TRUE(r2) << r2.error().message;
  EXPECT_EQ((*r2)[0].values<float>(), (std::vector<float>{10, 20, 30, 20, 40, 60}));
  const NpyArray d = f32({4}, {1, 2, 3, 4});
  const NpyArray* bad[] = {&a, &d};
  auto e = npu::ops::run("Sub", "{}", bad);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message, "Sub: shapes [2, 3] and [4] do not broadcast");
}

TEST(HostOps, MatMulBatched) {
  const NpyArray a = f32({2, 1, 2}, {1, 2, 3, 4});
  const NpyArray b = f32({2, 1}, {10, 100});
  const NpyArray* ins[] = {&a, &b};
  auto r = npu::ops::run("MatMul", "{}", ins);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)[0].shape, (std::vector<int64_t>{2, 1, 1}));
  EXPECT_EQ((*r)[0].values<float>(), (std::vector<float>{210, 430}));
}

TEST(HostOps, ShapeOps) {
  const NpyArray a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const NpyArray* one[] = {&a};
  auto t = npu::ops::run("Transpose", "{}", one);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ((*t)[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*t)[0].values<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  const NpyArray shape = NpyArray::of<int64_t>({2}, std::vector<int64_t>{-1, 2});
  const NpyArray* two[] = {&a, &shape};
  auto rs = npu::ops::run("Reshape", "{}", two);
  ASSERT_TRUE(rs) << rs.error().message;
  EXPECT_EQ((*rs)[0].shape, (std::vector<int64_t>{3, 2}));
  auto fl = npu::ops::run("Flatten", R"({"axis":0})", one);
  ASSERT_TRUE(fl) << fl.error().message;
  EXPECT_EQ((*fl)[0].shape, (std::vector<int64_t>{1, 6}));
  auto sm = npu::ops::run("Softmax", R"({"axis":0})", one);
  ASSERT_TRUE(sm) << sm.error().message;
  // Column 0 is {1, 4}: softmax = {1, e^3} / (1 + e^3).
  const float e3 = std::exp(3.0f);
  const std::vector<float> col = {1 / (1 + e3), e3 / (1 + e3)};
  EXPECT_NEAR((*sm)[0].values<float>()[0], col[0], 1e-6f);
  EXPECT_NEAR((*sm)[0].values<float>()[3], col[1], 1e-6f);
  auto foo = npu::ops::run("Foo", "{}", one);
  ASSERT_FALSE(foo);
  EXPECT_EQ(foo.error().message, "host op 'Foo' is not supported");
}

}  // namespace
