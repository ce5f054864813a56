// The arithmetic host ops (npu/ops/ops.h): small cases computed by hand, the ONNX operator
// docs' examples (basic conv, ConvInteger, QLinearConv, QLinearMatMul, MatMulInteger,
// QuantizeLinear, DequantizeLinear, MaxPool ceil), opset-dependent semantics and error
// messages (one line, naming the op and what was wrong).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "npu/format/npy.h"
#include "npu/ops/ops.h"

namespace {

using npu::format::DType;
using npu::format::NpyArray;
using Shape = std::vector<int64_t>;
using Result = npu::Expected<std::vector<NpyArray>>;

template <typename T>
NpyArray arr(Shape shape, std::vector<T> values) {
  return NpyArray::of<T>(std::move(shape), values);
}
NpyArray f32(Shape shape, std::vector<float> v) {
  return arr<float>(std::move(shape), std::move(v));
}
template <typename T>
NpyArray scalar(T v) {
  return arr<T>({}, {v});
}
std::vector<float> iota_f(int n, float start = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return v;
}

Result run(const char* op, const std::string& attrs, std::initializer_list<const NpyArray*> ins,
           size_t outputs = 1) {
  const std::vector<const NpyArray*> v(ins);
  return npu::ops::run(op, attrs, v, outputs);
}

/// Output `i` of a successful run, with its shape and dtype checked.
template <typename T>
std::vector<T> out(const Result& r, const Shape& shape, size_t i = 0) {
  EXPECT_TRUE(r) << r.error().message;
  if (!r || r->size() <= i) return {};
  EXPECT_EQ((*r)[i].shape, shape);
  EXPECT_EQ((*r)[i].dtype, npu::format::dtype_of<T>());
  return (*r)[i].values<T>();
}

/// The error message of a failed run (which must be one line).
std::string err(const Result& r) {
  EXPECT_FALSE(r);
  if (r) return "";
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
  return r.error().message;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "index " << i;
}

// ---- registry ----

TEST(HostOpsRegistry, ListsArithmeticAndTensorOps) {
  for (const char* op : {"Conv",
                         "ConvInteger",
                         "QLinearConv",
                         "Gemm",
                         "MatMulInteger",
                         "QLinearMatMul",
                         "MaxPool",
                         "AveragePool",
                         "GlobalAveragePool",
                         "GlobalMaxPool",
                         "BatchNormalization",
                         "QuantizeLinear",
                         "DequantizeLinear",
                         "ReduceMean",
                         "ReduceSum",
                         "ReduceProd",
                         "Clip",
                         "PRelu",
                         "Sign",
                         "Sum",
                         "Mean",
                         "Dropout",
                         "Concat",
                         "Gather"}) {
    EXPECT_TRUE(npu::ops::is_supported(op)) << op;
  }
  EXPECT_FALSE(npu::ops::is_supported("Foo"));
  const auto names = npu::ops::names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "QLinearConv"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "Concat"), names.end());
}

TEST(HostOpsRegistry, BadAttributesJson) {
  const NpyArray x = f32({1}, {1});
  EXPECT_EQ(err(run("Relu", "[1]", {&x})), "Relu: attributes are not a JSON object");
  EXPECT_EQ(err(run("Relu", R"({"_opset":"x"})", {&x})), "Relu: attribute _opset: not an integer");
  EXPECT_EQ(err(run("Relu", "{}", {&x}, 2)), "Relu: produces 1 outputs, 2 expected");
}

// ---- Conv ----

TEST(HostOpsConv, OnnxDocBasicConv) {
  // ONNX Conv doc: 5x5 input 0..24, 3x3 kernel of ones, with and without padding.
  const NpyArray x = f32({1, 1, 5, 5}, iota_f(25));
  const NpyArray w = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  EXPECT_EQ(
      out<float>(run("Conv", R"({"kernel_shape":[3,3],"pads":[1,1,1,1]})", {&x, &w}), {1, 1, 5, 5}),
      (std::vector<float>{12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                          117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84}));
  EXPECT_EQ(out<float>(run("Conv", R"({"kernel_shape":[3,3]})", {&x, &w}), {1, 1, 3, 3}),
            (std::vector<float>{54, 63, 72, 99, 108, 117, 144, 153, 162}));
  // Strides 2 with asymmetric padding on a 7x5 input (ONNX doc).
  const NpyArray x7 = f32({1, 1, 7, 5}, iota_f(35));
  EXPECT_EQ(
      out<float>(run("Conv", R"({"strides":[2,2],"pads":[1,0,1,0]})", {&x7, &w}), {1, 1, 4, 2}),
      (std::vector<float>{21, 33, 99, 117, 189, 207, 171, 183}));
  // auto_pad SAME_LOWER with strides 2 (ONNX doc).
  EXPECT_EQ(out<float>(run("Conv", R"({"auto_pad":"SAME_LOWER","strides":[2,2]})", {&x, &w}),
                       {1, 1, 3, 3}),
            (std::vector<float>{12, 27, 24, 63, 108, 81, 72, 117, 84}));
}

TEST(HostOpsConv, OneDimensionalSameUpperVersusLower) {
  const NpyArray x = f32({1, 1, 3}, {1, 2, 3});
  const NpyArray w = f32({1, 1, 2}, {1, 10});
  // The odd padding element goes at the end (UPPER) or the start (LOWER).
  EXPECT_EQ(out<float>(run("Conv", R"({"auto_pad":"SAME_UPPER"})", {&x, &w}), {1, 1, 3}),
            (std::vector<float>{21, 32, 3}));
  EXPECT_EQ(out<float>(run("Conv", R"({"auto_pad":"SAME_LOWER"})", {&x, &w}), {1, 1, 3}),
            (std::vector<float>{10, 21, 32}));
  EXPECT_EQ(out<float>(run("Conv", R"({"auto_pad":"VALID","pads":[5,5]})", {&x, &w}), {1, 1, 2}),
            (std::vector<float>{21, 32}));
}

TEST(HostOpsConv, DepthwiseDilatedWithBias) {
  std::vector<float> xv = iota_f(9, 1);
  xv.insert(xv.end(), 9, 1.0f);
  const NpyArray x = f32({1, 2, 3, 3}, xv);
  const NpyArray w = f32({2, 1, 2, 2}, {1, 0, 0, 1, 1, 1, 1, 1});
  const NpyArray b = f32({2}, {100, -1});
  // Dilation 2 makes the 2x2 kernel span the 3x3 corners.
  EXPECT_EQ(out<float>(run("Conv", R"({"group":2,"dilations":[2,2]})", {&x, &w, &b}), {1, 2, 1, 1}),
            (std::vector<float>{110, 3}));
}

