// ConvTranspose (ops/src/conv_transpose.cpp) through npu::ops::run(): hand-computed 1-d cases
// of strides, dilations, pads, output_padding, every auto_pad and output_shape overriding the
// pads; 2-d and 3-d cases with groups, dilations and asymmetric pads against sums computed by
// PyTorch's conv_transpose{2,3}d (cropped for the asymmetric pads) and element by element
// against a direct scatter loop written here; float64; then the one-line errors and the work
// limit.
#include "op_test_util.h"

namespace npu::ops::test {
namespace {

using ::testing::HasSubstr;

/// ((i * a) % b - c) / d for i = 0, 1, ...: small exact binary fractions of both signs.
NpyArray pattern(Shape s, int a, int b, int c, int d) {
  std::vector<float> v(static_cast<size_t>(format::element_count(s)));
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<float>((static_cast<int>(i) * a % b - c)) / static_cast<float>(d);
  }
  return f32(std::move(s), v);
}

/// ConvTranspose-11 of a 1-d [1, 1, n] input with a [1, 1, k] kernel.
std::vector<float> convt_1d(std::vector<float> x, std::vector<float> w, json attrs) {
  const auto n = static_cast<int64_t>(x.size()), k = static_cast<int64_t>(w.size());
  const NpyArray xa = f32({1, 1, n}, std::move(x)), wa = f32({1, 1, k}, std::move(w));
  return run1("ConvTranspose", {&xa, &wa}, std::move(attrs), 11).values<float>();
}

/// The definition, as a scatter: every x[n][c][i] adds x * w[c][m][k] at o = i * s + k * d -
/// pad_begin of the output channels m of c's group (pads: begins; out: the output's spatial
/// shape).
std::vector<double> scatter_reference(const NpyArray& x, const NpyArray& w, const NpyArray* bias,
                                      int64_t group, const Shape& strides, const Shape& dilations,
                                      const Shape& pads, const Shape& out) {
  const size_t rank = strides.size();
  const int64_t n_batch = x.shape[0], in_c = x.shape[1], ocg = w.shape[1], icg = in_c / group;
  const int64_t out_c = ocg * group;
  const Shape in_sp(x.shape.begin() + 2, x.shape.end()), k_sp(w.shape.begin() + 2, w.shape.end());
  const int64_t in_size = format::element_count(in_sp), k_size = format::element_count(k_sp);
  const int64_t out_size = format::element_count(out);
  std::vector<double> y(static_cast<size_t>(n_batch * out_c * out_size), 0.0);
  for (int64_t n = 0; n < n_batch; ++n) {
    for (int64_t m = 0; m < out_c; ++m) {
      const double b = bias ? bias->view<float>()[static_cast<size_t>(m)] : 0.0;
      for (int64_t o = 0; o < out_size; ++o)
        y[static_cast<size_t>((n * out_c + m) * out_size + o)] = b;
    }
    for (int64_t ic = 0; ic < in_c; ++ic) {
      const int64_t g = ic / icg;
      for (int64_t ip = 0; ip < in_size; ++ip) {
        for (int64_t kp = 0; kp < k_size; ++kp) {
          int64_t op = 0;
          bool inside = true;
          for (size_t d = 0, ir = static_cast<size_t>(ip), kr = static_cast<size_t>(kp); d < rank;
               ++d) {
            // Index digits, most significant first.
            int64_t in_stride = 1, k_stride = 1;
            for (size_t e = d + 1; e < rank; ++e) {
              in_stride *= in_sp[e];
              k_stride *= k_sp[e];
            }
            const int64_t i = static_cast<int64_t>(ir) / in_stride;
            const int64_t k = static_cast<int64_t>(kr) / k_stride;
            ir %= static_cast<size_t>(in_stride);
            kr %= static_cast<size_t>(k_stride);
            const int64_t o = i * strides[d] + k * dilations[d] - pads[d];
            inside = inside && o >= 0 && o < out[d];
            op = op * out[d] + o;
          }
          if (!inside) continue;
          const double xv = x.view<float>()[static_cast<size_t>((n * in_c + ic) * in_size + ip)];
          for (int64_t mo = 0; mo < ocg; ++mo) {
            const double wv = w.view<float>()[static_cast<size_t>((ic * ocg + mo) * k_size + kp)];
            y[static_cast<size_t>((n * out_c + g * ocg + mo) * out_size + op)] += xv * wv;
          }
        }
      }
    }
  }
  return y;
}

/// Compares y with the scatter reference element by element, and with PyTorch's sum and
/// sum of y[i] * (i % 7).
void expect_matches(const NpyArray& y, const std::vector<double>& want, double torch_sum,
                    double torch_weighted) {
  const auto v = y.view<float>();
  ASSERT_EQ(v.size(), want.size());
  double sum = 0, weighted = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    EXPECT_NEAR(v[i], want[i], 1e-5) << "element " << i;
    sum += v[i];
    weighted += v[i] * static_cast<double>(i % 7);
  }
  EXPECT_NEAR(sum, torch_sum, 1e-4);
  EXPECT_NEAR(weighted, torch_weighted, 1e-4);
}

