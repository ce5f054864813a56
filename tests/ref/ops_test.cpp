// Tests of the reference operators against small hand-computed cases: convolution (padding,
// stride, dilation, groups, depthwise, int8 with zero points), matmul, eltwise broadcasting,
// pooling, softmax, quantization, transpose and reduce.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "npu/ref/conv.h"
#include "npu/ref/elementwise.h"
#include "npu/ref/matmul.h"
#include "npu/ref/pool.h"
#include "npu/ref/quant.h"
#include "npu/ref/reduce.h"
#include "npu/ref/softmax.h"
#include "npu/ref/transpose.h"

namespace npu::ref {
namespace {

std::vector<float> iota_f(size_t n, float start = 1.0f) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

constexpr float kInf = INFINITY;

Conv2dShape square(uint32_t in, uint32_t c, uint32_t k, uint32_t out, uint32_t oc) {
  Conv2dShape s;
  s.in_h = s.in_w = in;
  s.in_c = c;
  s.k_h = s.k_w = k;
  s.out_h = s.out_w = out;
  s.out_c = oc;
  return s;
}

TEST(Conv2d, PaddingSame3x3) {
  Conv2dShape s = square(3, 1, 3, 3, 1);
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  const auto in = iota_f(9);
  const std::vector<float> w(9, 1.0f);
  std::vector<float> out(9);
  ASSERT_TRUE(conv2d_f32(s, in, w, {}, -kInf, kInf, out));
  EXPECT_EQ(out, (std::vector<float>{12, 21, 16, 27, 45, 33, 24, 39, 28}));
}

TEST(Conv2d, Stride2) {
  Conv2dShape s = square(3, 1, 3, 2, 1);
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  s.stride_h = s.stride_w = 2;
  const auto in = iota_f(9);
  const std::vector<float> w(9, 1.0f);
  std::vector<float> out(4);
  ASSERT_TRUE(conv2d_f32(s, in, w, {}, -kInf, kInf, out));
  EXPECT_EQ(out, (std::vector<float>{12, 16, 24, 28}));
}

TEST(Conv2d, Dilation2) {
  Conv2dShape s = square(5, 1, 3, 1, 1);
  s.dil_h = s.dil_w = 2;
  const auto in = iota_f(25);  // in[y][x] = 5y + x + 1
  const std::vector<float> w(9, 1.0f);
  std::vector<float> out(1);
  ASSERT_TRUE(conv2d_f32(s, in, w, {}, -kInf, kInf, out));
  // rows 0, 2, 4 x cols 0, 2, 4: sum of (5y + x + 1) = 3*(0+10+20) + 3*(0+2+4) + 9 = 117.
  EXPECT_EQ(out[0], 117.0f);
}

TEST(Conv2d, AsymmetricPadding) {
  Conv2dShape s = square(3, 1, 2, 3, 1);
  s.pad_top = 1;
  s.pad_right = 1;
  const auto in = iota_f(9);
  const std::vector<float> w{1, 10, 100, 1000};  // [ky][kx]
  std::vector<float> out(9);
  ASSERT_TRUE(conv2d_f32(s, in, w, {}, -kInf, kInf, out));
  // out(0,0): row -1 is padding; row 0 cols 0,1 -> 100*1 + 1000*2.
  EXPECT_EQ(out[0], 2100.0f);
  // out(0,2): row 0 col 2 and col 3 (padding) -> 100*3.
  EXPECT_EQ(out[2], 300.0f);
  // out(1,1): rows 0,1 cols 1,2 -> 2 + 10*3 + 100*5 + 1000*6.
  EXPECT_EQ(out[4], 6532.0f);
  // out(2,2): rows 1,2 col 2 -> 6 + 100*9.
  EXPECT_EQ(out[8], 906.0f);
}

TEST(Conv2d, GroupsSplitChannels) {
  // 1x1 conv, in_c 4, out_c 2, groups 2: out0 uses ch 0,1, out1 uses ch 2,3.
  Conv2dShape s = square(1, 4, 1, 1, 2);
  s.groups = 2;
  const std::vector<float> in{1, 2, 3, 4};
  const std::vector<float> w{1, 10, 100, 1000};  // [oc][ic/groups]
  std::vector<float> out(2);
  ASSERT_TRUE(conv2d_f32(s, in, w, {}, -kInf, kInf, out));
  EXPECT_EQ(out, (std::vector<float>{21, 4300}));
}

TEST(Conv2d, DepthwiseWithBiasAndClamp) {
  Conv2dShape s = square(2, 2, 2, 1, 2);
  s.groups = 2;
  const std::vector<float> in{1, -1, 2, -2, 3, -3, 4, -4};  // [y][x][c]
  const std::vector<float> w{1, 1, 1, 1, 1, 2, 3, 4};       // [oc][ky][kx][1]
  const std::vector<float> bias{0.5f, 0.0f};
  std::vector<float> out(2);
  ASSERT_TRUE(conv2d_f32(s, in, w, bias, 0.0f, 6.0f, out));
  EXPECT_EQ(out[0], 6.0f);  // 10.5 clamped to 6
  EXPECT_EQ(out[1], 0.0f);  // -30 clamped to 0
}

TEST(Conv2d, RejectsBadShapes) {
  Conv2dShape s = square(3, 1, 3, 2, 1);  // out should be 1
  std::vector<float> buf(100);
  auto r = conv2d_f32(s, buf, buf, {}, -kInf, kInf, buf);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("out_h"), std::string::npos);
  s = square(3, 3, 1, 3, 2);
  s.groups = 2;
  EXPECT_FALSE(conv2d_f32(s, buf, buf, {}, -kInf, kInf, buf));
  s = square(3, 1, 1, 3, 1);
  std::vector<float> small(8);
  EXPECT_FALSE(conv2d_f32(s, small, buf, {}, -kInf, kInf, buf));
}

TEST(Conv2dInt, ZeroPointsBiasRequant) {
  Conv2dShape s = square(1, 2, 1, 1, 1);
  const std::vector<int8_t> in{3, 5};
  const std::vector<int8_t> w{4, 1};
  // acc = (3-1)(4-2) + (5-1)(1-2) + 5 = 5; * 0.5 = 2.5 -> 2; + 3 = 5.
  const std::vector<npu_chan_qparams> chan{{5, 1 << 30, 31, 2}};
  const IntOutput o{1, 3, -128, 127};
  std::vector<int8_t> out(1);
  ASSERT_TRUE((conv2d_int<int8_t, int8_t, int8_t>(s, in, w, chan, o, out)));
  EXPECT_EQ(out[0], 5);
  std::vector<int32_t> out32(1);
  ASSERT_TRUE((conv2d_int<int8_t, int8_t, int32_t>(s, in, w, chan, o, out32)));
  EXPECT_EQ(out32[0], 5);
}

TEST(Conv2dInt, PaddingContributesZeroAfterZeroPoint) {
  // uint8 input with zp 128: padded positions act like x == 128.
  Conv2dShape s = square(1, 1, 3, 1, 1);
  s.pad_top = s.pad_left = s.pad_bottom = s.pad_right = 1;
  const std::vector<uint8_t> in{130};
  const std::vector<int8_t> w(9, 1);
  const std::vector<npu_chan_qparams> chan{{0, 1 << 30, 30, 0}};
  const IntOutput o{128, 0, -128, 127};
  std::vector<int32_t> out(1);
  ASSERT_TRUE((conv2d_int<uint8_t, int8_t, int32_t>(s, in, w, chan, o, out)));
  EXPECT_EQ(out[0], 2);
  std::vector<uint8_t> out8(1);
  const IntOutput o8{128, 250, 0, 255};
  ASSERT_TRUE((conv2d_int<uint8_t, int8_t, uint8_t>(s, in, w, chan, o8, out8)));
  EXPECT_EQ(out8[0], 252);
}

TEST(Conv2dInt, PerChannelWeightZeroPointAndSaturation) {
  Conv2dShape s = square(1, 1, 1, 1, 2);
  const std::vector<int8_t> in{100};
  const std::vector<int8_t> w{10, 10};
  const std::vector<npu_chan_qparams> chan{{0, 1 << 30, 30, 0}, {0, 1 << 30, 30, 20}};
  const IntOutput o{0, 0, -128, 127};
  std::vector<int8_t> out(2);
  ASSERT_TRUE((conv2d_int<int8_t, int8_t, int8_t>(s, in, w, chan, o, out)));
  EXPECT_EQ(out[0], 127);   // 1000 saturates
  EXPECT_EQ(out[1], -128);  // 100 * (10 - 20) = -1000 saturates
}

TEST(Matmul, Float) {
  MatmulShape s;
  s.m = 2, s.k = 3, s.n = 2;
  const std::vector<float> a{1, 2, 3, 4, 5, 6};
  const std::vector<float> b{7, 8, 9, 10, 11, 12};
  std::vector<float> out(4);
  ASSERT_TRUE(matmul_f32(s, a, b, {}, -kInf, kInf, out));
  EXPECT_EQ(out, (std::vector<float>{58, 64, 139, 154}));
  // Same with B stored [n][k].
  s.transpose_b = true;
  const std::vector<float> bt{7, 9, 11, 8, 10, 12};
  ASSERT_TRUE(matmul_f32(s, a, bt, std::vector<float>{1, -200}, 0.0f, kInf, out));
  EXPECT_EQ(out, (std::vector<float>{59, 0, 140, 0}));
}

TEST(Matmul, BatchedWithBroadcastB) {
  MatmulShape s;
  s.m = 1, s.k = 2, s.n = 1, s.batch = 3;
  s.a_batch_stride = 2, s.b_batch_stride = 0, s.out_batch_stride = 2;  // gaps in out
  const std::vector<float> a{1, 2, 3, 4, 5, 6};
  const std::vector<float> b{10, 100};
  std::vector<float> out(5, -1.0f);
  ASSERT_TRUE(matmul_f32(s, a, b, {}, -kInf, kInf, out));
  EXPECT_EQ(out, (std::vector<float>{210, -1, 430, -1, 650}));
  s.out_batch_stride = 0;  // batches would overwrite each other
  EXPECT_FALSE(matmul_f32(s, a, b, {}, -kInf, kInf, out));
}

TEST(Matmul, IntegerPerColumn) {
  MatmulShape s;
  s.m = 1, s.k = 2, s.n = 2;
  const std::vector<int8_t> a{3, 5};
  const std::vector<uint8_t> b{4, 130, 1, 126};  // [k][n]
  const std::vector<npu_chan_qparams> chan{{0, 1 << 30, 30, 0}, {7, 1 << 30, 30, 128}};
  const IntOutput o{1, 0, -128, 127};
  std::vector<int32_t> out(2);
  ASSERT_TRUE((matmul_int<int8_t, uint8_t, int32_t>(s, a, b, chan, o, out)));
  EXPECT_EQ(out[0], 2 * 4 + 4 * 1);         // 12
  EXPECT_EQ(out[1], 2 * 2 + 4 * (-2) + 7);  // 3
  EXPECT_FALSE((matmul_int<int8_t, uint8_t, int32_t>(s, a, b, std::span(chan).first(1), o, out)));
}

TEST(Eltwise, BroadcastThroughZeroStrides) {
  const Dims4 shape{1, 1, 2, 3};
  const std::vector<float> a{1, 2, 3, 4, 5, 6};
  const std::vector<float> b{10, 20, 30};
  std::vector<float> out(6);
  ASSERT_TRUE(eltwise_f32(NPU_ELTWISE_ADD, shape, {a, contiguous_strides(shape)}, {b, {0, 0, 0, 1}},
                          {out, contiguous_strides(shape)}));
  EXPECT_EQ(out, (std::vector<float>{11, 22, 33, 14, 25, 36}));
  // An output view that writes an element twice is an error.
  EXPECT_FALSE(eltwise_f32(NPU_ELTWISE_ADD, shape, {a, contiguous_strides(shape)},
                           {b, {0, 0, 0, 1}}, {out, {0, 0, 0, 1}}));
  // View running past its span is an error.
  EXPECT_FALSE(eltwise_f32(NPU_ELTWISE_ADD, shape, {a, contiguous_strides(shape)},
                           {b, {0, 0, 1, 1}}, {out, contiguous_strides(shape)}));
}

TEST(Eltwise, IntegerSaturatingAndActivation) {
  const Dims4 shape{1, 1, 1, 3};
  const std::vector<int8_t> a{100, -100, 5};
  const std::vector<int8_t> b{100, 100, 2};
  std::vector<int8_t> out(3);
  const Strides4 st = contiguous_strides(shape);
  ASSERT_TRUE(eltwise_int_tensor<int8_t>(NPU_ELTWISE_ADD, shape, {a, st}, {b, st}, {out, st}));
  EXPECT_EQ(out, (std::vector<int8_t>{127, 0, 7}));
  ASSERT_TRUE(activation_int_tensor<int8_t>(NPU_ACT_RELU, 0, 0, shape, {a, st}, {out, st}));
  EXPECT_EQ(out, (std::vector<int8_t>{100, 0, 5}));
  std::vector<float> f{-1, 0.5f, 2}, fo(3);
  ASSERT_TRUE(activation_f32(NPU_ACT_CLIP, 0.0f, 1.0f, shape, {f, st}, {fo, st}));
  EXPECT_EQ(fo, (std::vector<float>{0, 0.5f, 1}));
}

TEST(ScaleShift, PerChannel) {
  const std::vector<float> in{1, 2, 3, 4};
  std::vector<float> out(4);
  ASSERT_TRUE(scale_shift_f32(2, 2, in, std::vector<float>{2, 3}, std::vector<float>{1, -1}, out));
  EXPECT_EQ(out, (std::vector<float>{3, 5, 7, 11}));
}

TEST(Pool, Max2x2Stride2) {
  Pool2dShape s;
  s.in_h = s.in_w = 4, s.channels = 1, s.out_h = s.out_w = 2, s.k_h = s.k_w = 2;
  s.stride_h = s.stride_w = 2;
  const auto in = iota_f(16);
  std::vector<float> out(4);
  ASSERT_TRUE(pool2d_f32(NPU_POOL_MAX, s, in, out));
  EXPECT_EQ(out, (std::vector<float>{6, 8, 14, 16}));
}

TEST(Pool, AvgPaddingCountedOrNot) {
  Pool2dShape s;
  s.in_h = s.in_w = 2, s.channels = 1, s.out_h = s.out_w = 2, s.k_h = s.k_w = 2;
  s.pad_top = s.pad_left = 1;
  const std::vector<float> in{1, 2, 3, 4};
  std::vector<float> out(4);
  ASSERT_TRUE(pool2d_f32(NPU_POOL_AVG, s, in, out));
  EXPECT_EQ(out, (std::vector<float>{1, 1.5f, 2, 2.5f}));
  s.count_include_pad = true;
  ASSERT_TRUE(pool2d_f32(NPU_POOL_AVG, s, in, out));
  EXPECT_EQ(out, (std::vector<float>{0.25f, 0.75f, 1, 2.5f}));
  ASSERT_TRUE(pool2d_f32(NPU_POOL_MAX, s, in, out));  // padding ignored by max
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4}));
}

