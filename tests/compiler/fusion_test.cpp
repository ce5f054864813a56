// The fusion passes: BatchNorm folded into Conv (checked numerically against the unfused
// math), Conv + bias Add + Relu, MatMul + Add + Clip, Gemm + Add.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "model_builder.h"
#include "npu/compiler/pass_manager.h"

namespace npu::compiler {
namespace {

using testing::count_ops;
using testing::ModelBuilder;

Expected<void> run_passes(Graph& g, const std::vector<std::string>& names) {
  PassManager pm;
  for (const auto& n : names) pm.add(create_pass(n));
  return pm.run(g);
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

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
  const auto x = random_floats(C * H * W, 1);
  const auto wt = random_floats(OC * C * K * K, 2);
  const auto bias = random_floats(OC, 3);
  const auto gamma = random_floats(OC, 4, 0.5f, 2.0f);
  const auto beta = random_floats(OC, 5);
  const auto mean = random_floats(OC, 6);
  const auto var = random_floats(OC, 7, 0.1f, 3.0f);
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

}  // namespace
}  // namespace npu::compiler
