// Post-training int8 quantization end to end (npu-compile --quantize int8 --calibration):
// the Fashion-MNIST classifier (models/fashion_mnist) is compiled in float and in int8
// through the tools' compile flags (tools/common/compile_cli), both packages run on the
// emulator on the 8 sample images, and the int8 package must put its quantized ops on the
// device (int8 tensors, no host segment) and agree with the float model's top-1 on every
// sample (the true labels, which the float model gets right), bit-exactly like the same int8
// graph run by the host ops. Also: the flag errors, the
// calibration error for a model with several inputs, and the npu-compile binary itself.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../compiler/model_builder.h"
#include "compile_cli.h"
#include "model_cli.h"
#include "npu/device.h"
#include "npu/format/npy.h"
#include "npu/runtime/model.h"

namespace fs = std::filesystem;

namespace npu::tools {
namespace {

const fs::path kModelDir = fs::path(NPU_SOURCE_DIR) / "models" / "fashion_mnist";

std::vector<int> argmax_rows(const format::NpyArray& logits) {
  std::vector<int> top;
  const auto v = logits.view<float>();
  const auto cols = static_cast<size_t>(logits.shape.at(1));
  for (size_t r = 0; r * cols < v.size(); ++r) {
    auto row = v.subspan(r * cols, cols);
    top.push_back(static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin()));
  }
  return top;
}

/// The true labels of the samples (labels.txt: "image_K  index  class  pytorch_top1").
std::vector<int> sample_labels() {
  std::ifstream in(kModelDir / "samples" / "labels.txt");
  std::vector<int> labels;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string name;
    int index = -1;
    s >> name >> index;
    labels.push_back(index);
  }
  return labels;
}

struct Compiled {
  compiler::CompileResult result;
  format::NpyArray logits;
};

Compiled compile_and_run(const CompileFlags& flags) {
  Compiled c;
  auto options = compile_options(flags, nullptr);
  EXPECT_TRUE(options) << options.error().message;
  if (!options) return c;
  auto r = compile_model(flags, *options);
  EXPECT_TRUE(r) << r.error().message;
  if (!r) return c;
  c.result = *r;
  auto dev = Device::open("emu:");
  EXPECT_TRUE(dev) << dev.error().message;
  if (!dev) return c;
  auto model = Model::load(*dev, r->package, flags.model);
  EXPECT_TRUE(model) << model.error().message;
  if (!model) return c;
  auto batch = format::read_npy((kModelDir / "samples" / "batch8.npy").string());
  EXPECT_TRUE(batch) << batch.error().message;
  if (!batch) return c;
  auto out = model->run({{"image", *batch}});
  EXPECT_TRUE(out) << out.error().message;
  if (!out) return c;
  c.logits = out->at("logits");
  return c;
}