TEST(Pool, IntAverageRoundsHalfToEven) {
  Pool2dShape s;
  s.in_h = 1, s.in_w = 8, s.channels = 1, s.out_h = 1, s.out_w = 4, s.k_h = 1, s.k_w = 2;
  s.stride_h = 1, s.stride_w = 2;
  const std::vector<int8_t> in{1, 2, 1, 0, -1, -2, 3, 2};  // means 1.5, 0.5, -1.5, 2.5
  std::vector<int8_t> out(4);
  ASSERT_TRUE(pool2d_int<int8_t>(NPU_POOL_AVG, s, in, out));
  EXPECT_EQ(out, (std::vector<int8_t>{2, 0, -2, 2}));
  ASSERT_TRUE(pool2d_int<int8_t>(NPU_POOL_MAX, s, in, out));
  EXPECT_EQ(out, (std::vector<int8_t>{2, 1, -1, 3}));
  // Global average of uint8 with 3 channels.
  Pool2dShape g;
  g.in_h = 1, g.in_w = 3, g.channels = 1, g.out_h = g.out_w = 1, g.k_h = 1, g.k_w = 3;
  const std::vector<uint8_t> u{255, 254, 254};  // 254.33 -> 254
  std::vector<uint8_t> uo(1);
  ASSERT_TRUE(pool2d_int<uint8_t>(NPU_POOL_AVG, g, u, uo));
  EXPECT_EQ(uo[0], 254);
}

