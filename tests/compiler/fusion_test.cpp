// The fusion passes: BatchNorm folded into Conv (checked numerically against the unfused
// math), Conv + bias Add + Relu, MatMul + Add + Clip, Gemm + Add, and the LayerNorm formula
// into one LayerNormalization (the rewritten graph here; lower_test.cpp checks its numbers on
// the device against the formula run node by node on the host).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "layernorm_formula.h"
#include "model_builder.h"
#include "npu/compiler/pass_manager.h"
#include "random_values.h"
#include "run_passes.h"

namespace npu::compiler {
namespace {

using testing::count_ops;
using testing::ModelBuilder;

using testing::run_passes;

// Plain NCHW convolution, stride 1, symmetric padding `pad`.
std::vector<float> conv_nchw(const std::vector<float>& x, int c, int h, int w,
                             const std::vector<float>& wt, int oc, int k, int pad,
                             const std::vector<float>& bias) {
  const int oh = h + 2 * pad - k + 1, ow = w + 2 * pad - k + 1;
  std::vector<float> y(static_cast<size_t>(oc * oh * ow));
  for (int o = 0; o < oc; ++o) {
    for (int i = 0; i < oh; ++i) {
      for (int j = 0; j < ow; ++j) {
        double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(o)];
        for (int ci = 0; ci < c; ++ci) {
          for (int a = 0; a < k; ++a) {
            for (int bb = 0; bb < k; ++bb) {
              const int yy = i + a - pad, xx = j + bb - pad;
              if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
              acc += static_cast<double>(x[static_cast<size_t>((ci * h + yy) * w + xx)]) *
                     wt[static_cast<size_t>(((o * c + ci) * k + a) * k + bb)];
            }
          }
        }
        y[static_cast<size_t>((o * oh + i) * ow + j)] = static_cast<float>(acc);
      }
    }
  }
  return y;
}

TEST(FoldBatchNorm, MatchesUnfusedMath) {
  constexpr int C = 3, OC = 4, H = 5, W = 5, K = 3;
  const auto x = testing::rnd(C * H * W, 1);
  const auto wt = testing::rnd(OC * C * K * K, 2);
  const auto bias = testing::rnd(OC, 3);
  const auto gamma = testing::rnd(OC, 4, 0.5f, 2.0f);
  const auto beta = testing::rnd(OC, 5);
  const auto mean = testing::rnd(OC, 6);
  const auto var = testing::rnd(OC, 7, 0.1f, 3.0f);
  const float eps = 1e-3f;

  ModelBuilder b;
  b.input("x", {int64_t{1}, int64_t{C}, int64_t{H}, int64_t{W}});
  b.init_f("w", {OC, C, K, K}, wt);
  b.init_f("b", {OC}, bias);
  b.init_f("gamma", {OC}, gamma);
  b.init_f("beta", {OC}, beta);
  b.init_f("mean", {OC}, mean);
  b.init_f("var", {OC}, var, /*raw=*/false);
  auto& conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  ModelBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  auto& bn = b.node("BatchNormalization", {"c", "gamma", "beta", "mean", "var"}, {"y"}, "bn");
  ModelBuilder::attr(bn, "epsilon", eps);
  b.output("y");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(run_passes(*g, {"fold-batchnorm"}));
  ASSERT_EQ(g->nodes.size(), 1u) << to_string(*g);
  const Node& fused = g->nodes[0];
  EXPECT_EQ(fused.op_type, "Conv");
  EXPECT_EQ(g->value(fused.outputs[0]).name, "y");

  // Unfused: conv, then (v - mean) / sqrt(var + eps) * gamma + beta.
  auto ref = conv_nchw(x, C, H, W, wt, OC, K, 1, bias);
  for (int o = 0; o < OC; ++o) {
    for (int p = 0; p < H * W; ++p) {
      float& v = ref[static_cast<size_t>(o * H * W + p)];
      v = (v - mean[o]) / std::sqrt(var[o] + eps) * gamma[o] + beta[o];
    }
  }
  const auto fw = format::to_floats(*g->constant(fused.input(1)));
  const auto fb = format::to_floats(*g->constant(fused.input(2)));
  const auto got = conv_nchw(x, C, H, W, fw, OC, K, 1, fb);
  ASSERT_EQ(got.size(), ref.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], ref[i], 1e-4f + 1e-4f * std::fabs(ref[i])) << "at " << i;
  }
}

TEST(FoldBatchNorm, SkipsConvWithSecondReader) {
  ModelBuilder b;
  b.input("x", {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}});
  b.init_f("w", {1, 1, 1, 1}, {2.0f});
  for (const char* p : {"g", "be", "m", "v"}) b.init_f(p, {1}, {1.0f});
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  b.node("BatchNormalization", {"c", "g", "be", "m", "v"}, {"y"}, "bn");
  b.node("Relu", {"c"}, {"r"}, "other_reader");
  b.output("y");
  b.output("r");
  auto g = b.import();
  ASSERT_TRUE(g);
  ASSERT_TRUE(run_passes(*g, {"fold-batchnorm"}));
  EXPECT_EQ(count_ops(*g, "BatchNormalization"), 1u);
}

