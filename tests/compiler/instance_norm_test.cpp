// instance-norm-to-layernorm end to end on the emulator: float32 InstanceNormalization models
// compiled with the pass (a LayerNormalization over the spatial axes, a per-channel Mul and
// Add, all on the vector engine) against the same models compiled for the host (the operator
// library's InstanceNormalization), for 1-D, 2-D and 3-D instances; and the cases that stay on
// the host, with their reasons.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "emu_suite.h"
#include "model_builder.h"
#include "npu/compiler/compile.h"
#include "npu/format/array_values.h"
#include "random_values.h"

namespace npu::compiler {
namespace {

using format::NpyArray;
using testing::ModelBuilder;
using testing::numel;
using testing::rnd;

struct InstanceNormCase {
  std::string name;
  std::vector<int64_t> in;
  float epsilon = 1e-5f;
  float offset = 0.0f;  // added to X: statistics of data away from zero
};

void PrintTo(const InstanceNormCase& c, std::ostream* os) {
  *os << c.name;
}

/// InstanceNormalization(x, scale, B) with constant scale and B (scale_input: scale is a graph
/// input instead).
std::string instance_norm_model(const InstanceNormCase& c, bool scale_input = false) {
  ModelBuilder b(17);
  std::vector<testing::DimSpec> dims(c.in.begin(), c.in.end());
  b.input("x", dims);
  const int64_t ch = c.in[1];
  if (scale_input)
    b.input("scale", {ch});
  else
    b.init_f("scale", {ch}, rnd(static_cast<size_t>(ch), 11));
  b.init_f("bias", {ch}, rnd(static_cast<size_t>(ch), 12));
  auto& n = b.node("InstanceNormalization", {"x", "scale", "bias"}, {"y"});
  ModelBuilder::attr(n, "epsilon", c.epsilon);
  b.output("y");
  return b.bytes();
}

class InstanceNormTest : public testing::EmuSuite<::testing::TestWithParam<InstanceNormCase>> {
 protected:
  static Run run(const InstanceNormCase& c, bool host_only) {
    CompileOptions o;
    o.host_only = host_only;
    if (host_only) o.passes.disable = {"instance-norm-to-layernorm"};  // the library's op
    std::vector<float> x = rnd(numel(c.in), 13);
    for (float& v : x) v = v * 3.0f + c.offset;
    return compile_and_run(instance_norm_model(c), o, {{"x", NpyArray::of<float>(c.in, x)}},
                           c.name);
  }
};

TEST_P(InstanceNormTest, DeviceMatchesTheHostOp) {
  const InstanceNormCase& c = GetParam();
  const Run dev = run(c, false);
  const Run host = run(c, true);
  EXPECT_EQ(dev.compiled.host_ops, 0u) << dev.compiled.partition_report;
  // LayerNormalization, Mul, Add; above rank 4 also the two Reshapes around them.
  EXPECT_EQ(dev.compiled.device_ops, c.in.size() > 4 ? 5u : 3u) << dev.compiled.partition_report;
  EXPECT_EQ(host.compiled.device_ops, 0u);
  ASSERT_EQ(host.compiled.package.metadata.segments.size(), 1u);
  EXPECT_EQ(host.compiled.package.metadata.segments[0].op_type, "InstanceNormalization");
  ASSERT_EQ(dev.out.count("y"), 1u);
  ASSERT_EQ(host.out.count("y"), 1u);
  const auto got = format::to_floats(dev.out.at("y")), want = format::to_floats(host.out.at("y"));
  ASSERT_EQ(got.size(), want.size());
  double err = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err = std::max(err, std::fabs(double(got[i]) - double(want[i])));
    scale = std::max(scale, std::fabs(double(want[i])));
  }
  // Statistics in float32 on the device, in double on the host; outputs of unit scale.
  EXPECT_LE(err, 2e-5) << "max |want| " << scale;
  EXPECT_GT(scale, 0.5) << "a trivial output compares nothing";
}

INSTANTIATE_TEST_SUITE_P(Shapes, InstanceNormTest,
                         ::testing::Values(InstanceNormCase{"rank3", {2, 5, 37}},
                                           InstanceNormCase{"rank4", {2, 3, 9, 11}},
                                           InstanceNormCase{
                                               "rank4_offset_eps", {1, 8, 16, 16}, 1e-2f, 40.0f},
                                           InstanceNormCase{"rank5", {1, 4, 3, 5, 6}},
                                           InstanceNormCase{"one_element_instances", {3, 4, 1, 1}}),
                         [](const auto& info) { return info.param.name; });

class InstanceNormHostTest : public testing::EmuSuite<::testing::Test> {};

TEST_F(InstanceNormHostTest, NonConstantScaleStaysOnTheHostWithItsReason) {
  const InstanceNormCase c{"scale_input", {1, 3, 4, 4}};
  CompileOptions o;
  const Run r = compile_and_run(instance_norm_model(c, /*scale_input=*/true), o,
                                {{"x", NpyArray::of<float>(c.in, rnd(numel(c.in), 3))},
                                 {"scale", NpyArray::of<float>({3}, rnd(3, 4))}},
                                c.name);
  EXPECT_EQ(r.compiled.device_ops, 0u);
  EXPECT_NE(r.compiled.partition_report.find("scale or B not constant"), std::string::npos)
      << r.compiled.partition_report;
}

TEST_F(InstanceNormHostTest, DisablingThePassKeepsTheHostOp) {
  const InstanceNormCase c{"disabled", {1, 3, 4, 4}};
  CompileOptions o;
  o.passes.disable = {"instance-norm-to-layernorm"};
  const Run r = compile_and_run(instance_norm_model(c), o,
                                {{"x", NpyArray::of<float>(c.in, rnd(numel(c.in), 3))}}, c.name);
  EXPECT_EQ(r.compiled.device_ops, 0u);
  EXPECT_NE(r.compiled.partition_report.find("instance-norm-to-layernorm did not run"),
            std::string::npos)
      << r.compiled.partition_report;
}

}  // namespace
}  // namespace npu::compiler