TEST(ConvTranspose, OneDimStridesDilationsPadsOutputPadding) {
  // Stride 2, kernel [1, 1]: each input covers two outputs.
  EXPECT_EQ(convt_1d({1, 2, 3}, {1, 1}, {{"strides", {2}}}),
            (std::vector<float>{1, 1, 2, 2, 3, 3}));
  // Pads crop the full output; output_padding adds a position at the end nothing reaches.
  EXPECT_EQ(convt_1d({1, 2, 3}, {1, 1}, {{"strides", {2}}, {"pads", {1, 0}}}),
            (std::vector<float>{1, 2, 2, 3, 3}));
  EXPECT_EQ(convt_1d({1, 2, 3}, {1, 1}, {{"strides", {2}}, {"output_padding", {1}}}),
            (std::vector<float>{1, 1, 2, 2, 3, 3, 0}));
  // Dilation 2: y[o] = x[o] + 10 x[o - 2].
  EXPECT_EQ(convt_1d({1, 2, 3}, {1, 10}, {{"dilations", {2}}}),
            (std::vector<float>{1, 2, 13, 20, 30}));
  // Overlapping windows add up: kernel 3, stride 2 (full size 7).
  EXPECT_EQ(convt_1d({1, 2, 3}, {1, 1, 1}, {{"strides", {2}}}),
            (std::vector<float>{1, 1, 3, 2, 5, 3, 3}));
  // Bias on every position, also those nothing reaches.
  const NpyArray x = f32({1, 1, 2}, {1, 2}), w = f32({1, 1, 1}, {3}), b = f32({1}, {0.5f});
  EXPECT_EQ(run1("ConvTranspose", {&x, &w, &b}, {{"strides", {2}}, {"output_padding", {1}}}, 11)
                .values<float>(),
            (std::vector<float>{3.5f, 0.5f, 6.5f, 0.5f}));
}

TEST(ConvTranspose, AutoPadModes) {
  // Full output [1, 1, 3, 2, 5, 3, 3]; SAME gives in * stride = 6: the odd pad at the end
  // (SAME_UPPER) or the start (SAME_LOWER); VALID keeps the full output and ignores pads.
  const std::vector<float> x = {1, 2, 3}, w = {1, 1, 1};
  EXPECT_EQ(convt_1d(x, w, {{"strides", {2}}, {"auto_pad", "SAME_UPPER"}}),
            (std::vector<float>{1, 1, 3, 2, 5, 3}));
  EXPECT_EQ(convt_1d(x, w, {{"strides", {2}}, {"auto_pad", "SAME_LOWER"}}),
            (std::vector<float>{1, 3, 2, 5, 3, 3}));
  EXPECT_EQ(convt_1d(x, w, {{"strides", {2}}, {"auto_pad", "VALID"}}),
            (std::vector<float>{1, 1, 3, 2, 5, 3, 3}));
  // Kernel 2 < stride 3: the full output (8) is shorter than 3 * 3 = 9 and the total padding
  // is -1: SAME_UPPER's begin is floor(-1 / 2) = -1 (a zero first), SAME_LOWER's is 0.
  EXPECT_EQ(convt_1d(x, {1, 2}, {{"strides", {3}}, {"auto_pad", "SAME_UPPER"}}),
            (std::vector<float>{0, 1, 2, 0, 2, 4, 0, 3, 6}));
  EXPECT_EQ(convt_1d(x, {1, 2}, {{"strides", {3}}, {"auto_pad", "SAME_LOWER"}}),
            (std::vector<float>{1, 2, 0, 2, 4, 0, 3, 6, 0}));
}

