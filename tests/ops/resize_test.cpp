// Resize and Upsample (ops/src/resize.cpp) through npu::ops::run(): hand-computed cases of
// every nearest_mode and the coordinate transformations, the opset-10/Upsample forms, integer
// output, and opset 18/19 features (antialias, axes, keep_aspect_ratio_policy,
// half_pixel_symmetric) against values from a NumPy port of ONNX's reference implementation
// (onnx/reference/ops/op_resize.py); then the one-line errors and the size and work limits.
#include "op_test_util.h"

namespace npu::ops::test {
namespace {

using ::testing::HasSubstr;

NpyArray sizes(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return i64({n}, std::move(v));
}
NpyArray scales(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return f32({n}, std::move(v));
}

/// Resize-13 of x to `size` (1-d) with the attributes.
std::vector<float> resize_1d(const NpyArray& x, int64_t size, json attrs) {
  const NpyArray z = sizes({size});
  return run1("Resize", {&x, nullptr, nullptr, &z}, std::move(attrs), 13).values<float>();
}

TEST(Resize, NearestModes) {
  const NpyArray x = f32({4}, {1, 2, 3, 4});
  const json asym = {{"coordinate_transformation_mode", "asymmetric"}};
  // x / 2: ties at .5 go down (round_prefer_floor) or up (round_prefer_ceil); clamped at 3.
  json a = asym;
  EXPECT_EQ(resize_1d(x, 8, a), (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));
  a["nearest_mode"] = "round_prefer_ceil";
  EXPECT_EQ(resize_1d(x, 8, a), (std::vector<float>{1, 2, 2, 3, 3, 4, 4, 4}));
  // x / 3: floor and ceil.
  a["nearest_mode"] = "floor";
  EXPECT_EQ(resize_1d(x, 12, a), (std::vector<float>{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}));
  a["nearest_mode"] = "ceil";
  EXPECT_EQ(resize_1d(x, 12, a), (std::vector<float>{1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 4}));
  // half_pixel (default) downsampling 4 -> 3: (x + 0.5) * 4/3 - 0.5 = 0.17, 1.5, 2.83.
  EXPECT_EQ(resize_1d(x, 3, json::object()), (std::vector<float>{1, 2, 4}));
  // tf_half_pixel_for_nn (opsets 11-12): (x + 0.5) * 4/3 = 0.67, 2, 3.33.
  const NpyArray z = sizes({3});
  const NpyArray empty = f32({0}, {});
  auto y = run1("Resize", {&x, &empty, &empty, &z},
                {{"coordinate_transformation_mode", "tf_half_pixel_for_nn"}}, 11);
  EXPECT_EQ(y.values<float>(), (std::vector<float>{2, 3, 4}));
}

TEST(Resize, LinearCoordinateModes) {
  const NpyArray x = f32({2}, {1, 2});
  // half_pixel: -0.25, 0.25, 0.75, 1.25 (the ends take the edge).
  expect_near(NpyArray::of<float>({4}, resize_1d(x, 4, {{"mode", "linear"}})), {4},
              {1, 1.25f, 1.75f, 2});
  expect_near(
      NpyArray::of<float>({4}, resize_1d(x, 4,
                                         {{"mode", "linear"},
                                          {"coordinate_transformation_mode", "align_corners"}})),
      {4}, {1, 4.0f / 3, 5.0f / 3, 2});
  expect_near(
      NpyArray::of<float>(
          {4},
          resize_1d(x, 4, {{"mode", "linear"}, {"coordinate_transformation_mode", "asymmetric"}})),
      {4}, {1, 1.5f, 2, 2});
  // pytorch_half_pixel to a single element takes coordinate 0 (the spec's rule).
  expect_near(NpyArray::of<float>(
                  {1}, resize_1d(x, 1,
                                 {{"mode", "linear"},
                                  {"coordinate_transformation_mode", "pytorch_half_pixel"}})),
              {1}, {1});
}

TEST(Resize, BilinearScalesAndAlignCornersUseTheFloatWidth) {
  // ONNX's test: 2x4 by 0.6 -> 1x2; align_corners maps with width 4 * 0.6 = 2.4, not 2.
  const NpyArray x = f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const NpyArray s = scales({1, 1, 0.6f, 0.6f});
  expect_near(run1("Resize", {&x, nullptr, &s}, {{"mode", "linear"}}, 13), {1, 1, 1, 2},
              {2.6666665f, 4.333333f});
  expect_near(run1("Resize", {&x, nullptr, &s},
                   {{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}}, 13),
              {1, 1, 1, 2}, {1, 3.142857f});
}

TEST(Resize, CropAndResizeExtrapolates) {
  const NpyArray x = iota_f32({1, 1, 4, 4});
  const NpyArray roi = f32({8}, {0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f});
  const NpyArray z = sizes({1, 1, 3, 3});
  const json attrs = {{"coordinate_transformation_mode", "tf_crop_and_resize"},
                      {"extrapolation_value", 10.0}};
  // nearest: (reference values)
  expect_near(run1("Resize", {&x, &roi, nullptr, &z}, attrs, 13), {1, 1, 3, 3},
              {7, 10, 10, 11, 10, 10, 10, 10, 10});
  json linear = attrs;
  linear["mode"] = "linear";  // ONNX's test_resize_tf_crop_and_resize
  expect_near(run1("Resize", {&x, &roi, nullptr, &z}, linear, 13), {1, 1, 3, 3},
              {7.6f, 10, 10, 12.400001f, 10, 10, 10, 10, 10});
  EXPECT_THAT(error_of("Resize", {&x, nullptr, nullptr, &z}, attrs, 13),
              HasSubstr("tf_crop_and_resize needs roi"));
}

TEST(Resize, CubicExcludeOutsideMatchesTheReference) {
  const NpyArray x = iota_f32({1, 1, 4, 4});
  const NpyArray s = scales({1, 1, 1.5f, 1.5f});
  const NpyArray y = run1("Resize", {&x, nullptr, &s},
                          {{"mode", "cubic"}, {"exclude_outside", 1}, {"cubic_coeff_a", -0.5}}, 13);
  ASSERT_EQ(y.shape, (Shape{1, 1, 6, 6}));
  const auto v = y.view<float>();
  EXPECT_NEAR(v[0], 0.671053f, 1e-5);
  EXPECT_NEAR(v[1], 1.148607f, 1e-5);
  EXPECT_NEAR(v[14], 6.833333f, 1e-5);
  EXPECT_NEAR(v[35], 16.328947f, 1e-5);
}

TEST(Resize, Opset18And19Features) {
  const NpyArray x = iota_f32({1, 1, 4, 4});
  const NpyArray s06 = scales({1, 1, 0.6f, 0.6f});
  // antialias stretches the kernel by 1/scale when downscaling.
  expect_near(run1("Resize", {&x, nullptr, &s06}, {{"mode", "linear"}, {"antialias", 1}}, 18),
              {1, 1, 2, 2}, {2.875f, 4.5f, 9.375f, 11});
  const NpyArray z33 = sizes({1, 1, 3, 3});
  expect_near(
      run1("Resize", {&x, nullptr, nullptr, &z33}, {{"mode", "cubic"}, {"antialias", 1}}, 18),
      {1, 1, 3, 3},
      {1.775009f, 3.120007f, 4.465005f, 7.155002f, 8.5f, 9.844998f, 12.534995f, 13.879993f,
       15.224991f});
  // half_pixel_symmetric centres the 2.4-wide output on the input.
  expect_near(
      run1("Resize", {&x, nullptr, &s06},
           {{"mode", "linear"}, {"coordinate_transformation_mode", "half_pixel_symmetric"}}, 19),
      {1, 1, 2, 2}, {4.333333f, 6, 11, 12.666667f});
  // axes: sizes [3, 2] for dims 3 and 2.
  const NpyArray z32 = sizes({3, 2});
  expect_near(run1("Resize", {&x, nullptr, nullptr, &z32}, {{"axes", {3, -2}}}, 18), {1, 1, 2, 3},
              {1, 2, 4, 9, 10, 12});
  // keep_aspect_ratio_policy: one scale for both axes, min (7/4) or max (8/4) of the sizes'.
  const NpyArray z78 = sizes({7, 8});
  const NpyArray small =
      run1("Resize", {&x, nullptr, nullptr, &z78},
           {{"axes", {2, 3}}, {"keep_aspect_ratio_policy", "not_larger"}, {"mode", "linear"}}, 18);
  ASSERT_EQ(small.shape, (Shape{1, 1, 7, 7}));
  EXPECT_NEAR(small.view<float>()[1], 1.357143f, 1e-5);
  EXPECT_NEAR(small.view<float>()[8], 2.785714f, 1e-5);
  const NpyArray big = run1("Resize", {&x, nullptr, nullptr, &z78},
                            {{"axes", {2, 3}}, {"keep_aspect_ratio_policy", "not_smaller"}}, 18);
  ASSERT_EQ(big.shape, (Shape{1, 1, 8, 8}));
  EXPECT_EQ(big.view<float>()[9], 1);
  EXPECT_EQ(big.view<float>()[63], 16);
}

TEST(Resize, LegacyFormsAndUpsample) {
  // Resize-10: asymmetric; nearest takes ceil when downscaling (ONNX's old test: [1, 3]).
  const NpyArray x = f32({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  const NpyArray s06 = scales({1, 1, 0.6f, 0.6f});
  EXPECT_EQ(run1("Resize", {&x, &s06}, json::object(), 10).values<float>(),
            (std::vector<float>{1, 3}));
  // Upsample-7 (scales attribute) and -9 (input): nearest repeats, linear is asymmetric.
  const NpyArray y = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const std::vector<float> repeated = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2,
                                       3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
  EXPECT_EQ(run1("Upsample", {&y}, {{"scales", {1, 1, 2, 3}}}, 7).values<float>(), repeated);
  const NpyArray s23 = scales({1, 1, 2, 3});
  const NpyArray up = run1("Upsample", {&y, &s23}, json::object(), 9);
  EXPECT_EQ(up.shape, (Shape{1, 1, 4, 6}));
  EXPECT_EQ(up.values<float>(), repeated);
  const NpyArray s12 = scales({1, 2});
  const NpyArray row = f32({1, 2}, {1, 2});
  EXPECT_EQ(run1("Upsample", {&row, &s12}, {{"mode", "linear"}}, 9).values<float>(),
            (std::vector<float>{1, 1.5f, 2, 2}));
  EXPECT_THAT(error_of("Upsample", {&y}, json::object(), 7),
              HasSubstr("missing attribute 'scales'"));
  const NpyArray half = scales({1, 1, 0.5f, 1});
  EXPECT_THAT(error_of("Upsample", {&y, &half}, json::object(), 9), HasSubstr("must be >= 1"));
}

TEST(Resize, IntegersTruncateAndNearestMovesAnyDtype) {
  const NpyArray u8 = NpyArray::of<uint8_t>({2}, std::vector<uint8_t>{0, 255});
  const NpyArray z = sizes({4});
  // 0, 63.75, 191.25, 255 truncated as the reference's astype.
  EXPECT_EQ(run1("Resize", {&u8, nullptr, nullptr, &z}, {{"mode", "linear"}}, 13).values<uint8_t>(),
            (std::vector<uint8_t>{0, 63, 191, 255}));
  const NpyArray b = NpyArray::of<bool>({2}, std::vector<bool>{true, false});
  const NpyArray nb = run1("Resize", {&b, nullptr, nullptr, &z}, json::object(), 13);
  EXPECT_EQ(nb.dtype, DType::kBool);
  EXPECT_EQ(nb.shape, (Shape{4}));
  EXPECT_THAT(error_of("Resize", {&b, nullptr, nullptr, &z}, {{"mode", "linear"}}, 13),
              HasSubstr("dtype bool is not supported by the linear and cubic modes"));
}

TEST(Resize, Errors) {
  const NpyArray x = iota_f32({1, 1, 2, 2});
  const NpyArray s = scales({1, 1, 2, 2});
  const NpyArray z = sizes({1, 1, 4, 4});
  EXPECT_THAT(error_of("Resize", {&x, nullptr, &s, &z}, json::object(), 13),
              HasSubstr("scales and sizes are both given"));
  EXPECT_THAT(error_of("Resize", {&x}, json::object(), 13), HasSubstr("needs scales or sizes"));
  const NpyArray s3 = scales({1, 2, 2});
  EXPECT_THAT(error_of("Resize", {&x, nullptr, &s3}, json::object(), 13),
              HasSubstr("scales has 3 values for 4 axes"));
  const NpyArray neg = scales({1, 1, -2, 2});
  EXPECT_THAT(error_of("Resize", {&x, nullptr, &neg}, json::object(), 13),
              HasSubstr("must be positive and finite"));
  EXPECT_THAT(error_of("Resize", {&x, nullptr, &s}, {{"mode", "area"}}, 13),
              HasSubstr("attribute mode: 'area' is not supported at opset 13"));
  EXPECT_THAT(error_of("Resize", {&x, nullptr, &s}, {{"mode", "cubic"}}, 10),
              HasSubstr("not supported at opset 10"));
  EXPECT_THAT(error_of("Resize", {&x, nullptr, &s},
                       {{"coordinate_transformation_mode", "half_pixel_symmetric"}}, 18),
              HasSubstr("'half_pixel_symmetric' is not supported at opset 18"));
  EXPECT_THAT(error_of("Resize", {&x, nullptr, &s},
                       {{"coordinate_transformation_mode", "tf_half_pixel_for_nn"}}, 13),
              HasSubstr("not supported at opset 13"));
  EXPECT_THAT(error_of("Resize", {&x, nullptr, &s}, {{"axes", {2, 3}}}, 13),
              HasSubstr("attribute axes needs opset 18"));
  EXPECT_THAT(error_of("Resize", {&x, nullptr, &s}, {{"antialias", 1}}, 18),
              HasSubstr("antialias applies to the linear and cubic modes"));
  const NpyArray z2 = sizes({4, 4});
  EXPECT_THAT(error_of("Resize", {&x, nullptr, nullptr, &z2}, {{"axes", {2, 2}}}, 18),
              HasSubstr("axis 2 is repeated"));
}

TEST(Resize, HugeOutputsAndWorkAreRefusedBeforeAllocating) {
  const NpyArray x = iota_f32({1, 1, 2, 2});
  const NpyArray huge = sizes({1, 1, 1000000000, 1000000000});
  auto r = run_op("Resize", {&x, nullptr, nullptr, &huge}, {{"mode", "linear"}}, 13);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EFBIG);
  EXPECT_THAT(r.error().message, HasSubstr("Resize: output shape [1, 1, 1000000000, 1000000000] "
                                           "is too large"));
  const NpyArray s = scales({1, 1, 1e30f, 1});
  auto big = run_op("Resize", {&x, nullptr, &s}, json::object(), 13);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, EFBIG);
  RunOptions little;
  little.max_work = 100;
  const NpyArray z = sizes({1, 1, 16, 16});
  auto w = run_op("Resize", {&x, nullptr, nullptr, &z}, {{"mode", "cubic"}}, 13, little);
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().code, EFBIG);
  EXPECT_THAT(w.error().message, HasSubstr("interpolation taps"));
  EXPECT_THAT(w.error().message, HasSubstr("exceed the host limit of 100"));
  // An empty output is fine; an empty input cannot grow.
  const NpyArray zero = sizes({1, 1, 0, 4});
  EXPECT_EQ(run1("Resize", {&x, nullptr, nullptr, &zero}, json::object(), 13).shape,
            (Shape{1, 1, 0, 4}));
  const NpyArray e = f32({1, 0}, {});
  const NpyArray grow = sizes({1, 3});
  EXPECT_THAT(error_of("Resize", {&e, nullptr, nullptr, &grow}, json::object(), 13),
              HasSubstr("cannot resize the empty input"));
}

}  // namespace
}  // namespace npu::ops::test
