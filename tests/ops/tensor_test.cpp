// The tensor/shape host ops (ops/src/tensor.cpp) run through npu::ops::run():
// hand-computed cases per op (negative axes and indices, Slice clamping, int64 and bool
// tensors, opset-dependent inputs) and the one-line errors for bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npu/format/array_values.h"
#include "npu/ops/ops.h"
#include "npu/ops/registry.h"
#include "op_test_util.h"

namespace {

using npu::format::DType;
using npu::format::NpyArray;
using ::testing::HasSubstr;
using json = nlohmann::json;
using Shape = std::vector<int64_t>;
using Ins = std::vector<const NpyArray*>;

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using npu::ops::test::f32;
using npu::ops::test::i32;
using npu::ops::test::i64;
NpyArray b8(Shape s, std::vector<bool> v) {
  return NpyArray::of<bool>(std::move(s), v);
}
NpyArray ints(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return i64({n}, std::move(v));
}

npu::Expected<std::vector<NpyArray>> run(std::string_view op, Ins ins, json attrs = json::object(),
                                         size_t num_outputs = 1) {
  if (!npu::ops::find(op)) return npu::make_error(ENOTSUP, "test: no op " + std::string(op));
  if (!attrs.contains("_opset")) attrs["_opset"] = 17;
  return npu::ops::run(op, attrs.dump(), ins, num_outputs);
}

/// The single output of a call expected to succeed (an empty array after a failure).
NpyArray run1(std::string_view op, Ins ins, json attrs = json::object()) {
  auto r = run(op, std::move(ins), std::move(attrs));
  EXPECT_TRUE(r) << r.error().message;
  if (!r) return {};
  EXPECT_EQ(r->size(), 1u);
  return r->empty() ? NpyArray{} : (*r)[0];
}

/// The error message of a call expected to fail.
std::string error_of(std::string_view op, Ins ins, json attrs = json::object(),
                     size_t num_outputs = 1) {
  return npu::ops::test::one_line_error(op, run(op, std::move(ins), std::move(attrs), num_outputs));
}

TEST(HostOpsTensorTable, TheRegistryHasTheOpsWithHostImplementations) {
  for (const char* op :
       {"Concat", "Pad",   "Squeeze", "Unsqueeze",   "Gather",          "Slice",  "Split",
        "Cast",   "Shape", "Size",    "Range",       "ConstantOfShape", "Expand", "Where",
        "Equal",  "Less",  "Greater", "LessOrEqual", "GreaterOrEqual",  "Not",    "And",
        "Or",     "Xor",   "Floor",   "Ceil",        "Round",           "Tile"}) {
    const npu::ops::OpSchema* s = npu::ops::find(op);
    ASSERT_NE(s, nullptr) << op;
    EXPECT_NE(s->host, nullptr) << op;
    EXPECT_EQ(s->name, op);
  }
}

TEST(HostOpsTensorConcat, AxesDtypesAndErrors) {
  const NpyArray a = f32({2, 2}, {1, 2, 3, 4}), b = f32({2, 1}, {5, 6});
  NpyArray y = run1("Concat", {&a, &b}, {{"axis", 1}});
  EXPECT_EQ(y.shape, (Shape{2, 3}));
  EXPECT_EQ(y.values<float>(), (std::vector<float>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(run1("Concat", {&a, &b}, {{"axis", -1}}), y);

  const NpyArray c = i64({1, 2}, {kI64Max, -1}), d = i64({2, 2}, {1, 2, 3, 4});
  y = run1("Concat", {&c, &d}, {{"axis", 0}});
  EXPECT_EQ(y.shape, (Shape{3, 2}));
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{kI64Max, -1, 1, 2, 3, 4}));

  const NpyArray e = f32({0, 2}, {});
  EXPECT_EQ(run1("Concat", {&e, &a}, {{"axis", 0}}), a);

  EXPECT_THAT(error_of("Concat", {&a, &b}, {{"axis", 0}}), HasSubstr("does not match"));
  EXPECT_THAT(error_of("Concat", {&a, &c}, {{"axis", 0}}), HasSubstr("different dtypes"));
  EXPECT_THAT(error_of("Concat", {&a, &b}, {{"axis", 2}}),
              HasSubstr("axis 2 out of range for rank 2"));
  EXPECT_THAT(error_of("Concat", {&a, nullptr}, {{"axis", 0}}), HasSubstr("missing input 1"));
  EXPECT_THAT(error_of("Concat", {&a}), HasSubstr("missing attribute 'axis'"));
}

TEST(HostOpsTensorSplit, EqualGivenAndUnevenChunks) {
  const NpyArray x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto r = run("Split", {&x}, {{"axis", -1}}, 3);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[1].shape, (Shape{2, 1}));
  EXPECT_EQ((*r)[1].values<float>(), (std::vector<float>{2, 5}));

