// The recurrent layers (ops/src/recurrent.cpp): RNN, GRU and LSTM on a hand-computed case
// (a one-unit Relu RNN is a running sum) and on small cases whose values come from
// tests/ops/recurrent_oracle.py, a float64 NumPy implementation written from the ONNX spec that
// `recurrent_oracle.py --check` compares with ONNX's node test data and with torch.nn.LSTM/GRU/RNN:
// directions, sequence lengths, initial states, peepholes, input_forget, clip,
// linear_before_reset, layout 1, activations with alpha/beta, optional outputs; the errors
// for bad shapes and attributes; the work limit and the deadline; the internal *Recurrence ops
// (split-recurrence) on precomputed gates against the layers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <utility>

#include "npu/ops/recurrent_activations.h"
#include "op_call.h"

namespace npu::ops::testing {
namespace {

using ::testing::HasSubstr;

/// arange(n) * scale + offset as float32 (the oracle's inputs).
NpyArray ramp(Shape s, double scale, double offset) {
  std::vector<float> v(static_cast<size_t>(format::element_count(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i * scale + offset);
  return f32(std::move(s), v);
}

/// |got - want| <= 2e-6 (values of magnitude < 1 computed in float32 against float64).
void expect_close(const NpyArray& got, const Shape& shape, const std::vector<double>& want) {
  EXPECT_EQ(got.shape, shape);
  const auto v = got.view<float>();
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(v[i], want[i], 2e-6) << "element " << i;
  }
}

/// The oracle's inputs for `gates` gates: X [3, 2, 2], W, R, B for `dirs` directions, hidden 2.
struct Inputs {
  NpyArray x, w, r, b;
};
Inputs inputs(int64_t gates, int64_t dirs) {
  return {ramp({3, 2, 2}, 0.1, -0.3), ramp({dirs, gates * 2, 2}, 0.05, -0.2),
          ramp({dirs, gates * 2, 2}, -0.04, 0.15), ramp({dirs, 4 * gates}, 0.02, -0.1)};
}

/// a [d0, d1, d2] (or 4-d [d0, d1, d2, d3]) with its first two dims swapped / the layout-1 order
/// of Y [seq, dirs, batch, hidden] -> [batch, seq, dirs, hidden].
NpyArray swap01(const NpyArray& a) {
  const Shape& s = a.shape;
  const int64_t inner = s[2];
  Shape o = {s[1], s[0], s[2]};
  NpyArray out = NpyArray::zeros(a.dtype, o);
  const auto src = a.view<float>();
  auto dst = out.view<float>();
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j)
      for (int64_t k = 0; k < inner; ++k)
        dst[(j * s[0] + i) * inner + k] = src[(i * s[1] + j) * inner + k];
  return out;
}
NpyArray y_layout1(const NpyArray& y) {
  const Shape& s = y.shape;  // seq, dirs, batch, hidden
  NpyArray out = NpyArray::zeros(y.dtype, {s[2], s[0], s[1], s[3]});
  const auto src = y.view<float>();
  auto dst = out.view<float>();
  for (int64_t t = 0; t < s[0]; ++t)
    for (int64_t d = 0; d < s[1]; ++d)
      for (int64_t b = 0; b < s[2]; ++b)
        for (int64_t h = 0; h < s[3]; ++h)
          dst[((b * s[0] + t) * s[1] + d) * s[3] + h] = src[((t * s[1] + d) * s[2] + b) * s[3] + h];
  return out;
}

TEST(HostOpsRecurrent, ReluRnnIsARunningSum) {
  // hidden 1, W = R = 1, Relu: h_t = x_t + h_(t-1). X [3, 1, 1] = 1, 2, 3.
  const NpyArray x = f32({3, 1, 1}, {1, 2, 3});
  const NpyArray one = f32({1, 1, 1}, {1});
  const json relu = {{"activations", {"Relu"}}, {"hidden_size", 1}};
  auto r = outputs("RNN", {&x, &one, &one}, relu, 2);
  ASSERT_EQ(r.size(), 2u);
  expect_near<float>(r[0], {3, 1, 1, 1}, {1, 3, 6});
  expect_near<float>(r[1], {1, 1, 1}, {6});
  // Reverse: 3, 3 + 2, 5 + 1 at times 2, 1, 0; Y_h is the state after time 0.
  json rev = relu;
  rev["direction"] = "reverse";
  auto b = outputs("RNN", {&x, &one, &one}, rev, 2);
  ASSERT_EQ(b.size(), 2u);
  expect_near<float>(b[0], {3, 1, 1, 1}, {6, 5, 3});
  expect_near<float>(b[1], {1, 1, 1}, {6});
  // B adds Wb + Rb (1 + 0.5) per step, initial_h 10 starts the sum; sequence_lens 2 stops it.
  const NpyArray bias = f32({1, 2}, {1, 0.5f}), h0 = f32({1, 1, 1}, {10});
  const NpyArray lens = arr<int32_t>({1}, {2});
  auto s = outputs("RNN", {&x, &one, &one, &bias, &lens, &h0}, relu, 2);
  ASSERT_EQ(s.size(), 2u);
  expect_near<float>(s[0], {3, 1, 1, 1}, {12.5, 16, 0});
  expect_near<float>(s[1], {1, 1, 1}, {16});
  // float64 in, float64 out.
  const NpyArray xd = arr<double>({3, 1, 1}, {1, 2, 3}), oned = arr<double>({1, 1, 1}, {1});
  auto d = outputs("RNN", {&xd, &oned, &oned}, relu, 1);
  ASSERT_EQ(d.size(), 1u);
  expect_near<double>(d[0], {3, 1, 1, 1}, {1, 3, 6});
}

TEST(HostOpsRecurrent, LstmBidirectionalWithLengthsPeepholesAndInitialState) {
  const Inputs in = inputs(4, 2);
  const NpyArray p = ramp({2, 6}, 0.03, -0.05), h0 = ramp({2, 2, 2}, 0.1, -0.1),
                 c0 = ramp({2, 2, 2}, -0.1, 0.2);
  const NpyArray lens = arr<int32_t>({2}, {3, 1});
  const json attrs = {{"direction", "bidirectional"}, {"hidden_size", 2}};
  auto r = outputs("LSTM", {&in.x, &in.w, &in.r, &in.b, &lens, &h0, &c0, &p}, attrs, 3);
  ASSERT_EQ(r.size(), 3u);
  // Batch entry 1 has one step: its Y is zero after time 0, its reverse pass starts at time 0.
  const std::vector<double> y = {0.0575114676,
                                 0.0312126145,
                                 0.0135422521,
                                 -0.0107238749,
                                 0.0286159592,
                                 0.0104457926,
                                 -0.145446618,
                                 -0.156189119,
                                 0.101804267,
                                 0.107972581,
                                 0,
                                 0,
                                 0.361256035,
                                 0.353671455,
                                 0,
                                 0,
                                 0.176911379,
                                 0.223256841,
                                 0,
                                 0,
                                 0.348856357,
                                 0.32023231,
                                 0,
                                 0};
  const std::vector<double> yh = {0.176911379,  0.223256841,  0.0135422521, -0.0107238749,
                                  0.0286159592, 0.0104457926, -0.145446618, -0.156189119};
  const std::vector<double> yc = {0.356732993,  0.427844341,  0.0267002497, -0.0210907727,
                                  0.0635404802, 0.0241441232, -0.335650624, -0.380321038};
  expect_close(r[0], {3, 2, 2, 2}, y);
  expect_close(r[1], {2, 2, 2}, yh);
  expect_close(r[2], {2, 2, 2}, yc);
  // int64 sequence_lens are read the same.
  const NpyArray lens64 = i64({2}, {3, 1});
  auto r64 = outputs("LSTM", {&in.x, &in.w, &in.r, &in.b, &lens64, &h0, &c0, &p}, attrs, 3);
  ASSERT_EQ(r64.size(), 3u);
  EXPECT_EQ(r64[0], r[0]);
  // layout 1 (opset 14): X, initial_h/c, Y, Y_h/c batch-major; the same numbers.
  json l1 = attrs;
  l1["layout"] = 1;
  l1["_opset"] = 14;
  const NpyArray x1 = swap01(in.x), h1 = swap01(h0), c1 = swap01(c0);
  auto t = outputs("LSTM", {&x1, &in.w, &in.r, &in.b, &lens, &h1, &c1, &p}, l1, 3);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], y_layout1(r[0]));
  EXPECT_EQ(t[1], swap01(r[1]));
  EXPECT_EQ(t[2], swap01(r[2]));
  // sequence_lens 0: zero outputs and zero final state.
  const NpyArray none = arr<int32_t>({2}, {0, 0});
  auto z = outputs("LSTM", {&in.x, &in.w, &in.r, &in.b, &none, &h0, &c0, &p}, attrs, 3);
  ASSERT_EQ(z.size(), 3u);
  for (const NpyArray& a : z) {
    for (float v : a.view<float>()) EXPECT_EQ(v, 0.0f);
  }
}

