// array_values.h: element i of any dtype as int64 / double, stores with the documented
// conversions (wrap, truncate, saturate, bool != 0), and building arrays from ints.
#include "npu/format/array_values.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace npu::format {
namespace {

TEST(ArrayValues, ReadsEveryIntegerDtypeExactly) {
  EXPECT_EQ(int_at(NpyArray::of<int8_t>({2}, std::vector<int8_t>{-128, 127}), 0), -128);
  EXPECT_EQ(int_at(NpyArray::of<uint8_t>({1}, std::vector<uint8_t>{255}), 0), 255);
  EXPECT_EQ(int_at(NpyArray::of<int16_t>({1}, std::vector<int16_t>{-300}), 0), -300);
  EXPECT_EQ(int_at(NpyArray::of<uint16_t>({1}, std::vector<uint16_t>{65535}), 0), 65535);
  EXPECT_EQ(int_at(NpyArray::of<int32_t>({1}, std::vector<int32_t>{-70000}), 0), -70000);
  EXPECT_EQ(int_at(NpyArray::of<uint32_t>({1}, std::vector<uint32_t>{4000000000u}), 0), 4000000000);
  EXPECT_EQ(int_at(NpyArray::of<int64_t>({1}, std::vector<int64_t>{INT64_MIN}), 0), INT64_MIN);
  EXPECT_EQ(int_at(NpyArray::of<bool>({2}, std::vector<bool>{true, false}), 0), 1);
  const auto big = NpyArray::of<uint64_t>({1}, std::vector<uint64_t>{uint64_t{1} << 63});
  EXPECT_EQ(int_at(big, 0), INT64_MIN);  // wraps as int64
  EXPECT_EQ(number_at(big, 0), 9223372036854775808.0);
}

TEST(ArrayValues, FloatsTruncateAndSaturateAsInts) {
  const auto f = NpyArray::of<float>(
      {5}, std::vector<float>{2.9f, -2.9f, NAN, 1e30f, -std::numeric_limits<float>::infinity()});
  EXPECT_EQ(to_ints(f), (std::vector<int64_t>{2, -2, 0, INT64_MAX, INT64_MIN}));
  const auto d = NpyArray::of<double>({1}, std::vector<double>{0.1});
  EXPECT_EQ(number_at(d, 0), 0.1);
  EXPECT_EQ(to_floats(d), std::vector<float>{0.1f});
}

TEST(ArrayValues, StoresConvertToTheDtype) {
  NpyArray i8 = NpyArray::zeros(DType::kInt8, {3});
  set_int(i8, 0, 200);       // wraps
  set_number(i8, 1, -3.7);   // truncates
  set_number(i8, 2, 1e300);  // saturates to INT64_MAX, then wraps
  EXPECT_EQ(i8.values<int8_t>(), (std::vector<int8_t>{-56, -3, -1}));
  NpyArray b = NpyArray::zeros(DType::kBool, {3});
  set_int(b, 0, 5);
  set_number(b, 1, 0.5);
  set_number(b, 2, 0.0);
  EXPECT_EQ(to_ints(b), (std::vector<int64_t>{1, 1, 0}));
  NpyArray f = NpyArray::zeros(DType::kFloat32, {2});
  set_int(f, 0, 7);
  set_number(f, 1, 0.25);
  EXPECT_EQ(f.values<float>(), (std::vector<float>{7.0f, 0.25f}));
}

TEST(ArrayValues, FromIntsFillsOrCutsToTheShape) {
  const std::vector<int64_t> v = {1, -1, 300};
  const NpyArray u8 = from_ints(DType::kUint8, {2, 2}, v);
  EXPECT_EQ(u8.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(u8.values<uint8_t>(), (std::vector<uint8_t>{1, 255, 44, 0}));
  const NpyArray one = from_ints(DType::kInt64, {}, v);
  EXPECT_EQ(one.values<int64_t>(), std::vector<int64_t>{1});
}

}  // namespace
}  // namespace npu::format