  const NpyArray sizes = ints({1, 2});
  r = run("Split", {&x, &sizes}, {{"axis", 1}}, 2);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)[0].values<float>(), (std::vector<float>{1, 4}));
  EXPECT_EQ((*r)[1].values<float>(), (std::vector<float>{2, 3, 5, 6}));

  r = run("Split", {&x}, {{"axis", 1}, {"split", {2, 1}}, {"_opset", 11}}, 2);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)[0].values<float>(), (std::vector<float>{1, 2, 4, 5}));

  const NpyArray seven = i64({7}, {0, 1, 2, 3, 4, 5, 6});
  r = run("Split", {&seven}, {{"num_outputs", 3}, {"_opset", 18}}, 3);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)[0].values<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ((*r)[2].values<int64_t>(), (std::vector<int64_t>{6}));

  EXPECT_THAT(error_of("Split", {&seven}, {{"_opset", 13}}, 3),
              HasSubstr("does not split into 3 equal parts"));
  const NpyArray bad = ints({1, 1});
  EXPECT_THAT(error_of("Split", {&x, &bad}, {{"axis", 1}}, 2), HasSubstr("does not cut 3"));
  EXPECT_THAT(error_of("Split", {&seven}, {{"num_outputs", 2}, {"_opset", 18}}, 3),
              HasSubstr("num_outputs 2"));
}

TEST(HostOpsTensorGather, AxesNegativeIndicesAndRanks) {
  const NpyArray x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  const NpyArray idx = i32({2}, {-1, 0});
  NpyArray y = run1("Gather", {&x, &idx});
  EXPECT_EQ(y.shape, (Shape{2, 2}));
  EXPECT_EQ(y.values<float>(), (std::vector<float>{5, 6, 1, 2}));

  const NpyArray idx2 = i64({2, 2}, {1, 1, 0, -2});
  y = run1("Gather", {&x, &idx2}, {{"axis", -1}});
  EXPECT_EQ(y.shape, (Shape{3, 2, 2}));
  EXPECT_EQ(y.values<float>(), (std::vector<float>{2, 2, 1, 1, 4, 4, 3, 3, 6, 6, 5, 5}));

  const NpyArray scalar = i64({}, {2});
  y = run1("Gather", {&x, &scalar});
  EXPECT_EQ(y.shape, (Shape{2}));
  EXPECT_EQ(y.values<float>(), (std::vector<float>{5, 6}));

  const NpyArray flags = b8({3}, {true, false, true});
  const NpyArray one = i64({1}, {1});
  EXPECT_EQ(run1("Gather", {&flags, &one}).values<bool>(), (std::vector<bool>{false}));

  const NpyArray out_of_range = i64({1}, {3}), too_negative = i64({1}, {-4});
  EXPECT_THAT(error_of("Gather", {&x, &out_of_range}),
              HasSubstr("index 3 is out of range for axis 0 of size 3"));
  EXPECT_THAT(error_of("Gather", {&x, &too_negative}), HasSubstr("index -4 is out of range"));
  const NpyArray float_idx = f32({1}, {0});
  EXPECT_THAT(error_of("Gather", {&x, &float_idx}), HasSubstr("indices must be int32 or int64"));
  EXPECT_THAT(error_of("Gather", {&x, &idx}, {{"axis", 2}}), HasSubstr("axis 2 out of range"));
  EXPECT_THAT(error_of("Gather", {&x}), HasSubstr("missing input 1"));
}