TEST(HostOpsRecurrent, LstmReverseWithClipAndCoupledGates) {
  const Inputs in = inputs(4, 1);
  const json attrs = {{"direction", "reverse"}, {"clip", 0.25}, {"input_forget", 1}};
  // No B given as a named input: an empty optional (nullptr) input.
  const NpyArray b = ramp({1, 16}, 0.02, -0.1);
  auto r = outputs("LSTM", {&in.x, &in.w, &in.r, &b}, attrs, 3);
  ASSERT_EQ(r.size(), 3u);
  expect_close(
      r[0], {3, 1, 2, 2},
      {{0.0244477065, 0.0168607515, 0.0678137417, 0.0723038843, 0.0862961631, 0.0877959528,
        0.0853234661, 0.0894910072, 0.0552796364, 0.0592626429, 0.0555463158, 0.0600528337}});
  expect_close(r[1], {1, 2, 2}, {{0.0244477065, 0.0168607515, 0.0678137417, 0.0723038843}});
  expect_close(r[2], {1, 2, 2}, {{0.0483354316, 0.0337204601, 0.134114881, 0.141980637}});
  // Without clip the values differ (the clip is active in this case).
  auto u = outputs("LSTM", {&in.x, &in.w, &in.r, &b},
                   {{"direction", "reverse"}, {"input_forget", 1}}, 1);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_NE(u[0], r[0]);
  // Omitted inputs: B, sequence_lens, initial_h as null pointers, P given.
  const NpyArray p = f32({1, 6}, {0, 0, 0, 0, 0, 0});
  auto o = outputs("LSTM", {&in.x, &in.w, &in.r, &b, nullptr, nullptr, nullptr, &p}, attrs, 3);
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o[1], r[1]);
}