TEST(ConvTranspose, OutputShapeOverridesPads) {
  const std::vector<float> x = {1, 2, 3}, w = {1, 1, 1};
  // Full 7 -> 5: total 2, one each side (pads ignored).
  EXPECT_EQ(convt_1d(x, w, {{"strides", {2}}, {"output_shape", {5}}, {"pads", {0, 2}}}),
            (std::vector<float>{1, 3, 2, 5, 3}));
  // Full 7 -> 6: total 1, the odd one at the start unless SAME_UPPER.
  EXPECT_EQ(convt_1d(x, w, {{"strides", {2}}, {"output_shape", {6}}}),
            (std::vector<float>{1, 3, 2, 5, 3, 3}));
  EXPECT_EQ(convt_1d(x, w, {{"strides", {2}}, {"output_shape", {6}}, {"auto_pad", "SAME_UPPER"}}),
            (std::vector<float>{1, 1, 3, 2, 5, 3}));
  // Larger than the full output (total -1): a zero at the end, as output_padding would give.
  EXPECT_EQ(convt_1d(x, w, {{"strides", {2}}, {"output_shape", {8}}}),
            (std::vector<float>{1, 1, 3, 2, 5, 3, 3, 0}));
  // output_padding counts in the total: full 8 -> 8, nothing cropped.
  EXPECT_EQ(convt_1d(x, w, {{"strides", {2}}, {"output_shape", {8}}, {"output_padding", {1}}}),
            (std::vector<float>{1, 1, 3, 2, 5, 3, 3, 0}));
  // The whole output shape [N, M, spatial...] is accepted too.
  EXPECT_EQ(convt_1d(x, w, {{"strides", {2}}, {"output_shape", {1, 1, 5}}}),
            (std::vector<float>{1, 3, 2, 5, 3}));
}

TEST(ConvTranspose, TwoDimGroupsDilationsAsymmetricPadsAgainstTorch) {
  const NpyArray x = pattern({2, 4, 3, 4}, 7, 11, 5, 4);
  const NpyArray w = pattern({4, 3, 3, 2}, 5, 13, 6, 8);
  const NpyArray b = f32({6}, {-1, -0.5f, 0, 0.5f, 1, 1.5f});
  const json attrs = {{"group", 2},          {"strides", {2, 3}},        {"pads", {1, 0, 2, 1}},
                      {"dilations", {2, 1}}, {"output_padding", {1, 2}}, {"kernel_shape", {3, 2}}};
  const NpyArray y = run1("ConvTranspose", {&x, &w, &b}, attrs, 11);
  // Full sizes 2 * 2 + 1 + 2 * 2 + 1 = 10 and 3 * 3 + 2 + 1 + 1 = 13, minus the pads.
  ASSERT_EQ(y.shape, (Shape{2, 6, 7, 12}));
  expect_matches(y, scatter_reference(x, w, &b, 2, {2, 3}, {2, 1}, {1, 0}, {7, 12}), 253.09375,
                 763.28125);
}

TEST(ConvTranspose, ThreeDimOneChannelPerGroupAgainstTorch) {
  const NpyArray x = pattern({1, 3, 2, 3, 2}, 7, 11, 5, 4);
  const NpyArray w = pattern({3, 2, 2, 2, 3}, 5, 13, 6, 8);
  const json attrs = {{"group", 3},
                      {"strides", {1, 2, 2}},
                      {"dilations", {1, 1, 2}},
                      {"output_padding", {0, 1, 1}}};
  const NpyArray y = run1("ConvTranspose", {&x, &w}, attrs, 18);
  ASSERT_EQ(y.shape, (Shape{1, 6, 3, 7, 8}));
  expect_matches(y, scatter_reference(x, w, nullptr, 3, {1, 2, 2}, {1, 1, 2}, {0, 0, 0}, {3, 7, 8}),
                 -0.59375, -9.8125);
}

