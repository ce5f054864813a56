// npu::Model: small packages (test_packages.h) run on the emulator and compared with values
// computed here — device and host segments, NHWC locations, symbolic and dynamic batches,
// traces — and the load and run errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/format/npy.h"
#include "npu/format/package.h"
#include "npu/isa/builder.h"
#include "npu/runtime/model.h"
#include "npu/test/capabilities.h"
#include "test_packages.h"

namespace {

using npu::Model;
using npu::RunOptions;
using namespace npu::runtime_test;

using ModelTest = DeviceTest;

TEST_F(ModelTest, DeviceReluThenHostSoftmax) {
  auto model = Model::load(*dev_, relu_softmax_package(), "t.npub");
  ASSERT_TRUE(model) << model.error().message;
  ASSERT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->inputs()[0].name, "x");
  EXPECT_EQ(model->outputs()[0].name, "y");
  const std::vector<float> x = {-1.0f, 0.5f, 2.0f, -3.0f, 1.0f, 0.0f, 4.0f, -0.25f};
  npu::RunOptions opts;
  opts.collect_profile = true;
  auto out = model->run({{"x", NpyArray::of<float>({1, 8}, x)}}, opts);
  ASSERT_TRUE(out) << out.error().message;
  std::vector<float> relu = x;
  for (float& v : relu) v = std::max(v, 0.0f);
  const std::vector<float> want = softmax(relu);
  const NpyArray& y = out->at("y");
  EXPECT_EQ(y.shape, (std::vector<int64_t>{1, 8}));
  auto got = y.values<float>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6f) << i;

  const auto& st = model->last_stats();
  ASSERT_EQ(st.segments.size(), 2u);
  EXPECT_GT(st.device_cycles, 0u);
  EXPECT_EQ(st.segments[0].cycles, st.device_cycles);
  EXPECT_EQ(st.segments[1].op_type, "Softmax");
  EXPECT_NE(model->trace_json().find("traceEvents"), std::string::npos);

  // A second run on the same model.
  auto again = model->run({{"x", NpyArray::of<float>({1, 8}, relu)}});
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->at("y").values<float>(), got);
}

// set_priority() makes the model's context again at once, so a refusal shows there: REALTIME
// on a file opened without CAP_SYS_NICE is EPERM (API 1.4) and the old context stays.
TEST_F(ModelTest, PriorityIsTheContextsAndARefusalKeepsTheOldOne) {
  auto model = Model::load(*dev_, relu_softmax_package(), "t.npub");
  ASSERT_TRUE(model) << model.error().message;
  EXPECT_EQ(model->priority(), npu::Priority::kNormal);
  ASSERT_TRUE(model->set_priority(npu::Priority::kHigh));
  EXPECT_EQ(model->priority(), npu::Priority::kHigh);
  const std::vector<float> x(8, 1.0f);
  ASSERT_TRUE(model->run({{"x", NpyArray::of<float>({1, 8}, x)}}));

  // A device opened while this thread lacks CAP_SYS_NICE in its effective set.
  auto plain = [] {
    npu::test::WithoutCapSysNice drop;
    return npu::Device::open("emu:");
  }();
  ASSERT_TRUE(plain) << plain.error().message;
  auto unprivileged = Model::load(*plain, relu_softmax_package(), "t.npub");
  ASSERT_TRUE(unprivileged) << unprivileged.error().message;
  auto r = unprivileged->set_priority(npu::Priority::kRealtime);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EPERM);
  EXPECT_NE(r.error().message.find("CAP_SYS_NICE"), std::string::npos) << r.error().message;
  EXPECT_EQ(unprivileged->priority(), npu::Priority::kNormal);
  EXPECT_TRUE(unprivileged->run({{"x", NpyArray::of<float>({1, 8}, x)}}));
}