TEST(HostOpsRecurrent, GruLinearBeforeReset) {
  const Inputs in = inputs(3, 1);
  for (int lbr : {0, 1}) {
    SCOPED_TRACE(lbr);
    auto r = outputs("GRU", {&in.x, &in.w, &in.r, &in.b},
                     {{"linear_before_reset", lbr}, {"_opset", 7}}, 2);
    ASSERT_EQ(r.size(), 2u);
    if (lbr == 0) {
      expect_close(
          r[0], {3, 1, 2, 2},
          {{-0.0149205258, -0.019989345, 0.0308627044, 0.0455520231, 0.0742847764, 0.104310343,
            0.138889901, 0.192188023, 0.202187633, 0.27381229, 0.270290203, 0.361416083}});
      expect_close(r[1], {1, 2, 2}, {{0.202187633, 0.27381229, 0.270290203, 0.361416083}});
    } else {
      expect_close(
          r[0], {3, 1, 2, 2},
          {{-0.039838892, -0.0501309936, 0.00514978367, 0.0156767077, 0.0396216858, 0.0653920944,
            0.104573551, 0.155186507, 0.166081173, 0.235954705, 0.235685792, 0.32625953}});
      expect_close(r[1], {1, 2, 2}, {{0.166081173, 0.235954705, 0.235685792, 0.32625953}});
    }
  }
}