TEST(QuantizeInt8, FashionMnistAgreesWithFloatOnTheSamples) {
  CompileFlags flags;
  flags.model = (kModelDir / "fashion_mnist.onnx").string();
  const Compiled fp = compile_and_run(flags);
  flags.quantize = "int8";
  flags.calibration = (kModelDir / "calibration.npy").string();
  const Compiled q8 = compile_and_run(flags);
  // The same int8 graph with every op on the host (libnpu's host ops, incl. QLinearMatMul's
  // bias input), compiled for a batch of 8 (the runtime runs a dynamic batch slice by slice
  // only through device buffers; the calibration then runs in slices of 8: same ranges).
  flags.host_only = true;
  flags.input_shapes = {"image=8,1,28,28"};
  const Compiled q8_host = compile_and_run(flags);
  ASSERT_EQ(fp.logits.shape, (std::vector<int64_t>{8, 10}));
  ASSERT_EQ(q8.logits.shape, (std::vector<int64_t>{8, 10}));
  ASSERT_EQ(q8_host.logits.shape, (std::vector<int64_t>{8, 10}));
  EXPECT_EQ(q8_host.result.device_ops, 0u);
  // int8 is bit-exact between the device and the host reference.
  EXPECT_TRUE(q8.logits == q8_host.logits) << "device and host int8 logits differ";

  // Every op of the int8 package is on the device: Quantize, 2 QLinearConv, 2 MaxPool,
  // Flatten, 2 QLinearMatMul, Dequantize.
  EXPECT_EQ(q8.result.host_ops, 0u) << q8.result.partition_report;
  EXPECT_EQ(q8.result.device_ops, 9u) << q8.result.partition_report;
  std::map<std::string, int> ops;
  for (const auto& s : q8.result.package.metadata.segments) {
    EXPECT_EQ(s.kind, format::SegmentKind::kDevice) << s.name << " " << s.op_type;
    for (const auto& l : s.layers) ++ops[l.op];
  }
  EXPECT_EQ(ops["quantize"], 1);
  EXPECT_EQ(ops["conv2d"], 2);
  EXPECT_EQ(ops["pool"], 2);
  EXPECT_EQ(ops["matmul"], 2);
  EXPECT_EQ(ops["dequantize"], 1);
  // The weights are int8: the constants buffer is about a quarter of the float one's.
  auto constants = [](const compiler::CompileResult& r) {
    for (const auto& b : r.package.metadata.buffers) {
      if (b.kind == format::BufferKind::kConstants) return b.size;
    }
    return uint64_t{0};
  };
  EXPECT_GT(constants(fp.result), 400'000u);
  EXPECT_LT(constants(q8.result), constants(fp.result) * 3 / 10);

  // Same top-1 as the float model, which gets the true label of every sample.
  const auto labels = sample_labels();
  ASSERT_EQ(labels.size(), 8u);
  EXPECT_EQ(argmax_rows(fp.logits), labels);
  EXPECT_EQ(argmax_rows(q8.logits), argmax_rows(fp.logits));
  // The int8 logits are close to the float ones but not identical (it really is int8).
  const auto a = fp.logits.view<float>(), b = q8.logits.view<float>();
  float lo = a[0], hi = a[0], diff = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) {
    lo = std::min(lo, a[i]);
    hi = std::max(hi, a[i]);
    diff = std::max(diff, std::fabs(a[i] - b[i]));
  }
  EXPECT_GT(diff, 0.0f);
  EXPECT_LT(diff, 0.1f * (hi - lo)) << "max |float - int8| logit difference";
}

TEST(QuantizeInt8, FlagErrorsAreOneLineAndNameTheProblem) {
  CompileFlags f;
  f.model = (kModelDir / "fashion_mnist.onnx").string();
  f.quantize = "int4";
  f.calibration = (kModelDir / "calibration.npy").string();
  auto r = compile_options(f, nullptr);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "--quantize int4: unsupported (only int8)");
  f.quantize = "int8";
  f.calibration.clear();
  r = compile_options(f, nullptr);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "--quantize int8 needs --calibration FILE.npy");
  f.quantize.clear();
  f.calibration = (kModelDir / "calibration.npy").string();
  r = compile_options(f, nullptr);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "--calibration needs --quantize int8");
  f.quantize = "int8";
  f.calibration = "/nonexistent/calibration.npy";
  r = compile_options(f, nullptr);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("/nonexistent/calibration.npy"), std::string::npos)
      << r.error().message;
  // Calibration data that does not fit the input.
  const fs::path bad =
      fs::temp_directory_path() / ("npu_q_bad_" + std::to_string(getpid()) + ".npy");
  ASSERT_TRUE(format::write_npy(bad.string(),
                                format::NpyArray::zeros(format::DType::kFloat32, {4, 1, 27, 28})));
  f.calibration = bad.string();
  auto o = compile_options(f, nullptr);
  ASSERT_TRUE(o) << o.error().message;
  auto c = compile_model(f, *o);
  fs::remove(bad);
  ASSERT_FALSE(c);
  EXPECT_NE(
      c.error().message.find("shape [4, 1, 27, 28] does not match input 'image' [1, 1, 28, 28]"),
      std::string::npos)
      << c.error().message;
}