TEST_F(ModelTest, NhwcLocationIsConvertedFromNchw) {
  // x: logical NCHW [1, 3, 2, 2] stored NHWC; the device copies the buffer to the output,
  // declared as a plain [1, 2, 2, 3] tensor: y[n, h, w, c] = x[n, c, h, w].
  const uint32_t n = 12;
  npu::isa::CommandBufferBuilder b;
  npu::isa::DmaArgs in;
  in.dram = kVa;
  in.elem_size = 4;
  in.size = {n, 1, 1};
  b.dma_load(in);
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
  npu::isa::DmaArgs out = in;
  out.dram = kVa + kStep;
  b.dma_store(out);
  Package p;
  auto& m = p.metadata;
  m.model.name = "nhwc";
  m.target.features = NPU_FEATURE_FP32;
  m.buffers = {BufferInfo{"in", BufferKind::kInput, n * 4, kVa, {}},
               BufferInfo{"out", BufferKind::kOutput, n * 4, kVa + kStep, {}}};
  m.tensors = {
      TensorInfo{"x",
                 DType::kFloat32,
                 {Dim::fixed(1), Dim::fixed(3), Dim::fixed(2), Dim::fixed(2)},
                 TensorRole::kInput,
                 {},
                 TensorLocation{"in", 0, n * 4, Layout::kNHWC, {}}},
      TensorInfo{"y",
                 DType::kFloat32,
                 {Dim::fixed(1), Dim::fixed(2), Dim::fixed(2), Dim::fixed(3)},
                 TensorRole::kOutput,
                 {},
                 TensorLocation{"out", 0, n * 4, Layout::kPlain, {}}},
  };
  Segment dev;
  dev.name = "copy";
  dev.inputs = {"x"};
  dev.outputs = {"y"};
  dev.buffers = {{"in", Access::kRead}, {"out", Access::kWrite}};
  m.segments = {dev};
  m.inputs = {"x"};
  m.outputs = {"y"};
  p.sections = {cmdbuf_section(b.finish())};
  auto model = Model::load(*dev_, p, "nhwc.npub");
  ASSERT_TRUE(model) << model.error().message;
  std::vector<float> x(n);
  for (uint32_t i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  auto r = model->run({{"x", NpyArray::of<float>({1, 3, 2, 2}, x)}});
  ASSERT_TRUE(r) << r.error().message;
  auto y = r->at("y").values<float>();
  for (int h = 0; h < 2; ++h) {
    for (int w = 0; w < 2; ++w) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(y[(h * 2 + w) * 3 + c], x[(c * 2 + h) * 2 + w]) << h << w << c;
      }
    }
  }
}

TEST_F(ModelTest, HostOnlySymbolicBatch) {
  const Package p = host_package({Dim::named("N"), Dim::fixed(3)}, {"Relu", "Softmax"});
  auto model = Model::load(*dev_, p, "host.npub");
  ASSERT_TRUE(model) << model.error().message;
  EXPECT_TRUE(model->inputs()[0].shape[0].symbolic());
  const std::vector<float> x = {1, -2, 3, 0, 0, 0};
  auto r = model->run({{"x", NpyArray::of<float>({2, 3}, x)}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at("y").shape, (std::vector<int64_t>{2, 3}));
  auto y = r->at("y").values<float>();
  auto row0 = softmax({1, 0, 3});
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(y[i], row0[i], 1e-6f);
  for (int i = 3; i < 6; ++i) EXPECT_NEAR(y[i], 1.0f / 3, 1e-6f);
}

TEST_F(ModelTest, InputErrors) {
  auto model = Model::load(*dev_, relu_softmax_package(), "t.npub");
  ASSERT_TRUE(model) << model.error().message;
  auto wrong_dtype = model->run({{"x", NpyArray::zeros(DType::kInt8, {1, 8})}});
  ASSERT_FALSE(wrong_dtype);
  EXPECT_EQ(wrong_dtype.error().message, "t.npub: input 'x': dtype int8, expected float32");
  auto wrong_shape = model->run({{"x", NpyArray::zeros(DType::kFloat32, {1, 7})}});
  ASSERT_FALSE(wrong_shape);
  EXPECT_EQ(wrong_shape.error().message, "t.npub: input 'x': shape [1, 7], expected [1, 8]");
  auto missing = model->run({});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "t.npub: missing input 'x'");
  auto unknown = model->run({{"x", NpyArray::zeros(DType::kFloat32, {1, 8})},
                             {"z", NpyArray::zeros(DType::kFloat32, {1})}});
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown input 'z'"), std::string::npos);
}