TEST(HostOpsRecurrent, RnnActivationsWithAlphaAndBeta) {
  const Inputs in = inputs(1, 2);
  // Forward Affine(2, 0.1), reverse ScaledTanh(0.5, 3): alpha and beta consumed in order.
  const json attrs = {{"direction", "bidirectional"},
                      {"activations", {"Affine", "ScaledTanh"}},
                      {"activation_alpha", {2.0, 0.5}},
                      {"activation_beta", {0.1, 3.0}}};
  auto r = outputs("RNN", {&in.x, &in.w, &in.r, &in.b}, attrs, 2);
  ASSERT_EQ(r.size(), 2u);
  expect_close(
      r[0], {3, 2, 2, 2},
      {{-0.0399999905,  -0.0599999908, -0.179999999,  -0.119999994, -0.0198394141, -0.0421102147,
        -0.00953932688, 0.0195435386,  -0.3452,       -0.189199994, -0.540400014,  -0.272399999,
        -0.00416013658, 0.0654964974,  0.00667957299, 0.125870544,  -0.74518402,   -0.359679999,
        -0.962048023,   -0.451999999,  0.0448788948,  0.246493991,  0.059713651,   0.298991006}});
  expect_close(r[1], {2, 2, 2},
               {{-0.74518402, -0.359679999, -0.962048023, -0.451999999, -0.0198394141,
                 -0.0421102147, -0.00953932688, 0.0195435386}});
  // One activation list serves both directions; names ignore case.
  auto t = outputs("RNN", {&in.x, &in.w, &in.r, &in.b},
                   {{"direction", "bidirectional"}, {"activations", {"tanh"}}}, 1);
  auto d = outputs("RNN", {&in.x, &in.w, &in.r, &in.b}, {{"direction", "bidirectional"}}, 1);
  ASSERT_EQ(t.size(), 1u);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(t[0], d[0]);
}

TEST(HostOpsRecurrent, ActivationListAsTheCompilerReadsIt) {
  using Kind = RecurrentActivation::Kind;
  // The defaults per cell, repeated for the second direction.
  auto lstm = recurrent_activations("LSTMRecurrence", R"({"_opset": 1})", 2);
  ASSERT_TRUE(lstm) << lstm.error().message;
  ASSERT_EQ(lstm->size(), 6u);
  EXPECT_EQ((*lstm)[0].kind, Kind::kSigmoid);
  EXPECT_EQ((*lstm)[4].kind, Kind::kTanh);
  // alpha/beta consumed in order by the activations that take them; defaults for the rest.
  auto gru = recurrent_activations(
      "GRU",
      R"({"_opset": 14, "direction": "bidirectional", "activations": ["LeakyRelu", "hardsigmoid",)"
      R"( "Affine", "Elu"], "activation_alpha": [0.3, 0.4, 2.0], "activation_beta": [0.7]})",
      2);
  ASSERT_TRUE(gru) << gru.error().message;
  ASSERT_EQ(gru->size(), 4u);
  EXPECT_EQ((*gru)[0].kind, Kind::kLeakyRelu);
  EXPECT_DOUBLE_EQ((*gru)[0].alpha, 0.3);
  EXPECT_EQ((*gru)[1].kind, Kind::kHardSigmoid);
  EXPECT_DOUBLE_EQ((*gru)[1].alpha, 0.4);
  EXPECT_DOUBLE_EQ((*gru)[1].beta, 0.7);
  EXPECT_EQ((*gru)[2].kind, Kind::kAffine);
  EXPECT_DOUBLE_EQ((*gru)[2].alpha, 2.0);
  EXPECT_DOUBLE_EQ((*gru)[2].beta, 0.0);   // Affine's default
  EXPECT_DOUBLE_EQ((*gru)[3].alpha, 1.0);  // Elu's default
  auto bad = recurrent_activations("RNN", R"({"_opset": 14, "activations": ["Swish"]})", 1);
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("unknown activation 'Swish'"));
}