TEST(ConvTranspose, Float64AndOpsetOne) {
  const NpyArray x = NpyArray::of<double>({1, 1, 2}, std::vector<double>{1, 2});
  const NpyArray w = NpyArray::of<double>({1, 2, 2}, std::vector<double>{1, 2, 3, 4});
  const NpyArray y = run1("ConvTranspose", {&x, &w}, json::object(), 1);
  ASSERT_EQ(y.shape, (Shape{1, 2, 3}));
  EXPECT_EQ(y.values<double>(), (std::vector<double>{1, 4, 4, 3, 10, 8}));
}

TEST(ConvTranspose, OneLineErrors) {
  const NpyArray x = iota_f32({1, 2, 3, 3});
  const NpyArray w = iota_f32({2, 2, 2, 2});
  EXPECT_THAT(error_of("ConvTranspose", {&x, &w}, {{"group", 4}}, 11),
              HasSubstr("weights [2, 2, 2, 2] do not match input [1, 2, 3, 3] with group 4"));
  const NpyArray w3 = iota_f32({3, 2, 2, 2});
  EXPECT_THAT(error_of("ConvTranspose", {&x, &w3}, json::object(), 11),
              HasSubstr("weights [3, 2, 2, 2] do not match input [1, 2, 3, 3]"));
  const NpyArray wr = iota_f32({2, 2, 2});
  EXPECT_THAT(error_of("ConvTranspose", {&x, &wr}, json::object(), 11),
              HasSubstr("do not match input"));
  const NpyArray b = f32({3}, {1, 2, 3});
  EXPECT_EQ(error_of("ConvTranspose", {&x, &w, &b}, json::object(), 11),
            "ConvTranspose: bias shape [3] does not match 2 output channels");
  EXPECT_EQ(error_of("ConvTranspose", {&x, &w}, {{"output_padding", {2, 0}}}, 11),
            "ConvTranspose: spatial dim 0: output_padding 2 must be >= 0 and less than the stride "
            "or the dilation");
  EXPECT_EQ(error_of("ConvTranspose", {&x, &w}, {{"output_shape", {4, 4, 4}}}, 11),
            "ConvTranspose: attribute output_shape has 3 values, expected 2");
  EXPECT_EQ(error_of("ConvTranspose", {&x, &w}, {{"output_padding", {0}}}, 11),
            "ConvTranspose: attribute output_padding has 1 values, expected 2");
  EXPECT_EQ(error_of("ConvTranspose", {&x, &w}, {{"pads", {3, 0, 2, 0}}}, 11),
            "ConvTranspose: spatial dim 0: pads 3+2 exceed the output size 4");
  EXPECT_THAT(error_of("ConvTranspose", {&x, &w}, {{"kernel_shape", {3, 3}}}, 11),
              HasSubstr("kernel_shape [3, 3] does not match the weights' [2, 2]"));
  EXPECT_THAT(error_of("ConvTranspose", {&x, &w}, {{"auto_pad", "SAME"}}, 11),
              HasSubstr("auto_pad: unknown value 'SAME'"));
  EXPECT_THAT(error_of("ConvTranspose", {&x, &w}, {{"strides", {0, 1}}}, 11),
              HasSubstr("strides: value 0 must be >= 1"));
  const NpyArray x2 = iota_f32({2, 3});
  EXPECT_EQ(error_of("ConvTranspose", {&x2, &w}, json::object(), 11),
            "ConvTranspose: input must have rank >= 3, got [2, 3]");
  const NpyArray wd = NpyArray::of<double>({2, 2, 2, 2}, std::vector<double>(16, 1.0));
  EXPECT_THAT(error_of("ConvTranspose", {&x, &wd}, json::object(), 11),
              HasSubstr("different dtypes"));
  EXPECT_THAT(error_of("ConvTranspose", {&x, &w}, json::object(), 19), HasSubstr("opset 19"));
}

TEST(ConvTranspose, HugeOutputsAndWorkAreRefusedBeforeAllocating) {
  const NpyArray x = iota_f32({1, 2, 3, 3});
  const NpyArray w = iota_f32({2, 2, 2, 2});
  auto big = run_op("ConvTranspose", {&x, &w}, {{"output_shape", {1000000000, 1000000000}}}, 11);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().code, EFBIG);
  RunOptions little;
  little.max_work = 100;
  auto r = run_op("ConvTranspose", {&x, &w}, json::object(), 11, little);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EFBIG);
  EXPECT_THAT(r.error().message, HasSubstr("multiply-accumulates"));
}

}  // namespace
}  // namespace npu::ops::test
