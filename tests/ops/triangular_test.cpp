// Trilu (ops/src/triangular.cpp) on hand-computed inputs: upper and lower, diagonals k
// beyond the matrix up to the int64 limits, batches, every dtype (bool, float16 bytes), and
// the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "op_call.h"

namespace npu::ops::testing {
namespace {

TEST(HostOpsTrilu, UpperLowerAndDiagonals) {
  std::vector<float> v(12);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  const NpyArray x = f32({3, 4}, v);
  EXPECT_EQ(output("Trilu", {&x}).values<float>(),
            (std::vector<float>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  const NpyArray k1 = scalar_i64(1), km1 = scalar_i64(-1);
  EXPECT_EQ(output("Trilu", {&x, &k1}).values<float>(),
            (std::vector<float>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  EXPECT_EQ(output("Trilu", {&x}, {{"upper", 0}}).values<float>(),
            (std::vector<float>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
  EXPECT_EQ(output("Trilu", {&x, &km1}, {{"upper", 0}}).values<float>(),
            (std::vector<float>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  EXPECT_EQ(output("Trilu", {&x, &km1}).values<float>(),
            (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 0, 10, 11, 12}));
  // Diagonals beyond the matrix keep everything or nothing, up to the int64 limits.
  const std::vector<float> zeros(12, 0.0f);
  for (int64_t k : {int64_t{4}, int64_t{100}, std::numeric_limits<int64_t>::max()}) {
    const NpyArray kk = scalar_i64(k), nk = scalar_i64(-k);
    EXPECT_EQ(output("Trilu", {&x, &kk}).values<float>(), zeros) << k;
    EXPECT_EQ(output("Trilu", {&x, &kk}, {{"upper", 0}}), x) << k;
    EXPECT_EQ(output("Trilu", {&x, &nk}), x) << k;
    EXPECT_EQ(output("Trilu", {&x, &nk}, {{"upper", 0}}).values<float>(), zeros) << k;
  }
  const NpyArray kmin = scalar_i64(std::numeric_limits<int64_t>::min());
  EXPECT_EQ(output("Trilu", {&x, &kmin}), x);
}

TEST(HostOpsTrilu, BatchesAndEveryDtype) {
  const NpyArray b = arr<bool>({2, 2, 2}, {true, true, true, true, true, false, true, true});
  EXPECT_EQ(output("Trilu", {&b}, {{"upper", 0}}),
            arr<bool>({2, 2, 2}, {true, false, true, true, true, false, true, true}));
  const NpyArray i = arr<int64_t>({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(output("Trilu", {&i}).values<int64_t>(), (std::vector<int64_t>{1, 2, 3, 0, 5, 6}));
  const NpyArray h = arr<uint16_t>({2, 2}, {0x3c00, 0x4000, 0x4200, 0x4400});
  NpyArray hf = h;
  hf.dtype = DType::kFloat16;  // float16 bits: Trilu copies bytes
  NpyArray y = output("Trilu", {&hf});
  EXPECT_EQ(y.dtype, DType::kFloat16);
  y.dtype = DType::kUint16;
  EXPECT_EQ(y.values<uint16_t>(), (std::vector<uint16_t>{0x3c00, 0x4000, 0, 0x4400}));
  const NpyArray e = f32({0, 3}, {});
  EXPECT_EQ(output("Trilu", {&e}).shape, (Shape{0, 3}));
}

TEST(HostOpsTrilu, Errors) {
  const NpyArray v = f32({3}, {1, 2, 3});
  EXPECT_EQ(error_of("Trilu", {&v}), "Trilu: input must have rank >= 2, got [3]");
  const NpyArray x = f32({2, 2}, {1, 2, 3, 4});
  const NpyArray k32 = arr<int32_t>({}, {1}), k2 = i64({2}, {1, 2});
  EXPECT_EQ(error_of("Trilu", {&x, &k32}), "Trilu: k dtype int32 is not supported");
  EXPECT_EQ(error_of("Trilu", {&x, &k2}), "Trilu: k must be a scalar, got shape [2]");
  EXPECT_EQ(error_of("Trilu", {&x}, {{"_opset", 13}}),
            "Trilu: opset 13 is outside the supported range 14..18");
}

TEST(HostOpsTriluLimits, WorkIsCheckedFirst) {
  const NpyArray x = f32({2, 2}, {1, 2, 3, 4});
  auto t = call("Trilu", {&x}, json::object(), 1, {.max_work = 3});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, EFBIG);
  EXPECT_EQ(t.error().message,
            "Trilu: 4 element copies (4 outputs × 1) exceed the host limit of 3");
}

}  // namespace
}  // namespace npu::ops::testing