TEST(HostOpsRecurrent, EveryActivationOfTheList) {
  // A one-unit RNN step from h = 0 with W = 1: Y = f(x) for each x.
  const NpyArray x = f32({4, 1, 1}, {-2, -0.5f, 0.5f, 2});
  const NpyArray one = f32({1, 1, 1}, {1}), zero = f32({1, 1, 1}, {0});
  const auto sig = [](double v) { return 1 / (1 + std::exp(-v)); };
  struct Case {
    const char* name;
    std::vector<double> alpha, beta, want;
  };
  const std::vector<Case> cases = {
      {"Relu", {}, {}, {0, 0, 0.5, 2}},
      {"Tanh", {}, {}, {std::tanh(-2.0), std::tanh(-0.5), std::tanh(0.5), std::tanh(2.0)}},
      {"Sigmoid", {}, {}, {sig(-2), sig(-0.5), sig(0.5), sig(2)}},
      {"Affine", {3}, {1}, {-5, -0.5, 2.5, 7}},
      {"LeakyRelu", {}, {}, {-0.02, -0.005, 0.5, 2}},
      {"LeakyRelu", {0.5}, {}, {-1, -0.25, 0.5, 2}},
      {"ThresholdedRelu", {}, {}, {0, 0, 0, 2}},
      {"ThresholdedRelu", {0.25}, {}, {0, 0, 0.5, 2}},
      {"ScaledTanh",
       {2},
       {0.5},
       {2 * std::tanh(-1.0), 2 * std::tanh(-0.25), 2 * std::tanh(0.25), 2 * std::tanh(1.0)}},
      {"HardSigmoid", {}, {}, {0.1, 0.4, 0.6, 0.9}},
      {"HardSigmoid", {0.5}, {0.25}, {0, 0, 0.5, 1}},
      {"Elu", {}, {}, {std::expm1(-2.0), std::expm1(-0.5), 0.5, 2}},
      {"Softsign", {}, {}, {-2.0 / 3, -0.5 / 1.5, 0.5 / 1.5, 2.0 / 3}},
      {"Softplus",
       {},
       {},
       {std::log1p(std::exp(-2.0)), std::log1p(std::exp(-0.5)), std::log1p(std::exp(0.5)),
        std::log1p(std::exp(2.0))}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    json attrs = {{"activations", {k.name}}};
    if (!k.alpha.empty()) attrs["activation_alpha"] = k.alpha;
    if (!k.beta.empty()) attrs["activation_beta"] = k.beta;
    // R = 0: each step sees x alone.
    expect_near<float>(output("RNN", {&x, &one, &zero}, attrs), {4, 1, 1, 1}, k.want);
  }
}

/// G = X W^T + Wb of every direction side by side ([seq, batch, dirs * gh]; X as layout 0), in
/// float64 rounded once: what split-recurrence's device MatMul computes.
NpyArray gates_of(const NpyArray& x, const NpyArray& w, const NpyArray* b) {
  const int64_t rows = x.shape[0] * x.shape[1], input = x.shape[2];
  const int64_t dirs = w.shape[0], gh = w.shape[1];
  NpyArray g = NpyArray::zeros(DType::kFloat32, {x.shape[0], x.shape[1], dirs * gh});
  const auto xv = x.view<float>(), wv = w.view<float>();
  auto gv = g.view<float>();
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t col = 0; col < dirs * gh; ++col) {
      const int64_t d = col / gh, j = col % gh;
      double acc = b ? b->view<float>()[static_cast<size_t>(d * 2 * gh + j)] : 0.0;
      for (int64_t k = 0; k < input; ++k) {
        acc += double(xv[static_cast<size_t>(row * input + k)]) *
               wv[static_cast<size_t>(col * input + k)];
      }
      gv[static_cast<size_t>(row * dirs * gh + col)] = static_cast<float>(acc);
    }
  }
  return g;
}