TEST(QuantizeInt8, CalibrationNeedsOneInput) {
  compiler::testing::ModelBuilder b;
  b.input("a", {int64_t{1}, int64_t{4}});
  b.input("b", {int64_t{1}, int64_t{4}});
  b.init_f("w", {4, 3}, std::vector<float>(12, 0.25f));
  b.node("Add", {"a", "b"}, {"s"}, "add");
  b.node("MatMul", {"s", "w"}, {"y"}, "mm");
  b.output("y", {int64_t{1}, int64_t{3}});
  const std::string path = b.save();
  const fs::path data =
      fs::temp_directory_path() / ("npu_q_two_" + std::to_string(getpid()) + ".npy");
  ASSERT_TRUE(
      format::write_npy(data.string(), format::NpyArray::zeros(format::DType::kFloat32, {1, 4})));
  CompileFlags f;
  f.model = path;
  f.quantize = "int8";
  f.calibration = data.string();
  auto o = compile_options(f, nullptr);
  ASSERT_TRUE(o) << o.error().message;
  auto c = compile_model(f, *o);
  fs::remove(path);
  fs::remove(data);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("the model has 2 inputs (a, b)"), std::string::npos)
      << c.error().message;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(QuantizeInt8, NpuCompileWritesTheInt8Package) {
  const fs::path dir = fs::path(NPU_TEST_WORK_DIR) / "quantize";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path out = dir / "fm_int8.npub";
  const std::string cmd = std::string(NPU_COMPILE_PATH) + " '" +
                          (kModelDir / "fashion_mnist.onnx").string() + "' -o '" + out.string() +
                          "' --quantize int8 --calibration '" +
                          (kModelDir / "calibration.npy").string() + "' >'" +
                          (dir / "out.txt").string() + "' 2>'" + (dir / "err.txt").string() + "'";
  const int raw = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(raw));
  EXPECT_EQ(WEXITSTATUS(raw), 0) << slurp(dir / "err.txt");
  EXPECT_NE(slurp(dir / "out.txt").find("(9 ops on the NPU, 0 on the host)"), std::string::npos)
      << slurp(dir / "out.txt");
  auto dev = Device::open("emu:");
  ASSERT_TRUE(dev) << dev.error().message;
  auto model = Model::load(*dev, out.string());
  ASSERT_TRUE(model) << model.error().message;
  // The package keeps the dynamic batch: all 8 samples in one run.
  auto batch = format::read_npy((kModelDir / "samples" / "batch8.npy").string());
  ASSERT_TRUE(batch);
  auto r = model->run({{"image", *batch}});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(argmax_rows(r->at("logits")), sample_labels());

  const std::string bad = std::string(NPU_COMPILE_PATH) + " '" +
                          (kModelDir / "fashion_mnist.onnx").string() + "' -o '" + out.string() +
                          "' --quantize int4 --calibration x.npy 2>'" +
                          (dir / "err2.txt").string() + "'";
  const int raw2 = std::system(bad.c_str());
  ASSERT_TRUE(WIFEXITED(raw2));
  EXPECT_EQ(WEXITSTATUS(raw2), 1);
  EXPECT_EQ(slurp(dir / "err2.txt"), "npu-compile: --quantize int4: unsupported (only int8)\n");
}

}  // namespace
}  // namespace npu::tools

namespace npu::tools {
namespace {

TEST(LayerTiming, EstimatesEqualTheDevicePerLayer) {
  // npu-submit --stats: the compiler's per-layer estimate next to the cycles the device took
  // between the FENCEs; the schedule replay is exact, so they agree layer by layer.
  for (bool int8 : {false, true}) {
    SCOPED_TRACE(int8 ? "int8" : "float");
    CompileFlags flags;
    flags.model = (kModelDir / "fashion_mnist.onnx").string();
    if (int8) {
      flags.quantize = "int8";
      flags.calibration = (kModelDir / "calibration.npy").string();
    }
    auto options = compile_options(flags, nullptr);
    ASSERT_TRUE(options) << options.error().message;
    auto r = compile_model(flags, *options);
    ASSERT_TRUE(r) << r.error().message;
    auto dev = Device::open("emu:");
    ASSERT_TRUE(dev);
    auto model = Model::load(*dev, r->package, "fm");
    ASSERT_TRUE(model) << model.error().message;
    auto image = format::read_npy((kModelDir / "samples" / "image_0.npy").string());
    ASSERT_TRUE(image);
    RunOptions ro;
    ro.collect_profile = true;
    ASSERT_TRUE(model->run({{"image", *image}}, ro));
    const std::string table = layer_timing_table(*model, model->last_stats());
    std::istringstream lines(table);
    std::string line;
    std::getline(lines, line);
    EXPECT_NE(line.find("estimated"), std::string::npos) << table;
    size_t rows = 0;
    while (std::getline(lines, line)) {
      std::istringstream f(line);
      std::string name;
      uint64_t estimated = 0, measured = 0;
      ASSERT_TRUE(f >> name >> estimated >> measured) << line;
      EXPECT_EQ(estimated, measured) << line;
      EXPECT_GT(measured, 0u) << line;
      ++rows;
    }
    size_t layers = 0;
    for (const auto& s : model->package().metadata.segments) layers += s.layers.size();
    EXPECT_EQ(rows, layers) << table;
  }
}

}  // namespace
}  // namespace npu::tools