TEST(HostOpsTensorSlice, ClampingStepsAndAxes) {
  const NpyArray x = i64({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  const NpyArray starts = ints({0, 1}), ends = ints({kI64Max, 3});
  NpyArray y = run1("Slice", {&x, &starts, &ends});
  EXPECT_EQ(y.shape, (Shape{2, 2}));
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{1, 2, 5, 6}));

  // Reverse the last axis: start -1, end INT64_MIN, step -1.
  const NpyArray rs = ints({-1}), re = ints({kI64Min}), ra = ints({-1}), rstep = ints({-1});
  y = run1("Slice", {&x, &rs, &re, &ra, &rstep});
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{3, 2, 1, 0, 7, 6, 5, 4}));

  // Out-of-range start clamps; step 2; step -2 from a start beyond the end.
  const NpyArray s2 = ints({-100}), e2 = ints({100}), a2 = ints({1}), st2 = ints({2});
  EXPECT_EQ(run1("Slice", {&x, &s2, &e2, &a2, &st2}).values<int64_t>(),
            (std::vector<int64_t>{0, 2, 4, 6}));
  const NpyArray s3 = ints({100}), e3 = ints({0}), st3 = ints({-2});
  EXPECT_EQ(run1("Slice", {&x, &s3, &e3, &a2, &st3}).values<int64_t>(),
            (std::vector<int64_t>{3, 1, 7, 5}));

  // Empty results: start past end, and a huge negative step on a 0-sized axis.
  const NpyArray s4 = ints({3}), e4 = ints({1});
  y = run1("Slice", {&x, &s4, &e4, &a2});
  EXPECT_EQ(y.shape, (Shape{2, 0}));
  const NpyArray empty = f32({0, 3}, {});
  const NpyArray z = ints({0}), big = ints({kI64Min});
  EXPECT_EQ(run1("Slice", {&empty, &z, &big, &z, &big}).shape, (Shape{0, 3}));

  // Opset < 10: attributes.
  y = run1("Slice", {&x}, {{"starts", {1}}, {"ends", {2}}, {"axes", {0}}, {"_opset", 1}});
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{4, 5, 6, 7}));

  const NpyArray zero_step = ints({0});
  EXPECT_THAT(error_of("Slice", {&x, &rs, &re, &ra, &zero_step}), HasSubstr("step is 0"));
  const NpyArray twice = ints({1, -1}), two = ints({0, 0});
  EXPECT_THAT(error_of("Slice", {&x, &two, &two, &twice}), HasSubstr("is repeated"));
  EXPECT_THAT(error_of("Slice", {&x, &starts, &re}), HasSubstr("different lengths"));
  EXPECT_THAT(error_of("Slice", {&x, &starts}), HasSubstr("missing ends"));
  const NpyArray far_axis = ints({2});
  EXPECT_THAT(error_of("Slice", {&x, &rs, &re, &far_axis}), HasSubstr("axis 2 out of range"));
}

