// run_batched(): a batch of any multiple of the input's batch through Model::run's per-batch
// slicing — fixed-batch host and device packages, a dynamic batch, float64 data, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/format/npy.h"
#include "npu/format/package.h"
#include "npu/runtime/batch.h"
#include "npu/runtime/model.h"
#include "test_packages.h"

namespace {

using npu::Model;
using npu::run_batched;
using namespace npu::runtime_test;

/// x [2, 3] -> host Relu -> y [2, 3]; all fixed dims, no buffers.
Package host_relu_package() {
  return host_package({Dim::fixed(2), Dim::fixed(3)}, {"Relu"});
}

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(int(i * 7 % 11) - 5) * 0.5f;
  return v;
}

using RunBatchedTest = DeviceTest;

TEST_F(RunBatchedTest, FixedBatchRunsSliceBySliceInRowOrder) {
  auto model = Model::load(*dev_, host_relu_package(), "relu.npub");
  ASSERT_TRUE(model) << model.error().message;
  const std::vector<float> x = ramp(6 * 3);
  auto r = run_batched(*model, "x", NpyArray::of<float>({6, 3}, x));
  ASSERT_TRUE(r) << r.error().message;
  const NpyArray& y = r->at("y");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{6, 3}));
  std::vector<float> want = x;
  for (float& v : want) v = std::max(v, 0.0f);
  EXPECT_EQ(y.values<float>(), want);
  // Three slices of the compiled batch of 2, one host segment each; the stats are summed.
  EXPECT_EQ(model->last_stats().segments.size(), 3u);
}

TEST_F(RunBatchedTest, DeviceSegmentsAndFloat64Data) {
  // relu (device) -> softmax (host), compiled for a fixed batch of 1.
  auto model = Model::load(*dev_, relu_softmax_package(), "t.npub");
  ASSERT_TRUE(model) << model.error().message;
  const std::vector<float> x = ramp(3 * 8);
  std::vector<double> x64(x.begin(), x.end());
  auto r = run_batched(*model, "x", NpyArray::of<double>({3, 8}, x64));
  ASSERT_TRUE(r) << r.error().message;
  const NpyArray& y = r->at("y");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{3, 8}));
  EXPECT_EQ(model->last_stats().segments.size(), 3u * 2u);
  EXPECT_GT(model->last_stats().device_cycles, 0u);
  for (size_t row = 0; row < 3; ++row) {
    std::vector<float> one(x.begin() + long(row * 8), x.begin() + long(row * 8 + 8));
    auto r1 = model->run({{"x", NpyArray::of<float>({1, 8}, one)}});
    ASSERT_TRUE(r1) << r1.error().message;
    const auto& y1 = r1->at("y");
    EXPECT_TRUE(std::equal(y1.data.begin(), y1.data.end(), y.data.begin() + long(row * 32)))
        << "row " << row;
  }
}

// A batch that is not a multiple of the compiled one (issue 14: a calibration set of 64 rows
// for a model compiled for the run's 3): the last slice is completed with the first rows and
// their results dropped, so every row's result is what it would be alone.
TEST_F(RunBatchedTest, RemainderRowsRunInAPaddedLastSlice) {
  auto model = Model::load(*dev_, host_relu_package(), "relu.npub");
  ASSERT_TRUE(model) << model.error().message;
  std::vector<float> x = ramp(5 * 3);
  for (size_t i = 0; i < x.size(); i += 2) x[i] = -x[i] - 1.0f;
  auto r = run_batched(*model, "x", NpyArray::of<float>({5, 3}, x));
  ASSERT_TRUE(r) << r.error().message;
  const NpyArray& y = r->begin()->second;
  ASSERT_EQ(y.shape, (std::vector<int64_t>{5, 3}));
  std::vector<float> want = x;
  for (float& v : want) v = std::max(v, 0.0f);
  EXPECT_EQ(y.values<float>(), want);
  EXPECT_EQ(model->last_stats().segments.size(), 3u);  // rows [0,2), [2,4), [4,5)+row 0
}

TEST_F(RunBatchedTest, DynamicBatchIsModelRun) {
  auto model = Model::load(
      *dev_, relu_softmax_package(8, "y", "Softmax", {Dim::named("N"), Dim::fixed(8)}), "b.npub");
  ASSERT_TRUE(model) << model.error().message;
  const NpyArray x = NpyArray::of<float>({4, 8}, ramp(4 * 8));
  auto batched = run_batched(*model, "x", x);
  ASSERT_TRUE(batched) << batched.error().message;
  auto direct = model->run({{"x", x}});
  ASSERT_TRUE(direct) << direct.error().message;
  EXPECT_TRUE(batched->at("y") == direct->at("y"));
}

TEST_F(RunBatchedTest, ErrorsNameTheModelAndTheInput) {
  auto model = Model::load(*dev_, host_relu_package(), "cal.npy");
  ASSERT_TRUE(model) << model.error().message;
  auto dtype = run_batched(*model, "x", NpyArray::zeros(DType::kInt8, {2, 3}));
  ASSERT_FALSE(dtype);
  EXPECT_EQ(dtype.error().message, "cal.npy: dtype int8, but input 'x' is float32");
  auto none = run_batched(*model, "x", NpyArray::zeros(DType::kFloat32, {0, 3}));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message,
            "cal.npy: shape [0, 3] does not match input 'x' [2, 3] (any batch of its rows)");
  auto trailing = run_batched(*model, "x", NpyArray::zeros(DType::kFloat32, {4, 4}));
  ASSERT_FALSE(trailing);
  EXPECT_NE(trailing.error().message.find("does not match input 'x'"), std::string::npos);
  auto unknown = run_batched(*model, "q", NpyArray::zeros(DType::kFloat32, {2, 3}));
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown input 'q'"), std::string::npos);
}

TEST_F(RunBatchedTest, FailingSliceNamesItsRows) {
  auto model = Model::load(*dev_, relu_softmax_package(8, "y", "Foo"), "t.npub");
  ASSERT_TRUE(model) << model.error().message;
  auto r = run_batched(*model, "x", NpyArray::zeros(DType::kFloat32, {2, 8}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "t.npub: segment 'softmax0' (host Foo): host op 'Foo' is not supported (batch rows "
            "0..0)");
  EXPECT_EQ(model->last_stats().segments.size(), 2u) << "the stats up to the failure";
}

}  // namespace
