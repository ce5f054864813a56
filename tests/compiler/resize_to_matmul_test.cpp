// resize-to-matmul end to end on the emulator: float32 Resize models compiled with the pass
// (interpolation matrices on the matrix engine) against the same models compiled for the host
// (the operator library's Resize), over linear and cubic, up- and downscaling, every
// coordinate_transformation_mode, antialias, exclude_outside, scales vs sizes, nearest by
// non-integer factors and half precision; and the cases that must stay on the host, with
// their reasons. (The import stops at opset 17: antialias and half_pixel_symmetric are set on
// the imported node; opset 18's axes and keep_aspect_ratio_policy, which change the sizes
// input's length, are left to the operator library's tests.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "emu_suite.h"
#include "model_builder.h"
#include "npu/compiler/compile.h"
#include "npu/compiler/pass_manager.h"
#include "npu/format/array_values.h"
#include "random_values.h"

namespace npu::compiler {
namespace {

using format::NpyArray;
using testing::ModelBuilder;
using testing::numel;
using testing::rnd;
using Arrays = std::map<std::string, NpyArray>;
using I64 = std::vector<int64_t>;

struct ResizeCase {
  std::string name;
  std::string mode = "linear";
  std::string coord = "half_pixel";
  I64 in = {2, 3, 6, 7};
  std::vector<float> scales;  // 4 values (or one per axis); empty: sizes
  I64 sizes;                  // 4 values (or one per axis)
  int64_t antialias = 0, exclude_outside = 0;
  float cubic_a = -0.75f;
  int64_t opset = 17;
  std::vector<float> roi;  // tf_crop_and_resize
  float extrapolation = 0.0f;
  int matmuls = 2;  // device matmul layers expected
};

void PrintTo(const ResizeCase& c, std::ostream* os) {
  *os << c.name;
}

/// The import knows opsets up to 17: the attributes of opsets 18 (antialias) and 19
/// (half_pixel_symmetric) go onto the imported node, which then reads as that opset. Neither
/// changes the output shape.
void set_new_attributes(const ResizeCase& c, Graph& g) {
  for (Node& n : g.nodes) {
    if (n.op_type != "Resize") continue;
    if (c.antialias) {
      n.attrs["antialias"] = c.antialias;
      n.opset = std::max<int64_t>(n.opset, 18);
    }
    if (c.coord == "half_pixel_symmetric") {
      n.attrs["coordinate_transformation_mode"] = c.coord;
      n.opset = 19;
    }
  }
}

ModelBuilder resize_model(const ResizeCase& c) {
  ModelBuilder b(c.opset);
  b.input("x", {c.in[0], c.in[1], c.in[2], c.in[3]});
  std::vector<std::string> ins = {"x", ""};
  if (!c.roi.empty() || c.opset < 13) {  // opsets 11-12 need the roi input
    const std::vector<float> roi =
        c.roi.empty() ? std::vector<float>{0, 0, 0, 0, 1, 1, 1, 1} : c.roi;
    b.init_f("roi", {static_cast<int64_t>(roi.size())}, roi);
    ins[1] = "roi";
  }
  if (!c.scales.empty()) {
    b.init_f("scales", {static_cast<int64_t>(c.scales.size())}, c.scales);
    ins.push_back("scales");
  } else {
    ins.push_back("");
    b.init_i64("sizes", {static_cast<int64_t>(c.sizes.size())}, c.sizes);
    ins.push_back("sizes");
  }
  if (c.opset < 11) ins = {"x", "scales"};
  auto& n = b.node("Resize", ins, {"y"});
  ModelBuilder::attr(n, "mode", c.mode);
  if (c.opset >= 11) {
    ModelBuilder::attr(n, "coordinate_transformation_mode",
                       c.coord == "half_pixel_symmetric" ? std::string("half_pixel") : c.coord);
    ModelBuilder::attr(n, "cubic_coeff_a", c.cubic_a);
    ModelBuilder::attr(n, "exclude_outside", c.exclude_outside);
    if (c.extrapolation != 0) ModelBuilder::attr(n, "extrapolation_value", c.extrapolation);
  }
  b.output("y");
  return b;
}

/// Device matmul layers of the package.
int matmul_layers(const CompileResult& c) {
  int n = 0;
  for (const auto& s : c.package.metadata.segments) {
    if (s.kind != format::SegmentKind::kDevice) continue;
    for (const auto& l : s.layers) n += l.op.find("matmul") != std::string::npos;
  }
  return n;
}

class ResizeToMatMulTest : public testing::EmuSuite<::testing::TestWithParam<ResizeCase>> {
 protected:
  static Run run(const ResizeCase& c, bool host_only, Precision p = Precision::kFp32) {
    CompileOptions o;
    o.host_only = host_only;
    if (host_only) o.passes.disable = {"resize-to-matmul"};  // the operator library's Resize
    o.precision = p;
    const Arrays in{{"x", NpyArray::of<float>(c.in, rnd(numel(c.in), 5))}};
    Run r;
    o.device = device_->config();
    auto g = import_onnx_bytes(resize_model(c).bytes(), {}, c.name);
    EXPECT_TRUE(g) << g.error().message;
    if (!g) return r;
    set_new_attributes(c, *g);
    auto compiled = compile_graph(std::move(*g), o, c.name);
    EXPECT_TRUE(compiled) << compiled.error().message;
    if (!compiled) return r;
    r.compiled = std::move(*compiled);
    auto m = Model::load(*device_, r.compiled.package, c.name);
    EXPECT_TRUE(m) << m.error().message;
    if (!m) return r;
    auto out = m->run(in);
    EXPECT_TRUE(out) << out.error().message;
    if (out) r.out = std::move(*out);
    return r;
  }