TEST(HostOpsTensorPad, ModesOpsetsAndErrors) {
  const NpyArray x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const NpyArray pads = ints({0, 1, 1, 0}), value = f32({}, {9});
  NpyArray y = run1("Pad", {&x, &pads, &value});
  EXPECT_EQ(y.shape, (Shape{3, 4}));
  EXPECT_EQ(y.values<float>(), (std::vector<float>{9, 1, 2, 3, 9, 4, 5, 6, 9, 9, 9, 9}));

  const NpyArray pads2 = ints({0, 2, 0, 2});
  EXPECT_EQ(run1("Pad", {&x, &pads2}, {{"mode", "reflect"}}).values<float>(),
            (std::vector<float>{3, 2, 1, 2, 3, 2, 1, 6, 5, 4, 5, 6, 5, 4}));
  EXPECT_EQ(run1("Pad", {&x, &pads2}, {{"mode", "edge"}}).values<float>(),
            (std::vector<float>{1, 1, 1, 2, 3, 3, 3, 4, 4, 4, 5, 6, 6, 6}));
  EXPECT_EQ(run1("Pad", {&x, &pads2}, {{"mode", "wrap"}}).values<float>(),
            (std::vector<float>{2, 3, 1, 2, 3, 1, 2, 5, 6, 4, 5, 6, 4, 5}));

  // Negative pads crop; opset 2 takes pads and value as attributes.
  const NpyArray crop = ints({0, -1, 0, 0});
  EXPECT_EQ(run1("Pad", {&x, &crop}).values<float>(), (std::vector<float>{2, 3, 5, 6}));
  y = run1("Pad", {&x}, {{"pads", {1, 0, 0, 0}}, {"value", 1.5}, {"_opset", 2}});
  EXPECT_EQ(y.values<float>(), (std::vector<float>{1.5, 1.5, 1.5, 1, 2, 3, 4, 5, 6}));

  // Opset 18 axes input; int64 data with an int64 constant.
  const NpyArray v = i64({3}, {1, 2, 3}), p = ints({1, 2}), c = i64({}, {-7}), axes = ints({-1});
  EXPECT_EQ(run1("Pad", {&v, &p, &c, &axes}, {{"_opset", 18}}).values<int64_t>(),
            (std::vector<int64_t>{-7, 1, 2, 3, -7, -7}));

  EXPECT_THAT(error_of("Pad", {&x, &p}), HasSubstr("pads has 2 values for 2 axes"));
  EXPECT_THAT(error_of("Pad", {&x, &pads}, {{"mode", "mirror"}}),
              HasSubstr("mode 'mirror' is not supported"));
  const NpyArray empty = f32({0}, {}), one_each = ints({1, 1});
  EXPECT_THAT(error_of("Pad", {&empty, &one_each}, {{"mode", "edge"}}),
              HasSubstr("cannot pad empty axis 0"));
  EXPECT_EQ(run1("Pad", {&empty, &one_each}).values<float>(), (std::vector<float>{0, 0}));
  const NpyArray too_much = ints({0, -4, 0, 0});
  EXPECT_THAT(error_of("Pad", {&x, &too_much}), HasSubstr("negative dimension"));
  EXPECT_THAT(error_of("Pad", {&x}), HasSubstr("missing pads"));
}