TEST(HostOpsConv, Errors) {
  const NpyArray x = f32({1, 1, 5, 5}, iota_f(25));
  const NpyArray w3 = f32({1, 3, 3, 3}, std::vector<float>(27, 1.0f));
  const NpyArray w = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  const NpyArray xi = arr<int32_t>({1, 1, 1, 1}, {1});
  EXPECT_EQ(err(run("Conv", "{}", {&x, &w3})),
            "Conv: weights [1, 3, 3, 3] do not match input [1, 1, 5, 5] with group 1");
  EXPECT_EQ(err(run("Conv", "{}", {&x})), "Conv: missing input 1");
  EXPECT_EQ(err(run("Conv", "{}", {&xi, &w})), "Conv: dtype int32 is not supported");
  EXPECT_EQ(err(run("Conv", R"({"auto_pad":"SAME"})", {&x, &w})),
            "Conv: attribute auto_pad: unknown value 'SAME'");
  EXPECT_EQ(err(run("Conv", R"({"strides":[1]})", {&x, &w})),
            "Conv: attribute strides has 1 values, expected 2");
  EXPECT_EQ(err(run("Conv", R"({"kernel_shape":[2,2]})", {&x, &w})),
            "Conv: attribute kernel_shape [2, 2] does not match the weights' [3, 3]");
}

// ---- ConvInteger, QLinearConv ----

TEST(HostOpsConvInteger, OnnxDocExamples) {
  const NpyArray x = arr<uint8_t>({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  const NpyArray x_zp = scalar<uint8_t>(1);
  const NpyArray w = arr<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 1});
  EXPECT_EQ(out<int32_t>(run("ConvInteger", "{}", {&x, &w, &x_zp}), {1, 1, 2, 2}),
            (std::vector<int32_t>{12, 16, 24, 28}));
  EXPECT_EQ(
      out<int32_t>(run("ConvInteger", R"({"pads":[1,1,1,1]})", {&x, &w, &x_zp}), {1, 1, 4, 4}),
      (std::vector<int32_t>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}));
}

TEST(HostOpsConvInteger, PerChannelWeightZeroPoint) {
  const NpyArray x = arr<int8_t>({1, 1, 1, 2}, {3, 4});
  const NpyArray w = arr<int8_t>({2, 1, 1, 2}, {2, 2, 1, 0});
  const NpyArray w_zp = arr<int8_t>({2}, {1, -1});
  // ch0: 3*(2-1) + 4*(2-1) = 7; ch1: 3*(1+1) + 4*(0+1) = 10.
  EXPECT_EQ(out<int32_t>(run("ConvInteger", "{}", {&x, &w, nullptr, &w_zp}), {1, 2, 1, 1}),
            (std::vector<int32_t>{7, 10}));
  const NpyArray bad_zp = arr<int8_t>({3}, {1, 2, 3});
  EXPECT_EQ(err(run("ConvInteger", "{}", {&x, &w, nullptr, &bad_zp})),
            "ConvInteger: w_zero_point shape [3] is neither a scalar nor 2 values");
  const NpyArray u_zp = scalar<uint8_t>(1);
  EXPECT_EQ(err(run("ConvInteger", "{}", {&x, &w, &u_zp})),
            "ConvInteger: x_zero_point dtype uint8 is not supported (expected int8)");
}

TEST(HostOpsQLinearConv, OnnxDocExample) {
  const NpyArray x =
      arr<uint8_t>({1, 1, 7, 7}, {255, 174, 162, 25,  203, 168, 58,  15,  59,  237, 95,  129, 0,
                                  64,  56,  242, 153, 221, 168, 12,  166, 232, 178, 186, 195, 237,
                                  162, 237, 188, 39,  124, 77,  80,  102, 43,  127, 230, 21,  83,
                                  41,  40,  134, 255, 154, 92,  141, 42,  148, 247});
  const NpyArray x_scale = scalar<float>(0.00369204697f), x_zp = scalar<uint8_t>(132);
  const NpyArray w = arr<uint8_t>({1, 1, 1, 1}, {0});
  const NpyArray w_scale = f32({1}, {0.00172794575f});
  const NpyArray w_zp = arr<uint8_t>({1}, {255});
  const NpyArray y_scale = scalar<float>(0.00162681262f), y_zp = scalar<uint8_t>(123);
  EXPECT_EQ(out<uint8_t>(run("QLinearConv", "{}",
                             {&x, &x_scale, &x_zp, &w, &w_scale, &w_zp, &y_scale, &y_zp}),
                         {1, 1, 7, 7}),
            (std::vector<uint8_t>{0,   81,  93,  230, 52,  87,  197, 240, 196, 18,  160, 126, 255,
                                  191, 199, 13,  102, 34,  87,  243, 89,  23,  77,  69,  60,  18,
                                  93,  18,  67,  216, 131, 178, 175, 153, 212, 128, 25,  234, 172,
                                  214, 215, 121, 0,   101, 163, 114, 213, 107, 8}));
}

TEST(HostOpsQLinearConv, PerChannelInt8WithBias) {
  const NpyArray x = arr<int8_t>({1, 1, 1, 2}, {10, -6});
  const NpyArray x_scale = scalar<float>(0.5f), x_zp = scalar<int8_t>(2);
  const NpyArray w = arr<int8_t>({2, 1, 1, 2}, {3, 1, -2, 4});
  const NpyArray w_scale = f32({2}, {0.25f, 0.5f});
  const NpyArray w_zp = arr<int8_t>({2}, {0, 1});
  const NpyArray y_scale = scalar<float>(0.125f), y_zp = scalar<int8_t>(-1);
  const NpyArray b = arr<int32_t>({2}, {4, -8});
  // acc0 = 8*3 + (-8)*1 + 4 = 20, scale 1 -> 19; acc1 = 8*(-3) + (-8)*3 - 8 = -56, scale 2
  // -> -113.
  const auto r =
      run("QLinearConv", "{}", {&x, &x_scale, &x_zp, &w, &w_scale, &w_zp, &y_scale, &y_zp, &b});
  EXPECT_EQ(out<int8_t>(r, {1, 2, 1, 1}), (std::vector<int8_t>{19, -113}));
  // Saturation: y_zero_point 120 pushes channel 0 past 127.
  const NpyArray big_zp = scalar<int8_t>(120);
  const auto s =
      run("QLinearConv", "{}", {&x, &x_scale, &x_zp, &w, &w_scale, &w_zp, &y_scale, &big_zp, &b});
  EXPECT_EQ(out<int8_t>(s, {1, 2, 1, 1}), (std::vector<int8_t>{127, 8}));
  const NpyArray zero = scalar<float>(0.0f);
  EXPECT_EQ(
      err(run("QLinearConv", "{}", {&x, &x_scale, &x_zp, &w, &w_scale, &w_zp, &zero, &y_zp, &b})),
      "QLinearConv: combined scale inf must be positive and below 2^31");
}