TEST_F(ModelTest, DynamicBatchRunsSliceBySlice) {
  auto model = Model::load(
      *dev_, relu_softmax_package(8, "y", "Softmax", {Dim::named("N"), Dim::fixed(8)}), "b.npub");
  ASSERT_TRUE(model) << model.error().message;
  std::vector<float> xs(4 * 8);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(int(i * 7 % 11) - 5) * 0.3f;
  auto r = model->run({{"x", NpyArray::of<float>({4, 8}, xs)}});
  ASSERT_TRUE(r) << r.error().message;
  const NpyArray& y = r->at("y");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(model->last_stats().segments.size(), 4u * 2u);  // relu (device) + softmax (host)
  // Each row equals a run of that row alone (the package was compiled for batch 1).
  for (size_t row = 0; row < 4; ++row) {
    std::vector<float> one(xs.begin() + long(row * 8), xs.begin() + long(row * 8 + 8));
    auto r1 = model->run({{"x", NpyArray::of<float>({1, 8}, one)}});
    ASSERT_TRUE(r1) << r1.error().message;
    const auto& y1 = r1->at("y");
    ASSERT_EQ(y1.data.size(), 32u);
    EXPECT_TRUE(std::equal(y1.data.begin(), y1.data.end(), y.data.begin() + long(row * 32)))
        << "row " << row;
  }
}

TEST_F(ModelTest, RunViewsReadsTheCallersBytes) {
  auto model = Model::load(
      *dev_, relu_softmax_package(8, "y", "Softmax", {Dim::named("N"), Dim::fixed(8)}), "v.npub");
  ASSERT_TRUE(model) << model.error().message;
  std::vector<float> xs(3 * 8);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(int(i * 5 % 9) - 4) * 0.5f;
  const auto want = model->run({{"x", NpyArray::of<float>({3, 8}, xs)}});
  ASSERT_TRUE(want) << want.error().message;
  // The same rows as a view of the caller's vector, run slice by slice (3 slices of 1 row).
  const npu::format::ArrayView view(DType::kFloat32, {3, 8}, std::as_bytes(std::span(xs)));
  auto got = model->run_views({{"x", view}});
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->at("y"), want->at("y"));
  EXPECT_EQ(model->last_stats().segments.size(), 3u * 2u);
  // A view is checked like an array: its bytes must match its shape.
  const npu::format::ArrayView short_view(DType::kFloat32, {1, 8},
                                          std::as_bytes(std::span(xs)).first(16));
  auto bad = model->run_views({{"x", short_view}});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("needs 32 bytes, array has 16"), std::string::npos)
      << bad.error().message;
}

TEST_F(ModelTest, TraceShowsHostSegments) {
  auto model = Model::load(*dev_, relu_softmax_package(8, "y", "Softmax"), "t.npub");
  ASSERT_TRUE(model) << model.error().message;
  npu::RunOptions o;
  o.collect_profile = true;
  ASSERT_TRUE(model->run({{"x", NpyArray::zeros(DType::kFloat32, {1, 8})}}, o));
  const std::string trace = model->trace_json();
  EXPECT_NE(trace.find("\"name\":\"host\""), std::string::npos) << trace;
  EXPECT_NE(trace.find("(Softmax)"), std::string::npos) << trace;
  EXPECT_NE(trace.find("\"cat\":\"host\""), std::string::npos) << trace;
}

TEST_F(ModelTest, UnknownHostOp) {
  auto model = Model::load(*dev_, relu_softmax_package(8, "y", "Foo"), "t.npub");
  ASSERT_TRUE(model) << model.error().message;
  auto r = model->run({{"x", NpyArray::zeros(DType::kFloat32, {1, 8})}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "t.npub: segment 'softmax0' (host Foo): host op 'Foo' is not supported");
}

// RunOptions::timeout bounds the whole run, host segments included: a long host op stops
// when the time runs out, and a segment does not start after it.
TEST_F(ModelTest, TimeoutBoundsHostSegments) {
  // 1G window taps: far more than the 500 ms limit in any build; the limit leaves room for
  // a loaded machine to start the segment (with 50 ms it sometimes had not started).
  const auto pool = [](int64_t side) {
    Package p = host_package({Dim::fixed(1), Dim::fixed(1), Dim::fixed(side), Dim::fixed(side)},
                             {"MaxPool", "Relu"});
    p.metadata.segments[0].attributes = R"({"kernel_shape":[31,31],"pads":[15,15,15,15]})";
    return p;
  };
  auto model = Model::load(*dev_, pool(1024), "slow.npub");
  ASSERT_TRUE(model) << model.error().message;
  const NpyArray x = NpyArray::zeros(DType::kFloat32, {1, 1, 1024, 1024});
  auto r = model->run({{"x", x}}, {.timeout = std::chrono::milliseconds(500)});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ETIMEDOUT);
  EXPECT_EQ(r.error().message,
            "slow.npub: segment 'op0' (host MaxPool): MaxPool: stopped: the time limit passed");
  // A deadline already passed: nothing starts.
  RunOptions late;
  late.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  r = model->run({{"x", x}}, late);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ETIMEDOUT);
  EXPECT_EQ(r.error().message,
            "slow.npub: segment 'op0' (host MaxPool): not started: the time limit passed");
  // Time enough: the run completes (a smaller input, the same ops).
  auto small = Model::load(*dev_, pool(32), "small.npub");
  ASSERT_TRUE(small) << small.error().message;
  r = small->run({{"x", NpyArray::zeros(DType::kFloat32, {1, 1, 32, 32})}},
                 {.timeout = std::chrono::minutes(5)});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->at("y").shape, (std::vector<int64_t>{1, 1, 32, 32}));
}