TEST(HostOpsTensorSqueeze, AttributeInputAndAllOnes) {
  const NpyArray x = f32({1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(run1("Squeeze", {&x}, {{"axes", {0}}, {"_opset", 11}}).shape, (Shape{3, 1}));
  const NpyArray last = ints({-1});
  EXPECT_EQ(run1("Squeeze", {&x, &last}).shape, (Shape{1, 3}));
  NpyArray y = run1("Squeeze", {&x});
  EXPECT_EQ(y.shape, (Shape{3}));
  EXPECT_EQ(y.values<float>(), (std::vector<float>{1, 2, 3}));
  const NpyArray middle = ints({1});
  EXPECT_THAT(error_of("Squeeze", {&x, &middle}), HasSubstr("axis 1 of shape [1, 3, 1]"));
  const NpyArray far = ints({3});
  EXPECT_THAT(error_of("Squeeze", {&x, &far}), HasSubstr("axis 3 out of range"));
}

TEST(HostOpsTensorUnsqueeze, AxesOfTheOutputRank) {
  const NpyArray x = b8({3}, {true, false, true});
  const NpyArray axes = ints({0, -1});
  NpyArray y = run1("Unsqueeze", {&x, &axes});
  EXPECT_EQ(y.shape, (Shape{1, 3, 1}));
  EXPECT_EQ(y.dtype, DType::kBool);
  EXPECT_EQ(run1("Unsqueeze", {&x}, {{"axes", {1}}, {"_opset", 11}}).shape, (Shape{3, 1}));
  const NpyArray twice = ints({0, -3});
  EXPECT_THAT(error_of("Unsqueeze", {&x, &twice}), HasSubstr("is repeated"));
  EXPECT_THAT(error_of("Unsqueeze", {&x}), HasSubstr("missing axes"));
  const NpyArray far = ints({2});
  EXPECT_THAT(error_of("Unsqueeze", {&x, &far}), HasSubstr("axis 2 out of range for rank 2"));
}

TEST(HostOpsTensorCast, TruncatesSaturatesAndWraps) {
  const NpyArray x = f32({8}, {1.9f, -1.9f, kNaN, kInf, -kInf, 3e9f, -3e9f, 0.5f});
  EXPECT_EQ(run1("Cast", {&x}, {{"to", 6}}).values<int32_t>(),
            (std::vector<int32_t>{1, -1, 0, INT32_MAX, INT32_MIN, INT32_MAX, INT32_MIN, 0}));
  EXPECT_EQ(run1("Cast", {&x}, {{"to", 2}}).values<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 0, 255, 0, 255, 0, 0}));
  EXPECT_EQ(run1("Cast", {&x}, {{"to", 7}}).values<int64_t>(),
            (std::vector<int64_t>{1, -1, 0, kI64Max, kI64Min, 3000000000, -3000000000, 0}));
  EXPECT_EQ(run1("Cast", {&x}, {{"to", 9}}).values<bool>(),
            (std::vector<bool>{true, true, true, true, true, true, true, true}));

  const NpyArray big = i64({3}, {300, -129, 0});
  EXPECT_EQ(run1("Cast", {&big}, {{"to", 3}}).values<int8_t>(), (std::vector<int8_t>{44, 127, 0}));
  EXPECT_EQ(run1("Cast", {&big}, {{"to", 9}}).values<bool>(),
            (std::vector<bool>{true, true, false}));

  const NpyArray flags = b8({2}, {true, false});
  EXPECT_EQ(run1("Cast", {&flags}, {{"to", 1}}).values<float>(), (std::vector<float>{1, 0}));

  const NpyArray d = NpyArray::of<double>({3}, std::vector<double>{1e300, -1e300, 0.25});
  EXPECT_EQ(run1("Cast", {&d}, {{"to", 1}}).values<float>(),
            (std::vector<float>{kInf, -kInf, 0.25f}));
  EXPECT_EQ(run1("Cast", {&x}, {{"to", 11}}).values<double>()[0], double{1.9f});

  EXPECT_THAT(error_of("Cast", {&x}, {{"to", 16}}), HasSubstr("to 16 is not supported"));

  // float16 (to = 10) through float32: round to nearest even, overflow to inf; back exactly.
  const NpyArray w = f32({4}, std::vector<float>{1.9f, 65520.0f, 2049.0f, -0.0f});
  const NpyArray h = run1("Cast", {&w}, {{"to", 10}});
  ASSERT_EQ(h.dtype, npu::format::DType::kFloat16);
  EXPECT_EQ(npu::format::to_floats(h),
            (std::vector<float>{1.900390625f, kInf, 2048.0f, -0.0f}));  // 2049 ties to even
  EXPECT_EQ(run1("Cast", {&h}, {{"to", 1}}).values<float>(),
            (std::vector<float>{1.900390625f, kInf, 2048.0f, -0.0f}));
  EXPECT_EQ(run1("Cast", {&h}, {{"to", 6}}).values<int32_t>()[0], 1);
  EXPECT_THAT(error_of("Cast", {&x}), HasSubstr("missing attribute 'to'"));
  EXPECT_THAT(error_of("Cast", {&x}, {{"to", "float"}}), HasSubstr("attribute to is not an int"));
}