TEST(Softmax, RowsSumToOneAndAreStable) {
  const std::vector<float> in{1, 2, 3, 1000, 1001, 1002};
  std::vector<float> out(6);
  ASSERT_TRUE(softmax_f32(2, 3, in, out));
  for (int r = 0; r < 2; ++r) {
    EXPECT_NEAR(out[3 * r] + out[3 * r + 1] + out[3 * r + 2], 1.0f, 1e-6);
    EXPECT_NEAR(out[3 * r + 2], 0.66524096f, 1e-6);
  }
  ASSERT_TRUE(softmax_f32(2, 3, in, out, /*log=*/true));
  EXPECT_NEAR(out[5], std::log(0.66524096f), 1e-6);
  EXPECT_NEAR(std::exp(out[0]) + std::exp(out[1]) + std::exp(out[2]), 1.0f, 1e-6);
}

TEST(Quant, PerTensorAndPerAxis) {
  const std::vector<float> in{0.5f, 1.5f, -2.5f, 100.0f};
  std::vector<int8_t> q(4);
  QuantParams p;
  p.scale = 1.0f;
  ASSERT_TRUE(quantize_tensor<int8_t>(in, q, p));
  EXPECT_EQ(q, (std::vector<int8_t>{0, 2, -2, 100}));
  // Per axis: [2 channels][inner 2], element i uses channel (i / 2) % 2.
  const std::vector<npu_qparam> params{{0.5f, 0}, {2.0f, 10}};
  p.channels = 2, p.inner = 2, p.params = params;
  ASSERT_TRUE(quantize_tensor<int8_t>(in, q, p));
  EXPECT_EQ(q, (std::vector<int8_t>{1, 3, 9, 60}));
  std::vector<float> back(4);
  ASSERT_TRUE(dequantize_tensor<int8_t>(q, back, p));
  EXPECT_EQ(back, (std::vector<float>{0.5f, 1.5f, -2.0f, 100.0f}));
  p.params = std::span(params).first(1);
  EXPECT_FALSE(quantize_tensor<int8_t>(in, q, p));
}