TEST(HostOpsRecurrent, RecurrenceOnPrecomputedGatesMatchesTheLayer) {
  // npu.LSTMRecurrence / GRURecurrence / RNNRecurrence (opset 1 of domain "npu"): the layer's
  // inputs with X replaced by G and W omitted.
  const NpyArray lens = arr<int32_t>({2}, {3, 1});
  struct Case {
    const char* op;
    int64_t gates;
    json attrs;
  };
  const Case cases[] = {
      {"LSTM", 4, {{"direction", "bidirectional"}, {"hidden_size", 2}, {"clip", 0.9}}},
      {"GRU", 3, {{"direction", "bidirectional"}, {"linear_before_reset", 1}}},
      {"GRU", 3, {{"direction", "reverse"}}},
      {"RNN", 1, {{"direction", "forward"}, {"activations", {"Relu"}}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " " + c.attrs.dump());
    const int64_t dirs = c.attrs["direction"] == "bidirectional" ? 2 : 1;
    const Inputs in = inputs(c.gates, dirs);
    const NpyArray h0 = ramp({dirs, 2, 2}, 0.1, -0.1), c0 = ramp({dirs, 2, 2}, -0.1, 0.2);
    const NpyArray p = ramp({dirs, 6}, 0.03, -0.05);
    const bool lstm = c.gates == 4;
    Ins layer = {&in.x, &in.w, &in.r, &in.b, &lens, &h0};
    if (lstm) layer.insert(layer.end(), {&c0, &p});
    const size_t outs = lstm ? 3 : 2;
    auto want = outputs(c.op, layer, c.attrs, outs);
    const NpyArray g = gates_of(in.x, in.w, &in.b);
    Ins split = layer;
    split[0] = &g;
    split[1] = nullptr;
    auto got = test::run_op(std::string(c.op) + "Recurrence", split, c.attrs, 1, {}, outs);
    ASSERT_TRUE(got) << got.error().message;
    ASSERT_EQ(got->size(), want.size());
    for (size_t o = 0; o < want.size(); ++o) {
      const auto gv = std::as_const((*got)[o]).view<float>();
      const auto wv = std::as_const(want[o]).view<float>();
      ASSERT_EQ((*got)[o].shape, want[o].shape);
      for (size_t i = 0; i < wv.size(); ++i) EXPECT_NEAR(gv[i], wv[i], 1e-6) << o << ": " << i;
    }
    // Layout 1: G [batch, seq, dirs * gh], states [batch, dirs, hidden].
    json l1 = c.attrs;
    l1["layout"] = 1;
    const NpyArray g1 = swap01(g), h1 = swap01(h0), c1 = swap01(c0);
    Ins split1 = split;
    split1[0] = &g1;
    split1[5] = &h1;
    if (lstm) split1[6] = &c1;
    auto got1 = test::run_op(std::string(c.op) + "Recurrence", split1, l1, 1, {}, outs);
    ASSERT_TRUE(got1) << got1.error().message;
    const NpyArray y1 = y_layout1(want[0]);
    const auto gv = std::as_const((*got1)[0]).view<float>(), wv = y1.view<float>();
    ASSERT_EQ((*got1)[0].shape, y1.shape);
    for (size_t i = 0; i < wv.size(); ++i) EXPECT_NEAR(gv[i], wv[i], 1e-6) << i;
  }
  // W must be omitted; G must have dirs * gates * hidden columns.
  const Inputs in = inputs(4, 1);
  const NpyArray g = gates_of(in.x, in.w, nullptr);
  EXPECT_EQ(test::error_of("LSTMRecurrence", {&g, &in.w, &in.r}, json::object(), 1),
            "LSTMRecurrence: input 1 (W) must be omitted: G holds the input projections");
  EXPECT_EQ(test::error_of("LSTMRecurrence", {&in.x, nullptr, &in.r}, json::object(), 1),
            "LSTMRecurrence: G shape [3, 2, 2] does not match 1 direction, hidden_size 2 "
            "(expected [3, 2, 8])");
}

TEST(HostOpsRecurrent, OptionalOutputs) {
  const Inputs in = inputs(4, 1);
  auto all = outputs("LSTM", {&in.x, &in.w, &in.r, &in.b}, json::object(), 3);
  ASSERT_EQ(all.size(), 3u);
  auto y = outputs("LSTM", {&in.x, &in.w, &in.r, &in.b}, json::object(), 1);
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0], all[0]);
  // Y_h is Y's last step.
  const auto yv = all[0].view<float>();
  const auto hv = all[1].view<float>();
  for (size_t i = 0; i < hv.size(); ++i) EXPECT_EQ(hv[i], yv[yv.size() - hv.size() + i]);
  EXPECT_THAT(error_of("LSTM", {&in.x, &in.w, &in.r}, json::object(), 4),
              HasSubstr("LSTM: has at most 3 outputs, 4 requested"));
  const Inputs g = inputs(3, 1);
  EXPECT_EQ(error_of("GRU", {&g.x, &g.w, &g.r}, json::object(), 3),
            "GRU: has at most 2 outputs, 3 requested");
}