// ---- MatMulInteger, QLinearMatMul ----

TEST(HostOpsMatMulInteger, OnnxDocExampleAndPerRowZeroPoints) {
  const NpyArray a = arr<uint8_t>({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0});
  const NpyArray b = arr<uint8_t>({3, 2}, {1, 4, 2, 5, 3, 6});
  const NpyArray a_zp = scalar<uint8_t>(12), b_zp = scalar<uint8_t>(0);
  EXPECT_EQ(out<int32_t>(run("MatMulInteger", "{}", {&a, &b, &a_zp, &b_zp}), {4, 2}),
            (std::vector<int32_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
  // Per-row a zero point, per-column b zero point: A' = [[1,1],[0,2]], B' = [[1,2],[3,3]].
  const NpyArray a2 = arr<int8_t>({2, 2}, {2, 2, 3, 5});
  const NpyArray b2 = arr<int8_t>({2, 2}, {2, 4, 4, 5});
  const NpyArray a2_zp = arr<int8_t>({2}, {1, 3}), b2_zp = arr<int8_t>({2}, {1, 2});
  EXPECT_EQ(out<int32_t>(run("MatMulInteger", "{}", {&a2, &b2, &a2_zp, &b2_zp}), {2, 2}),
            (std::vector<int32_t>{4, 5, 6, 6}));
  // Batched A against a shared B.
  const NpyArray a3 = arr<int8_t>({2, 1, 2}, {1, 0, 0, 1});
  EXPECT_EQ(out<int32_t>(run("MatMulInteger", "{}", {&a3, &b2}), {2, 1, 2}),
            (std::vector<int32_t>{2, 4, 4, 5}));
  const NpyArray f = f32({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(err(run("MatMulInteger", "{}", {&f, &b2})),
            "MatMulInteger: dtype float32 is not supported");
}

TEST(HostOpsQLinearMatMul, OnnxDocExample) {
  const NpyArray a = arr<uint8_t>({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29});
  const NpyArray a_scale = f32({1}, {0.0066f});
  const NpyArray a_zp = arr<uint8_t>({1}, {113});
  const NpyArray b = arr<uint8_t>({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247});
  const NpyArray b_scale = f32({1}, {0.00705f});
  const NpyArray b_zp = arr<uint8_t>({1}, {114});
  const NpyArray y_scale = f32({1}, {0.0107f});
  const NpyArray y_zp = arr<uint8_t>({1}, {118});
  EXPECT_EQ(out<uint8_t>(run("QLinearMatMul", "{}",
                             {&a, &a_scale, &a_zp, &b, &b_scale, &b_zp, &y_scale, &y_zp}),
                         {2, 3}),
            (std::vector<uint8_t>{168, 115, 255, 1, 66, 151}));
}

TEST(HostOpsQLinearMatMul, RoundsHalfToEvenPerColumnAndBatched) {
  // 5 * 0.5 = 2.5 -> 2, 7 * 0.5 = 3.5 -> 4, -5 * 0.5 = -2.5 -> -2; column 1 scales by 1.5.
  const NpyArray a = arr<int8_t>({1, 3, 1}, {5, 7, -5});
  const NpyArray one = scalar<float>(1.0f);
  const NpyArray zp = scalar<int8_t>(0);
  const NpyArray b = arr<int8_t>({1, 2}, {1, 1});
  const NpyArray b_scale = f32({2}, {0.5f, 1.5f});
  const NpyArray b_zp = arr<int8_t>({2}, {0, 0});
  EXPECT_EQ(out<int8_t>(run("QLinearMatMul", "{}", {&a, &one, &zp, &b, &b_scale, &b_zp, &one, &zp}),
                        {1, 3, 2}),
            (std::vector<int8_t>{2, 8, 4, 10, -2, -8}));
  const NpyArray bad_scale = f32({3}, {1, 1, 1});
  EXPECT_EQ(err(run("QLinearMatMul", "{}", {&a, &one, &zp, &b, &bad_scale, &b_zp, &one, &zp})),
            "QLinearMatMul: b_scale shape [3] is neither a scalar nor 2 values");
  EXPECT_EQ(err(run("QLinearMatMul", "{}", {&a, &one, &zp, &b})), "QLinearMatMul: missing input 4");
}

// ---- Gemm ----

TEST(HostOpsGemm, TransposesScalesAndBroadcastsC) {
  const NpyArray a = f32({3, 2}, {1, 2, 3, 4, 5, 6});  // A^T = [[1,3,5],[2,4,6]]
  const NpyArray b = f32({2, 3}, {1, 0, 1, 0, 1, 1});  // B^T = [[1,0],[0,1],[1,1]]
  const NpyArray cv = f32({2}, {10, 20});
  // A^T B^T = [[6,8],[8,10]]; * 0.5 + 2 * [10, 20].
  EXPECT_EQ(
      out<float>(run("Gemm", R"({"transA":1,"transB":1,"alpha":0.5,"beta":2.0})", {&a, &b, &cv}),
                 {2, 2}),
      (std::vector<float>{23, 44, 24, 45}));
  const NpyArray col = f32({2, 1}, {1, 2});
  EXPECT_EQ(out<float>(run("Gemm", R"({"transA":1,"transB":1})", {&a, &b, &col}), {2, 2}),
            (std::vector<float>{7, 9, 10, 12}));
  EXPECT_EQ(out<float>(run("Gemm", R"({"transA":1,"transB":1})", {&a, &b}), {2, 2}),
            (std::vector<float>{6, 8, 8, 10}));
  const NpyArray bad = f32({3}, {1, 2, 3});
  EXPECT_EQ(err(run("Gemm", R"({"transA":1,"transB":1})", {&a, &b, &bad})),
            "Gemm: shapes [3] and [2, 2] do not broadcast");
  EXPECT_EQ(err(run("Gemm", R"({"transA":1})", {&a, &b})),
            "Gemm: shapes [3, 2] and [2, 3] do not match with transA 1, transB 0");
  EXPECT_EQ(err(run("Gemm", R"({"alpha":"x"})", {&a, &b})), "Gemm: attribute alpha: not a number");
}

// ---- pooling ----

TEST(HostOpsPool, MaxPoolCeilModeWithIndices) {
  // ONNX doc (maxpool_2d_ceil): 4x4 input 1..16, kernel 3, stride 2, ceil_mode.
  const NpyArray x = f32({1, 1, 4, 4}, iota_f(16, 1));
  const auto r = run("MaxPool", R"({"kernel_shape":[3,3],"strides":[2,2],"ceil_mode":1})", {&x}, 2);
  EXPECT_EQ(out<float>(r, {1, 1, 2, 2}), (std::vector<float>{11, 12, 15, 16}));
  EXPECT_EQ(out<int64_t>(r, {1, 1, 2, 2}, 1), (std::vector<int64_t>{10, 11, 14, 15}));
  // A window may not start in the end padding: 4 + pad 1, kernel 2, stride 2 gives 2, not 3.
  const NpyArray x1 = f32({1, 1, 4}, {1, 2, 3, 4});
  EXPECT_EQ(out<float>(run("MaxPool", R"({"kernel_shape":[2],"strides":[2],"pads":[0,1],
                                          "ceil_mode":1})",
                           {&x1}),
                       {1, 1, 2}),
            (std::vector<float>{2, 4}));
}

// Hostile windows (issue 14): a kernel of 2^40 rows costs what the input holds, not 2^40
// steps; one whose arithmetic leaves int64 (2^62 with SAME_UPPER, pads of INT64_MAX) is one
// error line, not a hang or a wrapped "does not fit".
TEST(HostOpsPool, HugeWindowsVisitOnlyTheInput) {
  const NpyArray x = f32({1, 1, 4, 4}, iota_f(16, 1));
  const std::string attrs = R"({"kernel_shape":[1099511627776,2],"auto_pad":"SAME_UPPER"})";
  EXPECT_EQ(out<float>(run("MaxPool", attrs, {&x}), {1, 1, 4, 4}),
            (std::vector<float>{14, 15, 16, 16, 14, 15, 16, 16, 14, 15, 16, 16, 14, 15, 16, 16}));
  EXPECT_EQ(out<float>(run("AveragePool", attrs, {&x}), {1, 1, 4, 4}),
            (std::vector<float>{7.5, 8.5, 9.5, 10, 7.5, 8.5, 9.5, 10, 7.5, 8.5, 9.5, 10, 7.5, 8.5,
                                9.5, 10}));
  for (const char* op : {"MaxPool", "AveragePool"}) {
    const std::string e =
        err(run(op, R"({"kernel_shape":[4611686018427387904,2],"auto_pad":"SAME_UPPER"})", {&x}));
    EXPECT_NE(e.find("exceed the int64 range"), std::string::npos) << e;
  }
  const NpyArray w = f32({1, 1, 1, 1}, {1});
  const std::string e = err(run("Conv", R"({"pads":[9223372036854775807,0,0,0]})", {&x, &w}));
  EXPECT_EQ(e,
            "Conv: spatial dim 0: kernel_shape 1, dilation 1, stride 1 and pads "
            "9223372036854775807+0 overflow the int64 range");
}

// The host work limit (RunOptions::max_work) is checked before any output is allocated or
// any loop runs; the error names the op, the work and the limit.
TEST(HostOpsLimits, WorkBeyondTheLimitIsRefusedBeforeComputing) {
  // Conv: a 1x1 input padded to a 1024x1024 output of a 1024x1024 kernel: 2^40 MACs.
  const NpyArray x = f32({1, 1, 1, 1}, {1});
  const NpyArray w = NpyArray::zeros(DType::kFloat32, {1, 1, 1024, 1024});
  auto r = run("Conv", R"({"pads":[1023,1023,1023,1023]})", {&x, &w});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EFBIG);
  EXPECT_EQ(err(r),
            "Conv: 1099511627776 multiply-accumulates (1048576 outputs × 1048576) exceed the host "
            "limit of 68719476736");
  // The same op under a smaller limit than its work, and within one.
  const NpyArray w3 = f32({1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  const NpyArray x4 = f32({1, 1, 4, 4}, iota_f(16));
  const std::vector<const NpyArray*> ins{&x4, &w3};
  auto small = npu::ops::run("Conv", "{}", ins, 1, {.max_work = 35});
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().message,
            "Conv: 36 multiply-accumulates (4 outputs × 9) exceed the host limit of 35");
  EXPECT_TRUE(npu::ops::run("Conv", "{}", ins, 1, {.max_work = 36}));
  // Pooling counts the taps inside the input: a 1024x1024 window padded over a 1024x1024 input.
  const NpyArray big = NpyArray::zeros(DType::kFloat32, {1, 1, 1024, 1024});
  const std::string e =
      err(run("MaxPool", R"({"kernel_shape":[1024,1024],"pads":[1023,1023,1023,1023]})", {&big}));
  EXPECT_EQ(e,
            "MaxPool: 4393752592384 window taps (4190209 outputs × 1048576) exceed the host limit "
            "of 68719476736");
  // MatMul and Gemm: [1, 2^20] x [2^20, 2^17] would be 2^37 MACs; B is never read.
  const NpyArray a = NpyArray::zeros(DType::kFloat32, {1, 1 << 20});
  const NpyArray b = NpyArray::zeros(DType::kFloat32, {1 << 20, 1});
  const std::vector<const NpyArray*> ab{&a, &b};
  auto mm = npu::ops::run("MatMul", "{}", ab, 1, {.max_work = 1000});
  ASSERT_FALSE(mm);
  EXPECT_EQ(mm.error().code, EFBIG);
  EXPECT_EQ(mm.error().message,
            "MatMul: 1048576 multiply-accumulates (1 outputs × 1048576) exceed the host limit of "
            "1000");
  auto gemm = npu::ops::run("Gemm", "{}", ab, 1, {.max_work = 1000});
  ASSERT_FALSE(gemm);
  EXPECT_EQ(gemm.error().code, EFBIG);
}

// A call with a deadline stops when it passes: the long loops poll npu::cancelled().
TEST(HostOpsLimits, DeadlineStopsTheCall) {
  const NpyArray x = NpyArray::zeros(DType::kFloat32, {1, 64, 64, 64});
  const NpyArray w = NpyArray::zeros(DType::kFloat32, {64, 64, 3, 3});
  const std::vector<const NpyArray*> ins{&x, &w};
  using Clock = std::chrono::steady_clock;
  auto past = npu::ops::run("Conv", "{}", ins, 1, {.deadline = Clock::now()});
  ASSERT_FALSE(past);
  EXPECT_EQ(past.error().code, ETIMEDOUT);
  EXPECT_EQ(past.error().message, "Conv: stopped: the time limit passed");
  // 151M MACs in the reference loops take far longer than a millisecond: the call is stopped
  // inside the loop (conv2d_f32 polls per output row).
  auto mid = npu::ops::run("Conv", "{}", ins, 1,
                           {.deadline = Clock::now() + std::chrono::milliseconds(1)});
  ASSERT_FALSE(mid);
  EXPECT_EQ(mid.error().code, ETIMEDOUT);
  for (const char* op : {"MaxPool", "AveragePool"}) {
    auto p = npu::ops::run(op, R"({"kernel_shape":[3,3]})", std::vector<const NpyArray*>{&x}, 1,
                           {.deadline = Clock::now()});
    ASSERT_FALSE(p);
    EXPECT_EQ(p.error().code, ETIMEDOUT) << op;
  }
  // A far deadline changes nothing.
  const NpyArray x1 = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const NpyArray w1 = f32({1, 1, 1, 1}, {2});
  auto ok = npu::ops::run("Conv", "{}", std::vector<const NpyArray*>{&x1, &w1}, 1,
                          {.deadline = Clock::now() + std::chrono::hours(1)});
  EXPECT_EQ(out<float>(ok, {1, 1, 2, 2}), (std::vector<float>{2, 4, 6, 8}));
}

TEST(HostOpsPool, MaxPoolDilationIndicesAcrossChannels) {
  const NpyArray x = f32({1, 2, 5}, {1, 5, 2, 4, 3, 9, 0, 0, 0, 8});
  const auto r = run("MaxPool", R"({"kernel_shape":[2],"dilations":[2]})", {&x}, 2);
  EXPECT_EQ(out<float>(r, {1, 2, 3}), (std::vector<float>{2, 5, 3, 9, 0, 8}));
  // Flat indices over N*C*W; ties keep the first position.
  EXPECT_EQ(out<int64_t>(r, {1, 2, 3}, 1), (std::vector<int64_t>{2, 1, 4, 5, 6, 9}));
  // storage_order 1: column-major spatial offsets.
  const NpyArray x2 = f32({1, 1, 2, 3}, {1, 6, 2, 3, 4, 5});
  const auto c = run("MaxPool", R"({"kernel_shape":[2,2],"storage_order":1})", {&x2}, 2);
  EXPECT_EQ(out<int64_t>(c, {1, 1, 1, 2}, 1), (std::vector<int64_t>{2, 2}));
  const NpyArray u = arr<uint8_t>({1, 1, 3}, {7, 200, 3});
  EXPECT_EQ(out<uint8_t>(run("MaxPool", R"({"kernel_shape":[2]})", {&u}), {1, 1, 2}),
            (std::vector<uint8_t>{200, 200}));
}

TEST(HostOpsPool, AveragePoolPaddingDivisors) {
  const NpyArray x = f32({1, 1, 3, 3}, iota_f(9, 1));
  const char* attrs = R"({"kernel_shape":[3,3],"strides":[2,2],"pads":[1,1,1,1]})";
  EXPECT_EQ(out<float>(run("AveragePool", attrs, {&x}), {1, 1, 2, 2}),
            (std::vector<float>{3, 4, 6, 7}));
  expect_near(out<float>(run("AveragePool", R"({"kernel_shape":[3,3],"strides":[2,2],
                             "pads":[1,1,1,1],"count_include_pad":1})",
                             {&x}),
                         {1, 1, 2, 2}),
              {12.0f / 9, 16.0f / 9, 24.0f / 9, 28.0f / 9});
  // ceil_mode: the last window holds only x[4] (and nothing of the padded input after it).
  const NpyArray x1 = f32({1, 1, 5}, {1, 2, 3, 4, 5});
  EXPECT_EQ(out<float>(run("AveragePool", R"({"kernel_shape":[2],"strides":[2],"ceil_mode":1,
                                              "count_include_pad":1})",
                           {&x1}),
                       {1, 1, 3}),
            (std::vector<float>{1.5f, 3.5f, 5}));
  EXPECT_EQ(out<float>(run("AveragePool", R"({"kernel_shape":[2],"auto_pad":"SAME_UPPER"})", {&x1}),
                       {1, 1, 5}),
            (std::vector<float>{1.5f, 2.5f, 3.5f, 4.5f, 5}));
}