TEST(Quant, Requantize) {
  const std::vector<int32_t> in{-1000, 10, 11, 1000};
  std::vector<uint8_t> out(4);
  RequantParams p{1 << 30, 31, 0, 128, 0, 255};  // * 0.5 + 128
  ASSERT_TRUE((requantize_tensor<int32_t, uint8_t>(in, out, p)));
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 133, 134, 255}));  // 5.5 -> 6
}

TEST(Transpose, NhwcToNchw) {
  const Dims4 shape{1, 2, 2, 3};  // N H W C
  std::vector<int32_t> in(12);
  std::iota(in.begin(), in.end(), 0);
  std::vector<int32_t> out(12);
  ASSERT_TRUE(transpose4<int32_t>(shape, {0, 3, 1, 2}, in, out));
  EXPECT_EQ(out, (std::vector<int32_t>{0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11}));
  EXPECT_FALSE(transpose4<int32_t>(shape, {0, 3, 3, 2}, in, out));
}

TEST(Reduce, AllKinds) {
  // [outer 2][len 3][inner 2]
  const std::vector<float> in{1, -1, 2, -2, 3, -3, 4, 0, 5, 0, 6, 9};
  std::vector<float> out(4);
  ASSERT_TRUE(reduce_f32(NPU_REDUCE_SUM, 2, 3, 2, in, out));
  EXPECT_EQ(out, (std::vector<float>{6, -6, 15, 9}));
  ASSERT_TRUE(reduce_f32(NPU_REDUCE_MEAN, 2, 3, 2, in, out));
  EXPECT_EQ(out, (std::vector<float>{2, -2, 5, 3}));
  ASSERT_TRUE(reduce_f32(NPU_REDUCE_MAX, 2, 3, 2, in, out));
  EXPECT_EQ(out, (std::vector<float>{3, -1, 6, 9}));
  ASSERT_TRUE(reduce_f32(NPU_REDUCE_MIN, 2, 3, 2, in, out));
  EXPECT_EQ(out, (std::vector<float>{1, -3, 4, 0}));
  EXPECT_FALSE(reduce_f32(9, 2, 3, 2, in, out));
}

}  // namespace
}  // namespace npu::ref