// The unfolded weights are released once the conv reads the folded ones (their memory serves
// the next fold), but not while another node still reads them.
TEST(FoldBatchNorm, ReleasesTheUnfoldedWeightsUnlessShared) {
  for (const bool shared : {false, true}) {
    ModelBuilder b;
    b.input("x", {int64_t{1}, int64_t{1}, int64_t{2}, int64_t{2}});
    b.init_f("w", {1, 1, 1, 1}, {2.0f});
    for (const char* p : {"g", "be", "m", "v"}) b.init_f(p, {1}, {1.0f});
    b.node("Conv", {"x", "w"}, {"c"}, "conv");
    b.node("BatchNormalization", {"c", "g", "be", "m", "v"}, {"y"}, "bn");
    b.output("y");
    if (shared) {
      b.node("Conv", {"x", "w"}, {"y2"}, "conv2");
      b.output("y2");
    }
    auto g = b.import();
    ASSERT_TRUE(g) << g.error().message;
    const ValueId w = g->find_value("w");
    const std::weak_ptr<const NpyArray> old = g->value(w).constant;
    ASSERT_TRUE(run_passes(*g, {"fold-batchnorm"}));
    EXPECT_EQ(count_ops(*g, "BatchNormalization"), 0u) << to_string(*g);
    EXPECT_EQ(old.expired(), !shared) << (shared ? "shared" : "unshared");
    EXPECT_EQ(g->value(w).is_constant(), shared);
    ASSERT_TRUE(g->verify()) << to_string(*g);
    // The folded conv reads its own weights: 2 * 1 / sqrt(1 + eps).
    const NpyArray* fw = g->constant(g->nodes[0].input(1));
    ASSERT_TRUE(fw);
    EXPECT_NEAR(format::to_floats(*fw)[0], 2.0f, 1e-4f);
  }
}

