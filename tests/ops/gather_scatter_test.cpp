// GatherElements and ScatterND (ops/src/gather_scatter.cpp) through npu::ops::run(): the
// spec's examples, negative indices, slices, every reduction at the opsets that have it, and
// the one-line errors for indices out of range and shapes that do not fit.
#include "op_test_util.h"

namespace npu::ops::test {
namespace {

using ::testing::HasSubstr;

TEST(GatherElements, SpecExamplesAndNegativeIndices) {
  const NpyArray d2 = f32({2, 2}, {1, 2, 3, 4});
  const NpyArray i2 = i64({2, 2}, {0, 0, 1, 0});
  EXPECT_EQ(run1("GatherElements", {&d2, &i2}, {{"axis", 1}}, 13).values<float>(),
            (std::vector<float>{1, 1, 4, 3}));
  const NpyArray d3 = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const NpyArray i3 = i32({2, 3}, {1, 2, 0, 2, 0, 0});
  const NpyArray y = run1("GatherElements", {&d3, &i3}, json::object(), 11);
  EXPECT_EQ(y.shape, (Shape{2, 3}));
  EXPECT_EQ(y.values<float>(), (std::vector<float>{4, 8, 3, 7, 2, 3}));
  const NpyArray neg = i64({2, 3}, {-1, -2, 0, -2, 0, 0});
  EXPECT_EQ(run1("GatherElements", {&d3, &neg}, {{"axis", -2}}, 13).values<float>(),
            (std::vector<float>{7, 5, 3, 4, 2, 3}));
  // Any dtype.
  const NpyArray b = NpyArray::of<bool>({2}, std::vector<bool>{false, true});
  const NpyArray ib = i64({3}, {1, 1, 0});
  EXPECT_EQ(run1("GatherElements", {&b, &ib}, json::object(), 13).values<bool>().size(), 3u);
}

TEST(GatherElements, Errors) {
  const NpyArray d = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const NpyArray bad = i64({1, 2}, {0, 3});
  EXPECT_EQ(error_of("GatherElements", {&d, &bad}, json::object(), 13),
            "GatherElements: index 3 is out of range for axis 0 of size 3");
  const NpyArray low = i64({1, 1}, {-4});
  EXPECT_THAT(error_of("GatherElements", {&d, &low}, {{"axis", 1}}, 13),
              HasSubstr("index -4 is out of range for axis 1 of size 3"));
  const NpyArray rank1 = i64({2}, {0, 1});
  EXPECT_THAT(error_of("GatherElements", {&d, &rank1}, json::object(), 13),
              HasSubstr("must have the rank of data"));
  const NpyArray wide = i64({1, 4}, {0, 0, 0, 0});
  EXPECT_THAT(error_of("GatherElements", {&d, &wide}, json::object(), 13),
              HasSubstr("exceed data [3, 3] along axis 1"));
  const NpyArray fl = f32({1, 1}, {0});
  EXPECT_THAT(error_of("GatherElements", {&d, &fl}, json::object(), 13),
              HasSubstr("indices must be int32 or int64"));
}

TEST(ScatterND, ElementsAndSlices) {
  const NpyArray d = f32({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  const NpyArray i = i64({4, 1}, {4, 3, 1, 7});
  const NpyArray u = f32({4}, {9, 10, 11, 12});
  EXPECT_EQ(run1("ScatterND", {&d, &i, &u}, json::object(), 11).values<float>(),
            (std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12}));
  // A whole row by index [1], and an element by [0, -1].
  const NpyArray m = f32({2, 2}, {1, 2, 3, 4});
  const NpyArray row = i64({1, 1}, {1});
  const NpyArray r = f32({1, 2}, {5, 6});
  EXPECT_EQ(run1("ScatterND", {&m, &row, &r}, json::object(), 13).values<float>(),
            (std::vector<float>{1, 2, 5, 6}));
  const NpyArray el = i64({1, 2}, {0, -1});
  const NpyArray one = f32({1}, {9});
  EXPECT_EQ(run1("ScatterND", {&m, &el, &one}, json::object(), 13).values<float>(),
            (std::vector<float>{1, 9, 3, 4}));
}

TEST(ScatterND, Reductions) {
  const NpyArray d = i64({4}, {1, 2, 3, 4});
  const NpyArray i = i64({3, 1}, {0, 0, 2});
  const NpyArray u = i64({3}, {1, 2, 3});
  EXPECT_EQ(run1("ScatterND", {&d, &i, &u}, {{"reduction", "add"}}, 16).values<int64_t>(),
            (std::vector<int64_t>{4, 2, 6, 4}));
  EXPECT_EQ(run1("ScatterND", {&d, &i, &u}, {{"reduction", "mul"}}, 16).values<int64_t>(),
            (std::vector<int64_t>{2, 2, 9, 4}));
  const NpyArray f = f32({4}, {1, 5, 3, 4});
  const NpyArray i11 = i64({2, 1}, {1, 1});
  const NpyArray u27 = f32({2}, {2, 7});
  EXPECT_EQ(run1("ScatterND", {&f, &i11, &u27}, {{"reduction", "max"}}, 18).values<float>(),
            (std::vector<float>{1, 7, 3, 4}));
  EXPECT_EQ(run1("ScatterND", {&f, &i11, &u27}, {{"reduction", "min"}}, 18).values<float>(),
            (std::vector<float>{1, 2, 3, 4}));
  EXPECT_THAT(error_of("ScatterND", {&f, &i11, &u27}, {{"reduction", "max"}}, 16),
              HasSubstr("reduction 'max' is not supported at opset 16"));
  EXPECT_THAT(error_of("ScatterND", {&d, &i, &u}, {{"reduction", "add"}}, 13),
              HasSubstr("reduction 'add' is not supported at opset 13"));
}

TEST(ScatterND, Errors) {
  const NpyArray d = f32({2, 2}, {1, 2, 3, 4});
  const NpyArray i = i64({1, 2}, {0, 2});
  const NpyArray u = f32({1}, {9});
  EXPECT_EQ(error_of("ScatterND", {&d, &i, &u}, json::object(), 13),
            "ScatterND: index 2 is out of range for axis 1 of size 2");
  const NpyArray deep = i64({1, 3}, {0, 0, 0});
  EXPECT_THAT(error_of("ScatterND", {&d, &deep, &u}, json::object(), 13),
              HasSubstr("the last dim must be in [1, 2]"));
  const NpyArray ok_i = i64({1, 1}, {0});
  EXPECT_THAT(error_of("ScatterND", {&d, &ok_i, &u}, json::object(), 13),
              HasSubstr("updates [1] do not match [1, 2]"));
  const NpyArray ui = i64({1}, {9});
  EXPECT_THAT(error_of("ScatterND", {&d, &i, &ui}, json::object(), 13),
              HasSubstr("inputs have different dtypes"));
}

}  // namespace
}  // namespace npu::ops::test