TEST(HostOpsTensorShape, ShapeWithStartEndAndSize) {
  const NpyArray x = f32({2, 3, 4}, std::vector<float>(24));
  NpyArray y = run1("Shape", {&x});
  EXPECT_EQ(y.dtype, DType::kInt64);
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(run1("Shape", {&x}, {{"start", -2}}).values<int64_t>(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(run1("Shape", {&x}, {{"start", 1}, {"end", -1}}).values<int64_t>(),
            (std::vector<int64_t>{3}));
  EXPECT_EQ(run1("Shape", {&x}, {{"start", 5}, {"end", -10}}).shape, (Shape{0}));
  y = run1("Size", {&x});
  EXPECT_EQ(y.shape, Shape{});
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>{24}));
  EXPECT_THAT(error_of("Size", {}), HasSubstr("missing input 0"));
}

TEST(HostOpsTensorRange, FloatsIntsAndEmpty) {
  const NpyArray s = f32({}, {1}), l = f32({}, {5}), d = f32({}, {1.5});
  EXPECT_EQ(run1("Range", {&s, &l, &d}).values<float>(), (std::vector<float>{1, 2.5, 4}));
  const NpyArray a = i64({}, {10}), b = i64({}, {4}), c = i64({}, {-3});
  EXPECT_EQ(run1("Range", {&a, &b, &c}).values<int64_t>(), (std::vector<int64_t>{10, 7}));
  const NpyArray up = i64({}, {1});
  EXPECT_EQ(run1("Range", {&a, &b, &up}).shape, (Shape{0}));
  const NpyArray lo = i32({}, {-2}), hi = i32({}, {2}), st = i32({}, {2});
  EXPECT_EQ(run1("Range", {&lo, &hi, &st}).values<int32_t>(), (std::vector<int32_t>{-2, 0}));

  const NpyArray zero = i64({}, {0});
  EXPECT_THAT(error_of("Range", {&a, &b, &zero}), HasSubstr("delta is 0"));
  EXPECT_THAT(error_of("Range", {&a, &b, &d}), HasSubstr("different dtypes"));
  const NpyArray vec = i64({2}, {1, 2});
  EXPECT_THAT(error_of("Range", {&a, &vec, &up}), HasSubstr("input 1 is not a scalar"));
  const NpyArray min = i64({}, {kI64Min}), max = i64({}, {kI64Max});
  EXPECT_THAT(error_of("Range", {&min, &max, &up}), HasSubstr("too large"));
  const NpyArray u = NpyArray::of<uint8_t>({}, std::vector<uint8_t>{1});
  EXPECT_THAT(error_of("Range", {&u, &u, &u}), HasSubstr("dtype uint8 is not supported"));
}

TEST(HostOpsTensorConstantOfShape, ValueTensorAndDefaults) {
  const NpyArray shape = ints({2, 3});
  NpyArray y = run1("ConstantOfShape", {&shape});
  EXPECT_EQ(y, NpyArray::zeros(DType::kFloat32, {2, 3}));
  y = run1("ConstantOfShape", {&shape},
           {{"value", {{"dtype", "int64"}, {"dims", {1}}, {"values", {7}}}}});
  EXPECT_EQ(y.values<int64_t>(), (std::vector<int64_t>(6, 7)));
  const NpyArray scalar = ints({});
  y = run1("ConstantOfShape", {&scalar},
           {{"value", {{"dtype", "bool"}, {"dims", {1}}, {"values", {true}}}}});
  EXPECT_EQ(y, b8({}, {true}));

  EXPECT_THAT(error_of("ConstantOfShape", {&shape},
                       {{"value", {{"dtype", "int8"}, {"dims", {1}}, {"values", {300}}}}}),
              HasSubstr("not int8"));
  EXPECT_THAT(error_of("ConstantOfShape", {&shape},
                       {{"value", {{"dtype", "float32"}, {"dims", {2}}, {"values", {1, 2}}}}}),
              HasSubstr("must have one element"));
  EXPECT_THAT(error_of("ConstantOfShape", {&shape}, {{"value", 3}}), HasSubstr("not a tensor"));
  const NpyArray negative = ints({2, -1});
  EXPECT_THAT(error_of("ConstantOfShape", {&negative}), HasSubstr("negative dimension"));
  const NpyArray huge = ints({1 << 20, 1 << 20, 1 << 20});
  EXPECT_THAT(error_of("ConstantOfShape", {&huge}), HasSubstr("too large"));
}