TEST(HostOpsPool, GlobalPoolsAndErrors) {
  const NpyArray x = f32({1, 2, 2, 2}, {1, 2, 3, 4, -1, -2, -3, -8});
  EXPECT_EQ(out<float>(run("GlobalAveragePool", "{}", {&x}), {1, 2, 1, 1}),
            (std::vector<float>{2.5f, -3.5f}));
  EXPECT_EQ(out<float>(run("GlobalMaxPool", "{}", {&x}), {1, 2, 1, 1}),
            (std::vector<float>{4, -1}));
  EXPECT_EQ(err(run("AveragePool", "{}", {&x})), "AveragePool: missing attribute 'kernel_shape'");
  EXPECT_EQ(err(run("MaxPool", R"({"kernel_shape":[3,3]})", {&x})),
            "MaxPool: kernel [3, 3] does not fit input [1, 2, 2, 2]");
  EXPECT_EQ(err(run("MaxPool", R"({"kernel_shape":[1,1]})", {})), "MaxPool: missing input 0");
  const NpyArray i = arr<int32_t>({1, 1, 2}, {1, 2});
  EXPECT_EQ(err(run("AveragePool", R"({"kernel_shape":[1]})", {&i})),
            "AveragePool: dtype int32 is not supported");
}

// ---- BatchNormalization ----