TEST(HostOpsRecurrent, Errors) {
  const Inputs in = inputs(4, 1);
  const Ins ins = {&in.x, &in.w, &in.r};
  EXPECT_EQ(error_of("LSTM", ins, {{"direction", "sideways"}}),
            "LSTM: attribute direction 'sideways' is not forward, reverse or bidirectional");
  EXPECT_EQ(error_of("LSTM", ins, {{"hidden_size", 3}}),
            "LSTM: R shape [1, 8, 2] does not match 1 direction, hidden_size 3 (expected [1, 12, "
            "3])");
  EXPECT_EQ(error_of("LSTM", ins, {{"direction", "bidirectional"}}),
            "LSTM: R shape [1, 8, 2] does not match 2 directions, hidden_size 2 (expected [2, 8, "
            "2])");
  const NpyArray w3 = ramp({1, 8, 3}, 0.1, 0);
  EXPECT_EQ(error_of("LSTM", {&in.x, &w3, &in.r}),
            "LSTM: W shape [1, 8, 3] does not match 1 direction, hidden_size 2, input_size 2 "
            "(expected [1, 8, 2])");
  const Inputs g = inputs(3, 1);
  EXPECT_EQ(
      error_of("GRU", {&g.x, &g.w, &in.r}),
      "GRU: R shape [1, 8, 2] does not match 1 direction, hidden_size 2 (expected [1, 6, 2])");
  EXPECT_EQ(error_of("LSTM", ins, {{"activations", {"Sigmoid", "Tanh", "Cosh"}}}),
            "LSTM: attribute activations: unknown activation 'Cosh'");
  EXPECT_EQ(error_of("LSTM", ins, {{"activations", {"Sigmoid", "Tanh"}}}),
            "LSTM: attribute activations has 2 entries; LSTM takes 3 per direction");
  const NpyArray b = ramp({1, 8}, 0.1, 0);
  EXPECT_EQ(error_of("LSTM", {&in.x, &in.w, &in.r, &b}),
            "LSTM: B shape [1, 8] does not match 1 direction, hidden_size 2 (expected [1, 16])");
  const NpyArray lens = arr<int32_t>({2}, {3, 4});
  EXPECT_EQ(error_of("LSTM", {&in.x, &in.w, &in.r, nullptr, &lens}),
            "LSTM: sequence_lens[1] = 4 is outside [0, 3]");
  const NpyArray lens1 = arr<int32_t>({1}, {3});
  EXPECT_EQ(error_of("LSTM", {&in.x, &in.w, &in.r, nullptr, &lens1}),
            "LSTM: sequence_lens shape [1] does not match the batch of X (expected [2])");
  const NpyArray lensf = f32({2}, {3, 3});
  EXPECT_THAT(error_of("LSTM", {&in.x, &in.w, &in.r, nullptr, &lensf}),
              HasSubstr("sequence_lens dtype float32 is not supported"));
  const NpyArray h0 = ramp({2, 1, 2}, 0.1, 0);
  EXPECT_EQ(error_of("LSTM", {&in.x, &in.w, &in.r, nullptr, nullptr, &h0}),
            "LSTM: initial_h shape [2, 1, 2] does not match 1 direction, hidden_size 2, batch 2 "
            "(expected [1, 2, 2])");
  const NpyArray p = ramp({1, 4}, 0.1, 0);
  EXPECT_EQ(error_of("LSTM", {&in.x, &in.w, &in.r, nullptr, nullptr, nullptr, nullptr, &p}),
            "LSTM: P shape [1, 4] does not match 1 direction, hidden_size 2 (expected [1, 6])");
  EXPECT_EQ(error_of("LSTM", ins, {{"layout", 1}, {"_opset", 7}}),
            "LSTM: attribute layout needs opset 14 (this is opset 7)");
  EXPECT_EQ(error_of("LSTM", ins, {{"layout", 2}}), "LSTM: attribute layout 2 is not 0 or 1");
  EXPECT_EQ(error_of("LSTM", ins, {{"clip", -1.0}}),
            "LSTM: attribute clip -1.000000 is not positive");
  const NpyArray x2 = ramp({3, 2}, 0.1, 0);
  EXPECT_EQ(error_of("LSTM", {&x2, &in.w, &in.r}),
            "LSTM: X must be 3-d ([seq_length, batch, input_size]), got [3, 2]");
  const NpyArray wd = arr<double>({1, 8, 2}, std::vector<double>(16, 0.0));
  EXPECT_EQ(error_of("LSTM", {&in.x, &wd, &in.r}), "LSTM: W is float64 but X is float32");
  EXPECT_EQ(error_of("LSTM", {&in.x, &in.w}), "LSTM: missing input 2");
  const NpyArray xi = arr<int32_t>({1, 1, 1}, {1});
  EXPECT_THAT(error_of("RNN", {&xi, &in.w, &in.r}), HasSubstr("dtype int32"));
  EXPECT_THAT(error_of("LSTM", ins, {{"_opset", 6}}),
              HasSubstr("outside the supported range 7..18"));
  EXPECT_EQ(error_of("RNN", ins, {{"input_forget", 1}}), "RNN: unknown attribute 'input_forget'");
}

