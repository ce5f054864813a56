// Half precision on the device, end to end on the emulator: a float32 model compiled with
// CompileOptions::precision fp16/bf16 (npu-compile --precision) against the same model at
// fp32, and a float16 ONNX model on the device against its host-only run. The graph mixes
// every layer kind the precision touches: convolutions and a Gemm on the half array, pools,
// a residual Add, a Concat, a constant Pad, a ReduceMean, a softmax and a graph output that is
// a Reshape (an alias the runtime reads), so every converting path is exercised.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "emu_suite.h"
#include "model_builder.h"
#include "npu/compiler/compile.h"
#include "npu/device.h"
#include "npu/format/array_values.h"
#include "npu/runtime/model.h"
#include "random_values.h"

namespace npu::compiler {
namespace {

using format::NpyArray;
using testing::ModelBuilder;
using Arrays = std::map<std::string, NpyArray>;
using I64 = std::vector<int64_t>;

using testing::numel;
using testing::rnd;

/// The mixed graph; `elem` is the float type of its tensors (FLOAT or FLOAT16).
ModelBuilder mixed_model(int elem) {
  const bool half = elem == onnx::TensorProto::FLOAT16;
  ModelBuilder b;
  auto init = [&](const std::string& name, const I64& dims, uint32_t seed, float r) {
    const auto v = rnd(numel(dims), seed, -r, r);
    if (half) {
      b.init_h(name, dims, v, seed % 2 == 0);  // raw_data and int32_data both
    } else {
      b.init_f(name, dims, v);
    }
  };
  b.input("x", {int64_t{1}, int64_t{3}, int64_t{16}, int64_t{16}}, elem);
  init("w1", {8, 3, 3, 3}, 1, 0.4f);
  init("b1", {8}, 2, 0.1f);
  auto& c1 = b.node("Conv", {"x", "w1", "b1"}, {"c1"});
  ModelBuilder::attr(c1, "pads", I64{1, 1, 1, 1});
  b.node("Relu", {"c1"}, {"r1"});
  init("w2", {8, 8, 3, 3}, 3, 0.2f);
  auto& c2 = b.node("Conv", {"r1", "w2"}, {"c2"});
  ModelBuilder::attr(c2, "pads", I64{1, 1, 1, 1});
  b.node("Add", {"c2", "r1"}, {"res"});  // residual
  auto& mp = b.node("MaxPool", {"res"}, {"p"});
  ModelBuilder::attr(mp, "kernel_shape", I64{2, 2});
  ModelBuilder::attr(mp, "strides", I64{2, 2});
  auto& cat = b.node("Concat", {"p", "p"}, {"cat"});
  ModelBuilder::attr(cat, "axis", int64_t{1});
  b.init_i64("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  b.node("Pad", {"cat", "pads"}, {"padded"});
  auto& rm = b.node("ReduceMean", {"padded"}, {"mean"});
  ModelBuilder::attr(rm, "axes", I64{1});
  ModelBuilder::attr(rm, "keepdims", int64_t{1});
  b.node("Flatten", {"padded"}, {"flat"});
  init("gw", {16 * 10 * 10, 10}, 4, 0.05f);
  init("gb", {10}, 5, 0.1f);
  b.node("Gemm", {"flat", "gw", "gb"}, {"logits"});
  b.node("Softmax", {"logits"}, {"probs"});
  b.init_i64("shape", {2}, {1, 100});
  b.node("Reshape", {"mean", "shape"}, {"mean_flat"});  // a graph output that aliases
  b.output("probs", elem);
  b.output("logits", elem);
  b.output("mean_flat", elem);
  return b;
}

class PrecisionTest : public testing::EmuSuite<> {
 protected:
  struct Run {
    CompileResult compiled;
    Arrays out;
    uint64_t cycles = 0;
  };

  static Run compile_and_run(const ModelBuilder& b, CompileOptions o, const Arrays& inputs) {
    auto run = EmuSuite::compile_and_run(b.bytes(), std::move(o), inputs, "mixed.onnx");
    Run r{std::move(run.compiled), std::move(run.out)};
    for (const auto& s : r.compiled.package.metadata.segments) r.cycles += s.estimated_cycles;
    return r;
  }

  /// Largest |got - want| over the output, relative to the largest |want| (at least 1).
  static double max_rel_error(const NpyArray& got, const NpyArray& want) {
    const auto g = format::to_floats(got), w = format::to_floats(want);
    EXPECT_EQ(g.size(), w.size());
    double err = 0, scale = 1;
    for (size_t i = 0; i < std::min(g.size(), w.size()); ++i) {
      err = std::max(err, std::fabs(double(g[i]) - double(w[i])));
      scale = std::max(scale, std::fabs(double(w[i])));
    }
    return err / scale;
  }
};

TEST_F(PrecisionTest, HalfPrecisionMatchesFloat32WithinItsToleranceInFewerCycles) {
  const ModelBuilder b = mixed_model(onnx::TensorProto::FLOAT);
  const Arrays in{{"x", NpyArray::of<float>({1, 3, 16, 16}, rnd(768, 9, -1.0f, 1.0f))}};
  const Run fp32 = compile_and_run(b, {}, in);
  ASSERT_EQ(fp32.out.size(), 3u);
  EXPECT_EQ(fp32.compiled.host_ops, 0u) << fp32.compiled.partition_report;
  for (auto [p, tol] : {std::pair{Precision::kFp16, 4e-3}, std::pair{Precision::kBf16, 3e-2}}) {
    SCOPED_TRACE(p == Precision::kFp16 ? "fp16" : "bf16");
    CompileOptions o;
    o.precision = p;
    const Run half = compile_and_run(b, o, in);
    ASSERT_EQ(half.out.size(), 3u);
    EXPECT_EQ(half.compiled.host_ops, 0u) << half.compiled.partition_report;
    EXPECT_TRUE(half.compiled.package.metadata.target.features & NPU_FEATURE_FP16);
    // Fewer modeled cycles: the half array and half the bytes between layers.
    EXPECT_LT(half.cycles * 10, fp32.cycles * 8) << half.cycles << " vs " << fp32.cycles;
    // The report's totals are the two packages' estimates.
    const std::string report =
        format_precision_report(half.compiled.package, fp32.compiled.package, "half");
    const std::string total = report.substr(report.rfind("total"));
    EXPECT_NE(total.find(" " + std::to_string(fp32.cycles) + " "), std::string::npos) << report;
    EXPECT_NE(total.find(" " + std::to_string(half.cycles) + " "), std::string::npos) << report;
    EXPECT_NE(report.find("conv2d"), std::string::npos) << report;
    for (const auto& [name, want] : fp32.out) {
      const NpyArray& got = half.out.at(name);
      EXPECT_EQ(got.dtype, format::DType::kFloat32) << name << ": graph outputs keep float32";
      const double e = max_rel_error(got, want);
      EXPECT_LT(e, tol) << name;
      EXPECT_GT(e, 0.0) << name << ": identical to fp32, so nothing ran in half precision";
    }
  }
}

TEST_F(PrecisionTest, Float16ModelRunsOnTheDeviceAndMatchesTheHost) {
  const ModelBuilder b = mixed_model(onnx::TensorProto::FLOAT16);
  std::vector<float> x = rnd(768, 11, -1.0f, 1.0f);
  NpyArray xh = NpyArray::zeros(format::DType::kFloat16, {1, 3, 16, 16});
  for (size_t i = 0; i < x.size(); ++i) format::set_number(xh, static_cast<int64_t>(i), x[i]);
  const Arrays in{{"x", xh}};
  const Run dev = compile_and_run(b, {}, in);
  ASSERT_EQ(dev.out.size(), 3u);
  EXPECT_EQ(dev.compiled.host_ops, 0u) << dev.compiled.partition_report;
  CompileOptions host_only;
  host_only.host_only = true;
  const Run host = compile_and_run(b, host_only, in);
  ASSERT_EQ(host.out.size(), 3u);
  for (const auto& [name, want] : host.out) {
    const NpyArray& got = dev.out.at(name);
    EXPECT_EQ(got.dtype, format::DType::kFloat16) << name;
    // Both round every layer's result to fp16; the device keeps fused conv+relu and the
    // residual sum in fp32 between rounding points where the host rounds each node.
    EXPECT_LT(max_rel_error(got, want), 4e-3) << name;
  }
}

TEST_F(PrecisionTest, HalfPrecisionNeedsTheDevicesFp16Feature) {
  const ModelBuilder b = mixed_model(onnx::TensorProto::FLOAT);
  auto g = import_onnx_bytes(b.bytes(), {}, "mixed.onnx");
  ASSERT_TRUE(g) << g.error().message;
  CompileOptions o;
  o.precision = Precision::kFp16;
  o.device.features &= ~uint64_t{NPU_FEATURE_FP16};
  auto c = compile_graph(std::move(*g), o, "mixed.onnx");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ENOTSUP);
  EXPECT_NE(c.error().message.find("--precision fp16"), std::string::npos) << c.error().message;
  EXPECT_FALSE(precision_from_name("fp8"));
  EXPECT_EQ(precision_from_name("bf16"), Precision::kBf16);
}

}  // namespace
}  // namespace npu::compiler