TEST(HostOpsBatchNorm, InferenceAndTrainingMode) {
  const NpyArray x = f32({1, 2, 1, 2}, {1, 2, 3, 4});
  const NpyArray scale = f32({2}, {1, 2}), b = f32({2}, {0, 1});
  const NpyArray mean = f32({2}, {1, 3}), var = f32({2}, {4, 0.25f});
  EXPECT_EQ(
      out<float>(run("BatchNormalization", R"({"epsilon":0.0})", {&x, &scale, &b, &mean, &var}),
                 {1, 2, 1, 2}),
      (std::vector<float>{0, 0.5f, 1, 5}));
  // Batch statistics: ch0 mean 1.5, var 0.25; ch1 mean 3.5, var 0.25.
  const auto t = run("BatchNormalization", R"({"epsilon":0.0,"training_mode":1,"momentum":0.5})",
                     {&x, &scale, &b, &mean, &var}, 3);
  EXPECT_EQ(out<float>(t, {1, 2, 1, 2}), (std::vector<float>{-1, 1, -1, 3}));
  EXPECT_EQ(out<float>(t, {2}, 1), (std::vector<float>{1.25f, 3.25f}));
  EXPECT_EQ(out<float>(t, {2}, 2), (std::vector<float>{2.125f, 0.25f}));
  const NpyArray var3 = f32({3}, {1, 1, 1});
  EXPECT_EQ(err(run("BatchNormalization", "{}", {&x, &scale, &b, &mean, &var3})),
            "BatchNormalization: var shape [3] does not match 2 channels");
}