// The work limit is checked before the outputs are allocated; a deadline stops the steps.
TEST(HostOpsRecurrentLimits, WorkAndDeadline) {
  const Inputs in = inputs(4, 1);
  auto r = call("LSTM", {&in.x, &in.w, &in.r}, json::object(), 1, {.max_work = 239});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EFBIG);
  EXPECT_THAT(r.error().message, HasSubstr("multiply-accumulates"));
  EXPECT_TRUE(call("LSTM", {&in.x, &in.w, &in.r}, json::object(), 1, {.max_work = 240}));
  // input_size 0: X is empty whatever seq_length * batch is; their product is still bounded.
  const NpyArray x0 = NpyArray::zeros(DType::kFloat32, {int64_t{1} << 31, int64_t{1} << 31, 0});
  const NpyArray w0 = NpyArray::zeros(DType::kFloat32, {1, 4, 0});
  const NpyArray r0 = NpyArray::zeros(DType::kFloat32, {1, 4, 1});
  auto huge = call("LSTM", {&x0, &w0, &r0});
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code, EFBIG);
  EXPECT_EQ(huge.error().message,
            "LSTM: [2147483648, 2147483648, 0] with hidden_size 1 is too large");
  // 4096 steps of a 64-unit LSTM: far more than 100 µs.
  const NpyArray x = NpyArray::zeros(DType::kFloat32, {4096, 1, 64});
  const NpyArray w = NpyArray::zeros(DType::kFloat32, {1, 256, 64});
  using Clock = std::chrono::steady_clock;
  auto late = call("LSTM", {&x, &w, &w}, json::object(), 1,
                   {.deadline = Clock::now() + std::chrono::microseconds(100)});
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, ETIMEDOUT);
}

}  // namespace
}  // namespace npu::ops::testing