TEST(Fusion, ConvBiasAddRelu) {
  ModelBuilder b;
  b.input("x", {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{4}});
  b.init_f("w", {3, 2, 1, 1}, std::vector<float>(6, 1.0f));
  b.init_f("cb", {3}, {1, 2, 3});
  b.init_f("bias", {1, 3, 1, 1}, {10, 20, 30});
  b.node("Conv", {"x", "w", "cb"}, {"c"}, "conv");
  b.node("Add", {"c", "bias"}, {"a"}, "add");
  b.node("Relu", {"a"}, {"y"}, "relu");
  b.output("y");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(run_passes(*g, {"fuse-bias", "fuse-activation"}));
  ASSERT_EQ(g->nodes.size(), 1u) << to_string(*g);
  const Node& conv = g->nodes[0];
  ASSERT_TRUE(conv.activation);
  EXPECT_EQ(conv.activation->op_type, "Relu");
  EXPECT_EQ(format::to_floats(*g->constant(conv.input(2))), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(g->value(conv.outputs[0]).name, "y");
  EXPECT_NE(to_string(*g).find("+Relu"), std::string::npos);
}

TEST(Fusion, MatMulAddClipAndGemmAdd) {
  ModelBuilder b;
  b.input("x", {int64_t{2}, int64_t{3}, int64_t{4}});
  b.init_f("w", {4, 5}, std::vector<float>(20, 0.5f));
  b.init_f("bias", {5}, {1, 2, 3, 4, 5});
  b.init_f("lo", {}, {0.0f});
  b.init_f("hi", {}, {6.0f});
  b.node("MatMul", {"x", "w"}, {"m"}, "mm");
  b.node("Add", {"bias", "m"}, {"a"}, "add");  // the constant on the left
  b.node("Clip", {"a", "lo", "hi"}, {"y"}, "relu6");
  b.input("z", {int64_t{2}, int64_t{4}});
  b.init_f("w2", {4, 3}, std::vector<float>(12, 1.0f));
  b.init_f("b2", {1, 3}, {7, 8, 9});
  b.node("Gemm", {"z", "w2"}, {"gm"}, "gemm");
  b.node("Add", {"gm", "b2"}, {"y2"}, "add2");
  b.output("y");
  b.output("y2");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(PassManager::default_pipeline().run(*g));
  ASSERT_EQ(g->nodes.size(), 2u) << to_string(*g);
  const Node& mm = g->nodes[0].op_type == "MatMul" ? g->nodes[0] : g->nodes[1];
  const Node& gemm = g->nodes[0].op_type == "Gemm" ? g->nodes[0] : g->nodes[1];
  ASSERT_TRUE(mm.activation);
  EXPECT_EQ(mm.activation->op_type, "Clip");
  EXPECT_FLOAT_EQ(mm.activation->beta, 6.0f);
  EXPECT_EQ(format::to_floats(*g->constant(mm.input(2))), (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(format::to_floats(*g->constant(gemm.input(2))), (std::vector<float>{7, 8, 9}));
  EXPECT_FALSE(gemm.activation);
}

// ---- fuse-layernorm -------------------------------------------------------------------------

using testing::LayerNormFormula;

/// The opset-18 form of ReduceMean: its axes attribute becomes a constant input.
void axes_as_inputs(Graph& g) {
  for (Node& n : g.nodes) {
    if (n.op_type != "ReduceMean" || !n.has_attr("axes")) continue;
    const std::vector<int64_t> axes = n.attr_ints("axes");
    n.inputs.push_back(g.add_constant(
        n.name + "_axes", NpyArray::of<int64_t>({static_cast<int64_t>(axes.size())}, axes)));
    n.attrs.erase("axes");
    n.opset = 18;
  }
}

/// `b` imported (in the opset-18 form when `opset18`) and run through the passes before
/// fuse-layernorm and it.
Expected<Graph> fuse_formula(const testing::ModelBuilder& b, bool opset18 = false) {
  auto g = b.import();
  if (!g) return g.error();
  if (opset18) axes_as_inputs(*g);
  NPU_TRY(
      run_passes(*g, {"fold-constants", "remove-identities", "infer-shapes", "fuse-layernorm"}));
  return g;
}

struct LnCase {
  const char* name;
  LayerNormFormula f;
  bool opset18;  // ReduceMean's axes as an input
  int64_t axis;  // expected on the LayerNormalization
};

void PrintTo(const LnCase& c, std::ostream* os) {
  *os << c.name;
}

LnCase ln_case(const char* name, int64_t opset, std::vector<int64_t> axes, bool mul_square,
               std::vector<int64_t> gamma, std::vector<int64_t> beta, int64_t axis,
               std::vector<int64_t> dims = {2, 3, 8}) {
  LnCase c{name, {}, opset >= 18, axis};
  c.f.opset = std::min<int64_t>(opset, 17);
  c.f.dims = std::move(dims);
  c.f.axes = std::move(axes);
  c.f.mul_square = mul_square;
  c.f.gamma = std::move(gamma);
  c.f.beta = std::move(beta);
  return c;
}

std::vector<LnCase> ln_cases() {
  std::vector<LnCase> c = {
      ln_case("opset13_pow_affine", 13, {-1}, false, {8}, {8}, 2),
      ln_case("opset13_mul_plain", 13, {-1}, true, {}, {}, 2),
      ln_case("opset18_pow_gamma", 18, {-1}, false, {8}, {}, 2),
      ln_case("opset18_mul_beta", 18, {2}, true, {}, {8}, 2),
      ln_case("opset13_two_axes", 13, {1, 2}, false, {3, 8}, {1, 3, 8}, 1),
      ln_case("opset18_two_axes_unordered", 18, {-1, -2}, true, {1, 3, 8}, {3, 8}, 1),
      ln_case("opset13_rank2", 13, {-1}, false, {16}, {16}, 1, {5, 16}),
  };
  c.push_back(ln_case("opset13_torch_constants", 13, {-1}, false, {8}, {8}, 2));
  c.back().f.constant_nodes = true;
  c.back().f.eps = 1e-6f;
  return c;
}

class LayerNormForms : public ::testing::TestWithParam<LnCase> {};

TEST_P(LayerNormForms, BecomeOneLayerNormalization) {
  const LayerNormFormula& f = GetParam().f;
  auto g = fuse_formula(testing::layernorm_formula(f), GetParam().opset18);
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 1u) << to_string(*g);
  const Node& ln = g->nodes[0];
  ASSERT_EQ(ln.op_type, "LayerNormalization") << to_string(*g);
  EXPECT_EQ(ln.opset, 17);
  EXPECT_EQ(ln.attr_int("axis", -100), GetParam().axis);
  EXPECT_FLOAT_EQ(ln.attr_float("epsilon", -1.0f), f.eps);
  EXPECT_EQ(g->value(ln.input(0)).name, "x");
  EXPECT_EQ(g->value(ln.outputs[0]).name, "y");
  const std::vector<int64_t> normalized(f.dims.begin() + GetParam().axis, f.dims.end());
  // Scale: gamma's values (in the normalized shape), or ones.
  const NpyArray* scale = g->constant(ln.input(1));
  ASSERT_NE(scale, nullptr);
  EXPECT_EQ(scale->shape, normalized);
  const int64_t len = scale->num_elements();
  EXPECT_EQ(format::to_floats(*scale), f.gamma.empty()
                                           ? std::vector<float>(static_cast<size_t>(len), 1.0f)
                                           : testing::formula_values(len, 0.75f, 0.1f));
  // B: beta, or absent.
  if (f.beta.empty()) {
    EXPECT_EQ(ln.inputs.size(), 2u);
  } else {
    ASSERT_EQ(ln.inputs.size(), 3u);
    const NpyArray* bias = g->constant(ln.input(2));
    ASSERT_NE(bias, nullptr);
    EXPECT_EQ(bias->shape, normalized);
    EXPECT_EQ(format::to_floats(*bias), testing::formula_values(len, -0.3f, 0.1f));
  }
}

INSTANTIATE_TEST_SUITE_P(FuseLayerNorm, LayerNormForms, ::testing::ValuesIn(ln_cases()),
                         [](const ::testing::TestParamInfo<LnCase>& p) { return p.param.name; });

/// Nodes of the formula left as written: count of LayerNormalization, of all nodes.
void expect_not_fused(const testing::ModelBuilder& b, size_t nodes, bool opset18 = false) {
  auto g = fuse_formula(b, opset18);
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(count_ops(*g, "LayerNormalization"), 0u) << to_string(*g);
  EXPECT_EQ(g->nodes.size(), nodes) << to_string(*g);
}

TEST(FuseLayerNorm, IntermediateWithASecondReaderIsNotFused) {
  LayerNormFormula f;
  f.gamma = f.beta = {8};
  {
    auto b = testing::layernorm_formula(f);
    b.output("d");  // the centered input, read by a third party (the graph's outputs)
    expect_not_fused(b, 9);
  }
  {
    auto b = testing::layernorm_formula(f);
    b.output("var");  // the variance
    expect_not_fused(b, 9);
  }
  {
    auto b = testing::layernorm_formula(f);
    b.node("Relu", {"sq"}, {"r"});  // the square, read by another node
    b.output("r");
    expect_not_fused(b, 10);
  }
}

TEST(FuseLayerNorm, AxesThatAreNotTrailingOrNotKeptAreNotFused) {
  LayerNormFormula f;
  f.gamma = f.beta = {8};
  f.axes = {1};  // the middle axis
  expect_not_fused(testing::layernorm_formula(f), 9);
  f.axes = {0, 2};  // the last axis, but with a gap
  expect_not_fused(testing::layernorm_formula(f), 9);
  f.axes = {-2};
  expect_not_fused(testing::layernorm_formula(f), 9, /*opset18=*/true);
  // keepdims=0: x [4,4] - mean [4] broadcasts along the other axis, a different function.
  LayerNormFormula k;
  k.dims = {4, 4};
  k.keepdims = 0;
  expect_not_fused(testing::layernorm_formula(k), 7);
}

// A dynamic batch: the normalized dims are static, the leading one is not.
TEST(FuseLayerNorm, SymbolicBatch) {
  LayerNormFormula f;
  f.symbolic_batch = true;
  f.gamma = f.beta = {8};
  auto g = fuse_formula(testing::layernorm_formula(f));
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 1u) << to_string(*g);
  EXPECT_EQ(g->nodes[0].op_type, "LayerNormalization");
  EXPECT_EQ(g->nodes[0].attr_int("axis", -100), 2);
  // The normalized dim itself symbolic: no Scale shape to check gamma against.
  f.dims = {2, 8};
  f.axes = {0, 1};
  f.gamma = f.beta = {2, 8};
  expect_not_fused(testing::layernorm_formula(f), 9);
}

// An eps of a higher rank broadcasts the result beyond x's shape: not a LayerNormalization.
TEST(FuseLayerNorm, EpsThatBroadcastsTheResultIsNotFused) {
  auto b = testing::layernorm_formula(LayerNormFormula{});
  for (auto& t : *b.graph().mutable_initializer()) {
    if (t.name() == "eps") t.add_dims(1), t.add_dims(1), t.add_dims(1), t.add_dims(1);
  }
  expect_not_fused(b, 7);
}

// A gamma that broadcasts within the normalized axes (here [3, 8] for a LayerNorm over the
// last axis only) is no LayerNormalization Scale: the normalization is fused, Mul and Add stay.
TEST(FuseLayerNorm, GammaOfAnotherShapeStaysAMul) {
  LayerNormFormula f;
  f.gamma = {3, 8};
  f.beta = {8};
  auto g = fuse_formula(testing::layernorm_formula(f));
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 3u) << to_string(*g);
  EXPECT_EQ(g->nodes[0].op_type, "LayerNormalization");
  EXPECT_EQ(g->nodes[0].inputs.size(), 2u);  // ones, no B
  EXPECT_EQ(g->nodes[1].op_type, "Mul");
  EXPECT_EQ(g->nodes[2].op_type, "Add");
}

}  // namespace
}  // namespace npu::compiler