// ---- QuantizeLinear, DequantizeLinear ----

TEST(HostOpsQuant, QuantizeLinear) {
  // ONNX doc example: uint8, scale 2, zero point 128 (1.5 rounds to 2).
  const NpyArray x = f32({6}, {0, 2, 3, 1000, -254, -1000});
  const NpyArray s2 = scalar<float>(2.0f);
  const NpyArray zp = scalar<uint8_t>(128);
  EXPECT_EQ(out<uint8_t>(run("QuantizeLinear", "{}", {&x, &s2, &zp}), {6}),
            (std::vector<uint8_t>{128, 129, 130, 255, 1, 0}));
  // No zero point: uint8; half to even.
  const NpyArray h = f32({5}, {0.5f, 1.5f, 2.5f, -1, 1000});
  const NpyArray s1 = scalar<float>(1.0f);
  EXPECT_EQ(out<uint8_t>(run("QuantizeLinear", "{}", {&h, &s1}), {5}),
            (std::vector<uint8_t>{0, 2, 2, 0, 255}));
  const NpyArray zi = scalar<int8_t>(-1);
  const NpyArray y = f32({3}, {-300, 2.5f, 3.5f});
  EXPECT_EQ(out<int8_t>(run("QuantizeLinear", "{}", {&y, &s1, &zi}), {3}),
            (std::vector<int8_t>{-128, 1, 3}));
  // Per axis.
  const NpyArray m = f32({2, 2}, {1, 2, 3, 4});
  const NpyArray sa = f32({2}, {1, 2});
  const NpyArray za = arr<uint8_t>({2}, {0, 10});
  EXPECT_EQ(out<uint8_t>(run("QuantizeLinear", R"({"axis":0})", {&m, &sa, &za}), {2, 2}),
            (std::vector<uint8_t>{1, 2, 12, 12}));
  EXPECT_EQ(out<uint8_t>(run("QuantizeLinear", R"({"axis":-1})", {&m, &sa, &za}), {2, 2}),
            (std::vector<uint8_t>{1, 11, 3, 12}));
  const NpyArray s3 = f32({3}, {1, 1, 1});
  EXPECT_EQ(err(run("QuantizeLinear", R"({"axis":1})", {&m, &s3})),
            "QuantizeLinear: scale has 3 values for 2 channels on axis 1");
  const NpyArray z32 = scalar<int32_t>(0);
  EXPECT_EQ(err(run("QuantizeLinear", "{}", {&m, &s1, &z32})),
            "QuantizeLinear: zero point dtype int32 is not supported");
}

TEST(HostOpsQuant, DequantizeLinear) {
  // ONNX doc example.
  const NpyArray x = arr<uint8_t>({4}, {0, 3, 128, 255});
  const NpyArray s2 = scalar<float>(2.0f);
  const NpyArray zp = scalar<uint8_t>(128);
  EXPECT_EQ(out<float>(run("DequantizeLinear", "{}", {&x, &s2, &zp}), {4}),
            (std::vector<float>{-256, -250, 0, 254}));
  const NpyArray i = arr<int32_t>({2}, {-5, 7});
  const NpyArray half = scalar<float>(0.5f);
  EXPECT_EQ(out<float>(run("DequantizeLinear", "{}", {&i, &half}), {2}),
            (std::vector<float>{-2.5f, 3.5f}));
  const NpyArray z1 = scalar<int32_t>(1);
  EXPECT_EQ(err(run("DequantizeLinear", "{}", {&i, &half, &z1})),
            "DequantizeLinear: int32 input needs a zero point of 0");
  // Per axis on axis 1 of [1, 2, 2].
  const NpyArray q = arr<int8_t>({1, 2, 2}, {1, 2, 3, 4});
  const NpyArray sa = f32({2}, {1, 10});
  const NpyArray za = arr<int8_t>({2}, {0, 1});
  EXPECT_EQ(out<float>(run("DequantizeLinear", "{}", {&q, &sa, &za}), {1, 2, 2}),
            (std::vector<float>{1, 2, 20, 30}));
  const NpyArray f = f32({1}, {1});
  EXPECT_EQ(err(run("DequantizeLinear", "{}", {&f, &half})),
            "DequantizeLinear: dtype float32 is not supported");
}

// ---- reductions ----