  /// max |got - want| and max |want|.
  static std::pair<double, double> error(const NpyArray& got, const NpyArray& want) {
    EXPECT_EQ(got.shape, want.shape);
    const auto g = format::to_floats(got), w = format::to_floats(want);
    double err = 0, scale = 0;
    for (size_t i = 0; i < std::min(g.size(), w.size()); ++i) {
      err = std::max(err, std::fabs(double(g[i]) - double(w[i])));
      scale = std::max(scale, std::fabs(double(w[i])));
    }
    return {err, scale};
  }
};

TEST_P(ResizeToMatMulTest, DeviceMatchesTheHostOp) {
  const ResizeCase& c = GetParam();
  const Run dev = run(c, false);
  const Run host = run(c, true);
  EXPECT_EQ(dev.compiled.host_ops, 0u) << dev.compiled.partition_report;
  EXPECT_EQ(matmul_layers(dev.compiled), c.matmuls) << dev.compiled.partition_report;
  EXPECT_EQ(host.compiled.device_ops, 0u);
  ASSERT_EQ(host.compiled.package.metadata.segments.size(), 1u);
  EXPECT_EQ(host.compiled.package.metadata.segments[0].op_type, "Resize");
  ASSERT_EQ(dev.out.size(), 1u);
  ASSERT_EQ(host.out.size(), 1u);
  const auto [err, scale] = error(dev.out.at("y"), host.out.at("y"));
  // Float32 on both sides: only the summation order differs.
  EXPECT_LE(err, 2e-6) << "max |want| " << scale;
  EXPECT_GT(scale, 0.1) << "a trivial output compares nothing";
}

std::vector<ResizeCase> all_resize_cases() {
  std::vector<ResizeCase> cases;
  for (const char* mode : {"linear", "cubic"}) {
    for (const char* coord : {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                              "align_corners", "asymmetric"}) {
      ResizeCase up;
      up.name = std::string(mode) + "_" + coord + "_up_scales";
      up.mode = mode;
      up.coord = coord;
      up.in = {2, 3, 5, 7};
      up.scales = {1, 1, 1.6f, 2.3f};  // 8 x 16
      cases.push_back(up);
      ResizeCase down;
      down.name = std::string(mode) + "_" + coord + "_down_sizes";
      down.mode = mode;
      down.coord = coord;
      down.in = {1, 4, 9, 12};
      down.sizes = {1, 4, 4, 5};
      cases.push_back(down);
    }
    ResizeCase aa;
    aa.name = std::string(mode) + "_antialias_down_scales";
    aa.mode = mode;
    aa.in = {1, 2, 13, 16};
    aa.scales = {1, 1, 0.4f, 0.6f};
    aa.antialias = 1;
    cases.push_back(aa);
    aa.name = std::string(mode) + "_antialias_down_sizes_align_corners";
    aa.coord = "align_corners";
    aa.scales = {};
    aa.sizes = {1, 2, 4, 11};
    cases.push_back(aa);
    aa.name = std::string(mode) + "_antialias_up";  // antialias changes nothing upwards
    aa.coord = "half_pixel";
    aa.sizes = {1, 2, 20, 21};
    cases.push_back(aa);
    ResizeCase ex;
    ex.name = std::string(mode) + "_exclude_outside_up";
    ex.mode = mode;
    ex.exclude_outside = 1;
    ex.in = {1, 3, 4, 5};
    ex.scales = {1, 1, 2.5f, 1.5f};
    cases.push_back(ex);
    ex.name = std::string(mode) + "_exclude_outside_antialias_down";
    ex.antialias = 1;
    ex.in = {1, 3, 11, 10};
    ex.scales = {1, 1, 0.5f, 0.7f};
    cases.push_back(ex);
    ResizeCase crop;
    crop.name = std::string(mode) + "_tf_crop_and_resize";
    crop.mode = mode;
    crop.coord = "tf_crop_and_resize";
    crop.in = {1, 2, 8, 9};
    crop.roi = {0, 0, 0.2f, -0.3f, 1, 1, 0.9f, 1.2f};  // reaches outside: extrapolation 0
    crop.sizes = {1, 2, 6, 7};
    cases.push_back(crop);
  }
  ResizeCase a;
  a.name = "cubic_coeff_a_minus_half";
  a.mode = "cubic";
  a.cubic_a = -0.5f;
  a.scales = {1, 1, 1.5f, 0.8f};
  cases.push_back(a);
  a = ResizeCase{};
  a.name = "linear_tf_half_pixel_for_nn_opset11";
  a.opset = 11;
  a.coord = "tf_half_pixel_for_nn";
  // (x + 0.5) / 1 interpolates even an unscaled axis; N and C of 1 keep their one element.
  a.in = {1, 1, 6, 7};
  a.scales = {1, 1, 2, 0.5f};
  cases.push_back(a);
  a = ResizeCase{};
  a.name = "linear_opset10_asymmetric";
  a.opset = 10;
  a.scales = {1, 1, 2, 1.5f};
  cases.push_back(a);
  a = ResizeCase{};
  a.name = "linear_width_only";  // the H matrix is the identity: one matmul
  a.scales = {1, 1, 1, 1.5f};
  a.matmuls = 1;
  cases.push_back(a);
  a = ResizeCase{};
  a.name = "cubic_height_only";
  a.mode = "cubic";
  a.sizes = {2, 3, 15, 7};
  a.matmuls = 1;
  cases.push_back(a);
  a = ResizeCase{};
  a.name = "nearest_non_integer";
  a.mode = "nearest";
  a.scales = {1, 1, 1.5f, 0.75f};
  cases.push_back(a);
  a = ResizeCase{};
  a.name = "nearest_align_corners_ceil";
  a.mode = "nearest";
  a.coord = "align_corners";
  a.sizes = {2, 3, 12, 14};
  cases.push_back(a);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Modes, ResizeToMatMulTest, ::testing::ValuesIn(all_resize_cases()),
                         [](const ::testing::TestParamInfo<ResizeCase>& i) {
                           return i.param.name;
                         });

TEST_F(ResizeToMatMulTest, HalfPrecisionStaysWithinTheFp16Tolerance) {
  for (const char* mode : {"linear", "cubic"}) {
    SCOPED_TRACE(mode);
    ResizeCase c;
    c.name = std::string("half_") + mode;
    c.mode = mode;
    c.in = {1, 4, 10, 12};
    c.scales = {1, 1, 2.2f, 0.7f};
    const Run fp32 = run(c, false);
    const Run half = run(c, false, Precision::kFp16);
    EXPECT_EQ(half.compiled.host_ops, 0u) << half.compiled.partition_report;
    ASSERT_EQ(half.out.size(), 1u);
    ASSERT_EQ(fp32.out.size(), 1u);
    const auto [err, scale] = error(half.out.at("y"), fp32.out.at("y"));
    EXPECT_LT(err / std::max(scale, 1.0), 4e-3);  // precision_test's fp16 tolerance
    EXPECT_GT(err, 0.0) << "identical to fp32, so nothing ran in half precision";
  }
}

/// The compiled model's partition report (the host ops' reasons) and host op count.
class ResizeStaysOnTheHost : public testing::EmuSuite<> {
 protected:
  static CompileResult compile(const ModelBuilder& b, std::vector<std::string> disable = {}) {
    CompileOptions o;
    o.passes.disable = std::move(disable);
    const Run r = compile_and_run(b.bytes(), o, inputs_, "resize.onnx");
    return r.compiled;
  }
  static inline Arrays inputs_;
};

TEST_F(ResizeStaysOnTheHost, WithAReasonInTheReport) {
  struct Negative {
    ResizeCase c;
    std::vector<std::string> disable;
    std::string reason;
  };
  std::vector<Negative> negatives;
  ResizeCase c;
  c.name = "channels";
  c.scales = {1, 2, 1.5f, 1.5f};
  negatives.push_back({c, {}, "batch or channel"});
  c = ResizeCase{};
  c.name = "crop_extrapolation";
  c.coord = "tf_crop_and_resize";
  c.roi = {0, 0, -0.2f, 0, 1, 1, 1, 1};
  c.sizes = {2, 3, 7, 7};
  c.extrapolation = 10.0f;
  negatives.push_back({c, {}, "extrapolation_value"});
  c = ResizeCase{};
  c.name = "disabled";
  c.mode = "cubic";
  c.scales = {1, 1, 2, 2};
  negatives.push_back({c, {"resize-to-matmul"}, "resize-to-matmul did not run"});
  for (const Negative& n : negatives) {
    SCOPED_TRACE(n.c.name);
    inputs_ = {{"x", NpyArray::of<float>(n.c.in, rnd(numel(n.c.in), 7))}};
    const CompileResult r = compile(resize_model(n.c), n.disable);
    EXPECT_EQ(r.host_ops, 1u) << r.partition_report;
    EXPECT_EQ(matmul_layers(r), 0);
    EXPECT_NE(r.partition_report.find(n.reason), std::string::npos) << r.partition_report;
  }
  // Rank 3 and float64: the operator's other forms stay on the host too.
  ModelBuilder b3(17);
  b3.input("x", {3, 6, 7});
  b3.init_f("scales", {3}, {1, 2, 1.5f});
  ModelBuilder::attr(b3.node("Resize", {"x", "", "scales"}, {"y"}), "mode", std::string("linear"));
  b3.output("y");
  inputs_ = {{"x", NpyArray::of<float>({3, 6, 7}, rnd(126, 8))}};
  CompileResult r = compile(b3);
  EXPECT_EQ(r.host_ops, 1u);
  EXPECT_NE(r.partition_report.find("rank other than 4"), std::string::npos) << r.partition_report;
}

TEST(ResizeToMatMul, RewritesIntoConstantInterpolationMatrices) {
  ResizeCase c;
  c.in = {1, 2, 4, 6};
  c.coord = "align_corners";
  c.scales = {1, 1, 1.75f, 0.5f};  // 7 x 3
  auto g = import_onnx_bytes(resize_model(c).bytes(), {}, "resize.onnx");
  ASSERT_TRUE(g) << g.error().message;
  PassManager pm;
  pm.add(create_pass("resize-to-matmul"));
  ASSERT_TRUE(pm.run(*g));
  ASSERT_EQ(g->nodes.size(), 2u) << to_string(*g);
  // W shrinks, so it goes first: X [.., 4, 6] · Rw^T [6, 3], then Rh [7, 4] · that.
  const Node& w = g->nodes[0];
  const Node& h = g->nodes[1];
  ASSERT_EQ(w.op_type, "MatMul");
  ASSERT_EQ(h.op_type, "MatMul");
  const NpyArray* rwt = g->constant(w.inputs[1]);
  const NpyArray* rh = g->constant(h.inputs[0]);
  ASSERT_TRUE(rwt && rh);
  EXPECT_EQ(rwt->shape, (I64{6, 3}));
  EXPECT_EQ(rh->shape, (I64{7, 4}));
  // align_corners: output o reads o * (in - 1) / (out - 1); W: 0, 2.5, 5.
  const std::vector<float> want_rwt = {1, 0, 0, 0, 0, 0, 0, 0.5f, 0, 0, 0.5f, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(format::to_floats(*rwt), want_rwt);
  // H row 1 reads 0.5: half of rows 0 and 1.
  const auto rhv = format::to_floats(*rh);
  EXPECT_FLOAT_EQ(rhv[4 + 0], 0.5f);
  EXPECT_FLOAT_EQ(rhv[4 + 1], 0.5f);
  EXPECT_EQ(h.inputs[1], w.outputs[0]);
  EXPECT_EQ(g->value(w.outputs[0]).static_dims(), (I64{1, 2, 4, 3}));
}

}  // namespace
}  // namespace npu::compiler