TEST_F(ModelTest, CorruptOrMissingPackageFile) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("npu_model_test_corrupt_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "bad.npub").string();
  std::ofstream(path) << "this is not a package";
  auto bad = Model::load(*dev_, path);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find(path), std::string::npos) << bad.error().message;
  auto missing = Model::load(*dev_, (dir / "none.npub").string());
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("none.npub"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// A package whose tensor declares more than its location holds ([N, 2^31] floats in 32
// bytes) is refused when the tensor is read, naming it, before anything is allocated (it used
// to allocate 8 GiB first and end in a bare std::bad_alloc).
TEST_F(ModelTest, OversizedTensorIsRefusedBeforeAllocating) {
  Package p = relu_softmax_package(8, "y", "Softmax", {Dim::named("N"), Dim::fixed(8)});
  p.metadata.tensors[1].shape = {Dim::named("N"), Dim::fixed(int64_t{1} << 31)};
  p.metadata.tensors[2].shape = p.metadata.tensors[1].shape;
  auto model = Model::load(*dev_, p, "big.npub");
  if (!model) {  // refused at load: as good, as long as it names the tensor
    EXPECT_NE(model.error().message.find("'r'"), std::string::npos) << model.error().message;
    return;
  }
  auto r = model->run({{"x", NpyArray::zeros(DType::kFloat32, {1, 8})}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "big.npub: tensor 'r': shape [1, 2147483648] of float32 needs more than the 32 bytes "
            "of its location in buffer 'act'");
}

TEST_F(ModelTest, BufferOutsideVaRangeIsRefused) {
  Package p = relu_softmax_package();
  const auto& va = dev_->params().va_range;
  if (!va) GTEST_SKIP() << "device reports no VA range";
  p.metadata.buffers[1].address = va->end;  // beyond the range
  // The command buffer still targets the old address; only the load check matters here.
  auto model = Model::load(*dev_, p, "va.npub");
  ASSERT_FALSE(model);
  EXPECT_NE(model.error().message.find("va.npub"), std::string::npos) << model.error().message;
}

// Model::load builds, validates and uploads the device segments' command buffers, so the
// first run creates no BO (the device's BO memory of this file does not grow): ResNet-18's
// 13,626 commands were 8-9 ms of its first inference when this happened on first use.
TEST_F(ModelTest, CommandBuffersAreMadeAtLoadNotByTheFirstRun) {
  const auto before = dev_->quota();
  if (!before) GTEST_SKIP() << "device has no quota query: " << before.error().message;
  auto model = Model::load(*dev_, relu_softmax_package(), "t.npub");
  ASSERT_TRUE(model) << model.error().message;
  const auto loaded = dev_->quota();
  ASSERT_TRUE(loaded) << loaded.error().message;
  auto out = model->run({{"x", NpyArray::zeros(DType::kFloat32, {1, 8})}});
  ASSERT_TRUE(out) << out.error().message;
  const auto ran = dev_->quota();
  ASSERT_TRUE(ran) << ran.error().message;
  EXPECT_EQ(ran->bo_memory, loaded->bo_memory);
  EXPECT_GT(loaded->bo_memory, before->bo_memory);
}

}  // namespace