TEST(HostOpsTensorExpand, BidirectionalBroadcast) {
  const NpyArray x = f32({3, 1}, {1, 2, 3});
  const NpyArray shape = ints({2, 1, 2});
  NpyArray y = run1("Expand", {&x, &shape});
  EXPECT_EQ(y.shape, (Shape{2, 3, 2}));
  EXPECT_EQ(y.values<float>(), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  const NpyArray smaller = ints({1});
  EXPECT_EQ(run1("Expand", {&x, &smaller}), x);
  const NpyArray bad = ints({2, 2});
  EXPECT_THAT(error_of("Expand", {&x, &bad}), HasSubstr("shapes [3, 1] and [2, 2] do not"));
  const NpyArray neg = ints({-1});
  EXPECT_THAT(error_of("Expand", {&x, &neg}), HasSubstr("negative dimension"));
}

TEST(HostOpsTensorTile, RepeatsPerAxis) {
  const NpyArray x = i64({2, 2}, {1, 2, 3, 4});
  const NpyArray reps = ints({2, 1});
  EXPECT_EQ(run1("Tile", {&x, &reps}).values<int64_t>(),
            (std::vector<int64_t>{1, 2, 3, 4, 1, 2, 3, 4}));
  const NpyArray b = b8({2}, {true, false}), r3 = ints({3});
  EXPECT_EQ(run1("Tile", {&b, &r3}).values<bool>(),
            (std::vector<bool>{true, false, true, false, true, false}));
  const NpyArray r0 = ints({0, 2});
  EXPECT_EQ(run1("Tile", {&x, &r0}).shape, (Shape{0, 4}));
  EXPECT_THAT(error_of("Tile", {&x, &r3}), HasSubstr("does not match rank 2"));
  const NpyArray neg = ints({1, -1});
  EXPECT_THAT(error_of("Tile", {&x, &neg}), HasSubstr("negative value"));
  const NpyArray huge = ints({kI64Max, 2});
  EXPECT_THAT(error_of("Tile", {&x, &huge}), HasSubstr("too large"));
}

TEST(HostOpsTensorWhere, BroadcastsAllThree) {
  const NpyArray cond = b8({2}, {true, false});
  const NpyArray x = i64({2, 2}, {1, 2, 3, 4}), y = i64({}, {-1});
  NpyArray out = run1("Where", {&cond, &x, &y});
  EXPECT_EQ(out.shape, (Shape{2, 2}));
  EXPECT_EQ(out.values<int64_t>(), (std::vector<int64_t>{1, -1, 3, -1}));
  const NpyArray fx = f32({1}, {1});
  EXPECT_THAT(error_of("Where", {&cond, &x, &fx}), HasSubstr("different dtypes"));
  EXPECT_THAT(error_of("Where", {&x, &x, &y}), HasSubstr("dtype int64 is not supported"));
  const NpyArray three = b8({3}, {true, true, true});
  EXPECT_THAT(error_of("Where", {&three, &x, &y}), HasSubstr("do not broadcast"));
}

TEST(HostOpsTensorCompare, AllComparisonsWithBroadcastAndNaN) {
  const NpyArray a = f32({2, 2}, {1, 2, kNaN, 4}), b = f32({2}, {2, 2});
  EXPECT_EQ(run1("Equal", {&a, &b}).values<bool>(), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(run1("Less", {&a, &b}).values<bool>(), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(run1("LessOrEqual", {&a, &b}).values<bool>(),
            (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(run1("Greater", {&a, &b}).values<bool>(),
            (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(run1("GreaterOrEqual", {&a, &b}).values<bool>(),
            (std::vector<bool>{false, true, false, true}));
  const NpyArray x = i64({3}, {kI64Min, 0, kI64Max}), zero = i64({}, {0});
  EXPECT_EQ(run1("Less", {&x, &zero}).values<bool>(), (std::vector<bool>{true, false, false}));
  const NpyArray p = b8({2}, {true, false}), q = b8({2}, {true, true});
  EXPECT_EQ(run1("Equal", {&p, &q}).values<bool>(), (std::vector<bool>{true, false}));
  EXPECT_THAT(error_of("Less", {&p, &q}), HasSubstr("dtype bool is not supported"));
  EXPECT_THAT(error_of("Equal", {&a, &x}), HasSubstr("different dtypes"));
  EXPECT_THAT(error_of("Greater", {&a}), HasSubstr("missing input 1"));
}

TEST(HostOpsTensorLogic, AndOrXorNot) {
  const NpyArray p = b8({2, 2}, {true, true, false, false}), q = b8({2}, {true, false});
  EXPECT_EQ(run1("And", {&p, &q}).values<bool>(), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(run1("Or", {&p, &q}).values<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(run1("Xor", {&p, &q}).values<bool>(), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(run1("Not", {&q}).values<bool>(), (std::vector<bool>{false, true}));
  const NpyArray n = i32({2}, {1, 0});
  EXPECT_THAT(error_of("And", {&n, &n}), HasSubstr("dtype int32 is not supported"));
  EXPECT_THAT(error_of("Not", {&n}), HasSubstr("dtype int32 is not supported"));
}

TEST(HostOpsTensorRounding, FloorCeilRoundHalfToEven) {
  const NpyArray x = f32({7}, {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 2.6f});
  EXPECT_EQ(run1("Round", {&x}).values<float>(), (std::vector<float>{-2, -2, 0, 0, 2, 2, 3}));
  EXPECT_EQ(run1("Floor", {&x}).values<float>(), (std::vector<float>{-3, -2, -1, 0, 1, 2, 2}));
  EXPECT_EQ(run1("Ceil", {&x}).values<float>(), (std::vector<float>{-2, -1, 0, 1, 2, 3, 3}));
  const NpyArray d = NpyArray::of<double>({2}, std::vector<double>{3.5, -0.25});
  EXPECT_EQ(run1("Round", {&d}).values<double>(), (std::vector<double>{4, 0}));
  const NpyArray nan = f32({1}, {kNaN});
  EXPECT_TRUE(std::isnan(run1("Floor", {&nan}).values<float>()[0]));
  const NpyArray n = i64({1}, {1});
  EXPECT_THAT(error_of("Round", {&n}), HasSubstr("dtype int64 is not supported"));
}

TEST(HostOpsTensorRobustness, MalformedInputsAreErrors) {
  NpyArray short_data = f32({4}, {1, 2, 3, 4});
  short_data.data.resize(8);
  const NpyArray idx = i64({1}, {3});
  for (const char* op : {"Gather", "Concat", "Tile", "Where", "Equal", "Cast"}) {
    auto r = run(op, {&short_data, &idx}, {{"to", 1}, {"axis", 0}});
    ASSERT_FALSE(r) << op;
    EXPECT_THAT(r.error().message, HasSubstr(std::string(op) + ": input 0")) << op;
  }
  NpyArray bad_bool = b8({1}, {true});
  bad_bool.data[0] = std::byte{2};
  EXPECT_THAT(error_of("Not", {&bad_bool}), HasSubstr("Not: input 0"));
  const NpyArray x = f32({2}, {1, 2});
  const NpyArray huge_pads = ints({kI64Max, 0});
  EXPECT_THAT(error_of("Pad", {&x, &huge_pads}), HasSubstr("out of range"));
  EXPECT_THAT(error_of("Squeeze", {&x}, {{"axes", "zero"}, {"_opset", 11}}),
              HasSubstr("attribute axes is not a list of ints"));
}

}  // namespace