TEST(HostOpsReduce, AxesFromAttributeOrInput) {
  const NpyArray x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(out<float>(run("ReduceSum", R"({"axes":[1],"keepdims":0,"_opset":11})", {&x}), {2}),
            (std::vector<float>{6, 15}));
  const NpyArray axes = arr<int64_t>({1}, {0});
  EXPECT_EQ(out<float>(run("ReduceSum", R"({"_opset":13})", {&x, &axes}), {1, 3}),
            (std::vector<float>{5, 7, 9}));
  const NpyArray none = arr<int64_t>({0}, {});
  EXPECT_EQ(out<float>(run("ReduceSum", R"({"noop_with_empty_axes":1})", {&x, &none}), {2, 3}),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(out<float>(run("ReduceSum", R"({"keepdims":0})", {&x, &none}), {}),
            (std::vector<float>{21}));
  EXPECT_EQ(out<float>(run("ReduceMean", R"({"axes":[-1]})", {&x}), {2, 1}),
            (std::vector<float>{2, 5}));
  EXPECT_EQ(out<float>(run("ReduceMax", R"({"axes":[0,1],"keepdims":0})", {&x}), {}),
            (std::vector<float>{6}));
  EXPECT_EQ(out<float>(run("ReduceMin", R"({"axes":[0]})", {&x}), {1, 3}),
            (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(out<float>(run("ReduceProd", R"({"axes":[1]})", {&x}), {2, 1}),
            (std::vector<float>{6, 120}));
  EXPECT_EQ(out<float>(run("ReduceSumSquare", R"({"axes":[1]})", {&x}), {2, 1}),
            (std::vector<float>{14, 77}));
  expect_near(out<float>(run("ReduceL2", R"({"axes":[1]})", {&x}), {2, 1}),
              {std::sqrt(14.0f), std::sqrt(77.0f)});
  expect_near(out<float>(run("ReduceLogSumExp", R"({"axes":[0]})", {&x}), {1, 3}),
              {std::log(std::exp(1.0f) + std::exp(4.0f)), std::log(std::exp(2.0f) + std::exp(5.0f)),
               std::log(std::exp(3.0f) + std::exp(6.0f))});
}

TEST(HostOpsReduce, IntegersAndErrors) {
  const NpyArray x = arr<int32_t>({2, 2}, {-7, 2, 5, 4});
  // Mean of integers truncates toward zero (-2.5 -> -2).
  EXPECT_EQ(out<int32_t>(run("ReduceMean", R"({"axes":[1]})", {&x}), {2, 1}),
            (std::vector<int32_t>{-2, 4}));
  const NpyArray l = arr<int64_t>({3}, {int64_t{1} << 40, 3, -5});
  EXPECT_EQ(out<int64_t>(run("ReduceSum", "{}", {&l}), {1}),
            (std::vector<int64_t>{(int64_t{1} << 40) - 2}));
  EXPECT_EQ(out<int64_t>(run("ReduceMax", R"({"keepdims":0})", {&l}), {}),
            (std::vector<int64_t>{int64_t{1} << 40}));
  EXPECT_EQ(err(run("ReduceSum", R"({"axes":[2]})", {&x})),
            "ReduceSum: axis 2 out of range for rank 2");
  EXPECT_EQ(err(run("ReduceSum", R"({"axes":[1,-1]})", {&x})), "ReduceSum: axis -1 appears twice");
  EXPECT_EQ(err(run("ReduceLogSum", "{}", {&x})), "ReduceLogSum: dtype int32 is not supported");
  const NpyArray f_axes = f32({1}, {0});
  EXPECT_EQ(err(run("ReduceSum", "{}", {&x, &f_axes})),
            "ReduceSum: axes dtype float32 is not supported");
}

// ---- elementwise ----

TEST(HostOpsElementwise, ClipBoundsFromInputsOrAttributes) {
  const NpyArray x = f32({4}, {-3, -1, 1, 3});
  const NpyArray lo = scalar<float>(-2.0f), hi = scalar<float>(2.0f);
  EXPECT_EQ(out<float>(run("Clip", "{}", {&x, &lo, &hi}), {4}), (std::vector<float>{-2, -1, 1, 2}));
  EXPECT_EQ(out<float>(run("Clip", "{}", {&x, nullptr, &hi}), {4}),
            (std::vector<float>{-3, -1, 1, 2}));
  EXPECT_EQ(out<float>(run("Clip", R"({"min":0.0,"max":1.5,"_opset":6})", {&x}), {4}),
            (std::vector<float>{0, 0, 1, 1.5f}));
  const NpyArray i = arr<int64_t>({3}, {-10, 5, 10});
  const NpyArray ilo = scalar<int64_t>(0), ihi = scalar<int64_t>(6);
  EXPECT_EQ(out<int64_t>(run("Clip", "{}", {&i, &ilo, &ihi}), {3}),
            (std::vector<int64_t>{0, 5, 6}));
  const NpyArray two = f32({2}, {0, 1});
  EXPECT_EQ(err(run("Clip", "{}", {&x, &two})), "Clip: min must have one element, got shape [2]");
  EXPECT_EQ(err(run("Clip", "{}", {&i, &lo})),
            "Clip: min dtype float32 does not match input dtype int64");
}

TEST(HostOpsElementwise, PReluBroadcastsSlope) {
  const NpyArray x = f32({2, 2}, {-1, 2, -3, 4});
  const NpyArray slope = f32({2}, {0.5f, 0.25f});
  EXPECT_EQ(out<float>(run("PRelu", "{}", {&x, &slope}), {2, 2}),
            (std::vector<float>{-0.5f, 2, -1.5f, 4}));
  // Opset 6: a [C] slope is per channel (axis 1).
  const NpyArray x3 = f32({1, 2, 2}, {-1, -2, -3, 4});
  EXPECT_EQ(out<float>(run("PRelu", R"({"_opset":6})", {&x3, &slope}), {1, 2, 2}),
            (std::vector<float>{-0.5f, -1, -0.75f, 4}));
  const NpyArray big = f32({3, 2, 2}, std::vector<float>(12, 1.0f));
  EXPECT_EQ(err(run("PRelu", "{}", {&x, &big})),
            "PRelu: slope shape [3, 2, 2] does not broadcast to input shape [2, 2]");
}

TEST(HostOpsElementwise, IntegerUnaryAndSign) {
  const NpyArray i = arr<int32_t>({3}, {-4, 0, 7});
  EXPECT_EQ(out<int32_t>(run("Relu", "{}", {&i}), {3}), (std::vector<int32_t>{0, 0, 7}));
  EXPECT_EQ(out<int32_t>(run("Abs", "{}", {&i}), {3}), (std::vector<int32_t>{4, 0, 7}));
  const NpyArray l = arr<int64_t>({2}, {INT64_MIN, 5});
  EXPECT_EQ(out<int64_t>(run("Neg", "{}", {&l}), {2}),
            (std::vector<int64_t>{INT64_MIN, -5}));  // wraps as NumPy
  EXPECT_EQ(out<int64_t>(run("Sign", "{}", {&l}), {2}), (std::vector<int64_t>{-1, 1}));
  const NpyArray f = f32({3}, {-0.5f, 0, 2});
  EXPECT_EQ(out<float>(run("Sign", "{}", {&f}), {3}), (std::vector<float>{-1, 0, 1}));
  EXPECT_EQ(err(run("Sigmoid", "{}", {&i})), "Sigmoid: dtype int32 is not supported");
}

TEST(HostOpsElementwise, Int64BinaryAndVariadic) {
  const NpyArray a = arr<int64_t>({2, 2}, {-7, 8, 9, int64_t{1} << 40});
  const NpyArray b = arr<int64_t>({2}, {2, 0});
  EXPECT_EQ(out<int64_t>(run("Div", "{}", {&a, &b}), {2, 2}),
            (std::vector<int64_t>{-3, 0, 4, 0}));  // truncation; x / 0 = 0
  EXPECT_EQ(out<int64_t>(run("Mul", "{}", {&a, &b}), {2, 2}),
            (std::vector<int64_t>{-14, 0, 18, 0}));
  EXPECT_EQ(out<int64_t>(run("Sub", "{}", {&a, &b}), {2, 2}),
            (std::vector<int64_t>{-9, 8, 7, int64_t{1} << 40}));
  const NpyArray c = arr<int64_t>({1}, {5});
  EXPECT_EQ(out<int64_t>(run("Max", "{}", {&a, &b, &c}), {2, 2}),
            (std::vector<int64_t>{5, 8, 9, int64_t{1} << 40}));
  EXPECT_EQ(out<int64_t>(run("Min", "{}", {&a, &b, &c}), {2, 2}),
            (std::vector<int64_t>{-7, 0, 2, 0}));
  const NpyArray x = f32({2}, {1, 2}), y = f32({2}, {3, 4}), z = f32({1}, {8});
  EXPECT_EQ(out<float>(run("Sum", "{}", {&x, &y, &z}), {2}), (std::vector<float>{12, 14}));
  EXPECT_EQ(out<float>(run("Mean", "{}", {&x, &y, &z}), {2}), (std::vector<float>{4, 14.0f / 3}));
  EXPECT_EQ(out<float>(run("Max", "{}", {&x}), {2}), (std::vector<float>{1, 2}));
  EXPECT_EQ(err(run("Add", "{}", {&a, &x})), "Add: inputs have different dtypes int64 and float32");
  EXPECT_EQ(err(run("Mean", "{}", {&a, &b})), "Mean: dtype int64 is not supported");
}

TEST(HostOpsElementwise, PowMixedTypes) {
  const NpyArray x = f32({2}, {2, 3});
  const NpyArray e = arr<int64_t>({1}, {3});
  EXPECT_EQ(out<float>(run("Pow", "{}", {&x, &e}), {2}), (std::vector<float>{8, 27}));
  const NpyArray xi = arr<int32_t>({2}, {2, 3});
  const NpyArray ten = arr<int32_t>({1}, {10});
  EXPECT_EQ(out<int32_t>(run("Pow", "{}", {&xi, &ten}), {2}), (std::vector<int32_t>{1024, 59049}));
  const NpyArray half = f32({1}, {0.5f});
  EXPECT_EQ(out<int32_t>(run("Pow", "{}", {&xi, &half}), {2}), (std::vector<int32_t>{1, 1}));
}

// ---- Softmax by opset ----

TEST(HostOpsSoftmax, OpsetSelectsAxisSemantics) {
  const NpyArray x = f32({1, 2, 2}, {1, 2, 3, 4});
  // Opset 13: default axis -1, softmax over pairs.
  const float e = std::exp(1.0f);
  expect_near(out<float>(run("Softmax", R"({"_opset":13})", {&x}), {1, 2, 2}),
              {1 / (1 + e), e / (1 + e), 1 / (1 + e), e / (1 + e)});
  // Opset 11: default axis 1, the input flattened to [1, 4].
  float sum = 0;
  for (int k = 1; k <= 4; ++k) sum += std::exp(static_cast<float>(k));
  std::vector<float> want;
  for (int k = 1; k <= 4; ++k) want.push_back(std::exp(static_cast<float>(k)) / sum);
  expect_near(out<float>(run("Softmax", R"({"_opset":11})", {&x}), {1, 2, 2}), want);
  // LogSoftmax before opset 13 flattens too; from opset 13 axis 1 is one axis.
  std::vector<float> logs;
  for (float w : want) logs.push_back(std::log(w));
  expect_near(out<float>(run("LogSoftmax", R"({"_opset":12,"axis":1})", {&x}), {1, 2, 2}), logs);
  expect_near(out<float>(run("Softmax", R"({"_opset":13,"axis":1})", {&x}), {1, 2, 2}),
              {1 / (1 + e * e), 1 / (1 + e * e), e * e / (1 + e * e), e * e / (1 + e * e)});
  EXPECT_EQ(err(run("Softmax", R"({"axis":3})", {&x})), "Softmax: axis 3 out of range for rank 3");
}

// ---- misc ----

TEST(HostOpsMisc, TransposeRankFiveAndDropout) {
  // Channel shuffle: [1, 2, 2, 1, 1] with perm (0, 2, 1, 3, 4).
  const NpyArray x = f32({1, 2, 2, 1, 1}, {1, 2, 3, 4});
  EXPECT_EQ(out<float>(run("Transpose", R"({"perm":[0,2,1,3,4]})", {&x}), {1, 2, 2, 1, 1}),
            (std::vector<float>{1, 3, 2, 4}));
  const auto d = run("Dropout", R"({"ratio":0.5})", {&x}, 2);
  EXPECT_EQ(out<float>(d, {1, 2, 2, 1, 1}), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(out<bool>(d, {1, 2, 2, 1, 1}, 1), (std::vector<bool>{true, true, true, true}));
  const NpyArray train = scalar<bool>(true);
  EXPECT_EQ(err(run("Dropout", "{}", {&x, nullptr, &train})),
            "Dropout: training_mode with ratio 0.500000 drops random elements (not reproducible)");
  const NpyArray zero = scalar<float>(0.0f);
  const auto t0 = run("Dropout", "{}", {&x, &zero, &train}, 2);
  EXPECT_EQ(out<float>(t0, {1, 2, 2, 1, 1}), (std::vector<float>{1, 2, 3, 4}));
}

}  // namespace
