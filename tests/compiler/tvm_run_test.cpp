// TVM BYOC JSON graphs end to end: each graph of the example_npu flow (written as TVM's codegen
// writes it, in both encodings) is imported, compiled and run on the emulator, and its outputs
// are compared with a reference computed here by plain loops (NumPy's definitions of the Relax
// operators: conv2d, pooling, matmul, softmax, batch_norm, quantize/dequantize). Each case also
// checks where its operators ran, so a case cannot pass by running everything on the host.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>

#include "emu_suite.h"
#include "npu/compiler/compile.h"
#include "npu/compiler/tvm_import.h"
#include "npu/device.h"
#include "npu/runtime/model.h"
#include "random_values.h"
#include "tvm_graph.h"

namespace npu::compiler {
namespace {

using testing::TvmGraph;
using json = nlohmann::json;
using I64 = std::vector<int64_t>;
using Arrays = std::map<std::string, NpyArray>;
using F = std::vector<float>;

using testing::numel;
using testing::rnd;

NpyArray f32(const I64& dims, const F& v) {
  return NpyArray::of<float>(dims, v);
}

// ---- references (NCHW / OIHW, as the Relax operators define them) --------------------------

/// conv2d with symmetric padding, stride and groups.
F conv2d(const F& x, const I64& xd, const F& w, const I64& wd, int64_t stride, int64_t pad,
         int64_t groups, I64& yd) {
  const int64_t n = xd[0], c = xd[1], h = xd[2], wi = xd[3], o = wd[0], ci = wd[1], k = wd[2];
  const int64_t oh = (h + 2 * pad - k) / stride + 1, ow = (wi + 2 * pad - k) / stride + 1;
  yd = {n, o, oh, ow};
  F y(numel(yd), 0.0f);
  const int64_t per_group = o / groups;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oc = 0; oc < o; ++oc)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = 0;
          const int64_t g = oc / per_group;
          for (int64_t ic = 0; ic < ci; ++ic)
            for (int64_t u = 0; u < k; ++u)
              for (int64_t v = 0; v < k; ++v) {
                const int64_t yy = i * stride + u - pad, xx = j * stride + v - pad;
                if (yy < 0 || yy >= h || xx < 0 || xx >= wi) continue;
                acc += x[static_cast<size_t>(((b * c + g * ci + ic) * h + yy) * wi + xx)] *
                       w[static_cast<size_t>(((oc * ci + ic) * k + u) * k + v)];
              }
          y[static_cast<size_t>(((b * o + oc) * oh + i) * ow + j)] = static_cast<float>(acc);
        }
  return y;
}

/// k x k pooling with stride k (max or average), no padding.
F pool2d(const F& x, const I64& xd, int64_t k, bool max) {
  const int64_t nc = xd[0] * xd[1], h = xd[2], w = xd[3], oh = h / k, ow = w / k;
  F y(static_cast<size_t>(nc * oh * ow));
  for (int64_t p = 0; p < nc; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        float m = -INFINITY;
        double s = 0;
        for (int64_t u = 0; u < k; ++u)
          for (int64_t v = 0; v < k; ++v) {
            const float a = x[static_cast<size_t>((p * h + i * k + u) * w + j * k + v)];
            m = std::max(m, a);
            s += a;
          }
        y[static_cast<size_t>((p * oh + i) * ow + j)] =
            max ? m : static_cast<float>(s / static_cast<double>(k * k));
      }
  return y;
}

F relu(F v) {
  for (float& x : v) x = std::max(x, 0.0f);
  return v;
}

F matmul(const F& a, const F& b, int64_t m, int64_t k, int64_t n) {
  F y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t t = 0; t < k; ++t)
        acc += a[static_cast<size_t>(i * k + t)] * b[static_cast<size_t>(t * n + j)];
      y[static_cast<size_t>(i * n + j)] = static_cast<float>(acc);
    }
  return y;
}

/// Softmax over the last axis of rows of `cols`.
F softmax(const F& x, size_t cols) {
  F y(x.size());
  for (size_t r = 0; r < x.size(); r += cols) {
    const float m = *std::max_element(x.begin() + static_cast<std::ptrdiff_t>(r),
                                      x.begin() + static_cast<std::ptrdiff_t>(r + cols));
    double s = 0;
    for (size_t i = 0; i < cols; ++i) s += std::exp(static_cast<double>(x[r + i] - m));
    for (size_t i = 0; i < cols; ++i)
      y[r + i] = static_cast<float>(std::exp(static_cast<double>(x[r + i] - m)) / s);
  }
  return y;
}

/// Inference batch_norm over axis 1 of NCHW (epsilon 1e-5).
F batch_norm(const F& x, const I64& xd, const F& g, const F& b, const F& m, const F& v) {
  F y(x.size());
  const size_t c = static_cast<size_t>(xd[1]), inner = numel(xd) / static_cast<size_t>(xd[0]) / c;
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t ch = (i / inner) % c;
    y[i] = static_cast<float>(
        (x[i] - m[ch]) / std::sqrt(static_cast<double>(v[ch]) + 1e-5) * g[ch] + b[ch]);
  }
  return y;
}

/// relax.quantize (round half to even, saturate) and relax.dequantize, per tensor.
std::vector<int8_t> quantize(const F& x, float scale, int zp) {
  std::vector<int8_t> q;
  for (float a : x) {
    const float r = std::nearbyint(a / scale) + static_cast<float>(zp);
    q.push_back(static_cast<int8_t>(std::clamp(r, -128.0f, 127.0f)));
  }
  return q;
}

// ---- running ------------------------------------------------------------------------------

class TvmRun : public testing::EmuSuite<> {
 protected:
  struct Result {
    Arrays out;
    size_t device_ops = 0, host_ops = 0;
    uint64_t cycles = 0;
  };

  /// Imports `text` with `params`, compiles it, runs it on `inputs`.
  static std::optional<Result> run(const std::string& text, const Arrays& params,
                                   const Arrays& inputs) {
    ImportOptions io;
    io.constant_inputs = params;
    auto g = import_tvm_json_text(text, io, "g.json");
    EXPECT_TRUE(g) << g.error().message;
    if (!g) return std::nullopt;
    auto r = compile_graph(std::move(*g), CompileOptions{}, "g.json");
    EXPECT_TRUE(r) << r.error().message;
    if (!r) return std::nullopt;
    auto m = Model::load(*device_, r->package, "g.json");
    EXPECT_TRUE(m) << m.error().message;
    if (!m) return std::nullopt;
    auto out = m->run(inputs);
    EXPECT_TRUE(out) << out.error().message;
    if (!out) return std::nullopt;
    return Result{std::move(*out), r->device_ops, r->host_ops, m->last_stats().device_cycles};
  }

  /// Runs both encodings of `t`; each output_<k> must match want[k] within float tolerance.
  static std::optional<Result> check(const TvmGraph& t, const Arrays& params, const Arrays& inputs,
                                     const std::vector<NpyArray>& want) {
    std::optional<Result> first;
    for (const std::string& text : {t.native(), t.legacy()}) {
      auto r = run(text, params, inputs);
      if (!r) return std::nullopt;
      EXPECT_EQ(r->out.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        const std::string name = "output_" + std::to_string(k);
        if (!r->out.count(name)) {
          ADD_FAILURE() << "no " << name;
          continue;
        }
        expect_near(r->out.at(name), want[k], name);
      }
      if (!first) first = std::move(r);
    }
    return first;
  }

  static void expect_near(const NpyArray& got, const NpyArray& want, const std::string& what) {
    ASSERT_EQ(got.dtype, want.dtype) << what;
    ASSERT_EQ(got.shape, want.shape) << what;
    if (got.dtype != DType::kFloat32) {
      EXPECT_EQ(got.data, want.data) << what;
      return;
    }
    auto g = got.view<float>(), w = want.view<float>();
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_NEAR(g[i], w[i], 1e-4f + 1e-4f * std::fabs(w[i])) << what << " element " << i;
    }
  }
};

// The tutorial's MatmulReLU, weights as an input node bound by the params (npu-run binds them).
TEST_F(TvmRun, MatmulRelu) {
  TvmGraph t;
  const int x = t.input("x", {2, 4}), w = t.input("w", {4, 8});
  t.head(t.kernel1("example_npu.matmul_relu_fused", {{x, 0}, {w, 0}}, {2, 8}));
  const F xv = rnd(8, 1), wv = rnd(32, 2);
  auto r = check(t, {{"w", f32({4, 8}, wv)}}, {{"x", f32({2, 4}, xv)}},
                 {f32({2, 8}, relu(matmul(xv, wv, 2, 4, 8)))});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device_ops, 1u);
  EXPECT_EQ(r->host_ops, 0u);
  EXPECT_GT(r->cycles, 0u);
}

// The tutorial's Conv2dReLU followed by the attribute-less max_pool2d of the example's
// MultipleOps: a merged multi-kernel subgraph.
TEST_F(TvmRun, Conv2dReluPool) {
  TvmGraph t;
  const int x = t.input("data", {1, 3, 32, 32}), w = t.constant("weight", {16, 3, 3, 3});
  const int c = t.kernel1("example_npu.conv2d_relu_fused", {{x, 0}, {w, 0}}, {1, 16, 30, 30});
  t.head(t.kernel1("example_npu.max_pool2d", {{c, 0}}, {1, 16, 15, 15}));
  const F xv = rnd(3 * 32 * 32, 3), wv = rnd(16 * 27, 4, -0.5f, 0.5f);
  I64 yd;
  const F y = relu(conv2d(xv, {1, 3, 32, 32}, wv, {16, 3, 3, 3}, 1, 0, 1, yd));
  auto r = check(t, {{"weight", f32({16, 3, 3, 3}, wv)}}, {{"data", f32({1, 3, 32, 32}, xv)}},
                 {f32({1, 16, 15, 15}, pool2d(y, yd, 2, true))});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device_ops, 2u);  // Conv+Relu fused, MaxPool
  EXPECT_EQ(r->host_ops, 0u);
}

// The example's Softmax module.
TEST_F(TvmRun, Softmax) {
  TvmGraph t;
  const int x = t.input("x", {2, 8});
  t.head(t.kernel1("example_npu.softmax", {{x, 0}}, {2, 8}));
  const F xv = rnd(16, 5, -3.0f, 3.0f);
  auto r = check(t, {}, {{"x", f32({2, 8}, xv)}}, {f32({2, 8}, softmax(xv, 8))});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device_ops, 1u);
}

// The example's MultipleOps (relu, max_pool2d(2, 2), relu) merged into one external function.
TEST_F(TvmRun, MergedMultipleOps) {
  TvmGraph t;
  const int x = t.input("x", {1, 16, 32, 32});
  const int a = t.kernel1("example_npu.relu", {{x, 0}}, {1, 16, 32, 32});
  const int p = t.kernel1("example_npu.max_pool2d", {{a, 0}}, {1, 16, 16, 16});
  t.head(t.kernel1("example_npu.relu", {{p, 0}}, {1, 16, 16, 16}));
  const F xv = rnd(16 * 32 * 32, 6);
  auto r = check(t, {}, {{"x", f32({1, 16, 32, 32}, xv)}},
                 {f32({1, 16, 16, 16}, relu(pool2d(relu(xv), {1, 16, 32, 32}, 2, true)))});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device_ops, 3u);
  EXPECT_EQ(r->host_ops, 0u);
}

// batch_norm's three entries (node_row_ptr) as heads: the result (through a relu) and the
// moving statistics, which inference passes through.
TEST_F(TvmRun, BatchNormMultiOutput) {
  TvmGraph t;
  const int x = t.input("x", {1, 4, 5, 5});
  const int bn =
      t.batch_norm("example_npu.batch_norm", x, {1, 4, 5, 5}, 4, {"gamma", "beta", "mean", "var"});
  t.head(t.kernel1("example_npu.relu", {{bn, 0}}, {1, 4, 5, 5}));
  t.head(bn, 1);
  t.head(bn, 2);
  const F g = {1.0f, 0.5f, 2.0f, -1.0f}, b = {0.1f, 0.2f, 0.3f, 0.4f}, m = {0, 0.5f, -0.5f, 1},
          v = {1, 2, 0.5f, 4};
  const F xv = rnd(100, 7, -2.0f, 2.0f);
  auto r = check(
      t,
      {{"gamma", f32({4}, g)}, {"beta", f32({4}, b)}, {"mean", f32({4}, m)}, {"var", f32({4}, v)}},
      {{"x", f32({1, 4, 5, 5}, xv)}},
      {f32({1, 4, 5, 5}, relu(batch_norm(xv, {1, 4, 5, 5}, g, b, m, v))), f32({4}, m),
       f32({4}, v)});
  ASSERT_TRUE(r);
  EXPECT_GE(r->device_ops, 2u);  // BatchNormalization (scale_shift) and Relu
}

// Every conv2d composite is example_npu.depthwise_conv2d upstream; groups come from the
// shapes (8 input channels, weights of one input channel each), padding from the output.
TEST_F(TvmRun, DepthwiseConv) {
  TvmGraph t;
  const int x = t.input("x", {1, 8, 10, 10}), w = t.constant("w", {8, 1, 3, 3});
  t.head(t.kernel1("example_npu.depthwise_conv2d", {{x, 0}, {w, 0}}, {1, 8, 10, 10}));
  const F xv = rnd(800, 8), wv = rnd(72, 9);
  I64 yd;
  auto r = check(t, {{"w", f32({8, 1, 3, 3}, wv)}}, {{"x", f32({1, 8, 10, 10}, xv)}},
                 {f32({1, 8, 10, 10}, conv2d(xv, {1, 8, 10, 10}, wv, {8, 1, 3, 3}, 1, 1, 8, yd))});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device_ops, 1u);
}

// int8: quantize to int8 and back (per tensor), both results as heads.
TEST_F(TvmRun, QuantizeDequantize) {
  TvmGraph t;
  const int x = t.input("x", {4, 16});
  const int s = t.constant("scale", {}), z = t.constant("zero_point", {}, "int8");
  const int q = t.kernel1("example_npu.quantize", {{x, 0}, {s, 0}, {z, 0}}, {4, 16}, {}, "int8");
  const int d = t.kernel1("example_npu.dequantize", {{q, 0}, {s, 0}, {z, 0}}, {4, 16});
  t.head(d);
  t.head(q);
  const F xv = rnd(64, 10, -1.2f, 1.2f);
  const float scale = 1.0f / 100.0f;
  const auto qv = quantize(xv, scale, 3);
  F dv;
  for (int8_t a : qv) dv.push_back(static_cast<float>(a - 3) * scale);
  auto r = check(t,
                 {{"scale", NpyArray::of<float>({}, F{scale})},
                  {"zero_point", NpyArray::of<int8_t>({}, std::vector<int8_t>{3})}},
                 {{"x", f32({4, 16}, xv)}}, {f32({4, 16}, dv), NpyArray::of<int8_t>({4, 16}, qv)});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device_ops, 2u);
  EXPECT_EQ(r->host_ops, 0u);
}

// nn.conv2d as the generic serializer records it: NHWC data, HWIO weights, stride 2, padding 1,
// output NHWC, then avg_pool2d over the NHWC result with its attributes recorded.
TEST_F(TvmRun, NhwcConvAndPoolWithAttributes) {
  TvmGraph t;
  const int x = t.input("x", {1, 12, 12, 4}), w = t.constant("w", {3, 3, 4, 8});
  const int c = t.kernel1("relax.nn.conv2d", {{x, 0}, {w, 0}}, {1, 6, 6, 8},
                          {{"strides", {2, 2}},
                           {"padding", {1, 1, 1, 1}},
                           {"dilation", {1, 1}},
                           {"groups", 1},
                           {"data_layout", "NHWC"},
                           {"kernel_layout", "HWIO"},
                           {"out_layout", "NHWC"},
                           {"out_dtype", ""}});
  t.head(t.kernel1("relax.nn.avg_pool2d", {{c, 0}}, {1, 3, 3, 8},
                   {{"pool_size", {2, 2}},
                    {"strides", {2, 2}},
                    {"padding", {0, 0, 0, 0}},
                    {"dilation", {1, 1}},
                    {"ceil_mode", false},
                    {"count_include_pad", false},
                    {"layout", "NHWC"},
                    {"out_layout", "NHWC"}}));
  const F xv = rnd(12 * 12 * 4, 11), wv = rnd(3 * 3 * 4 * 8, 12);
  // Reference in NCHW/OIHW: transpose the operands, transpose the result back.
  auto transpose = [](const F& a, const I64& d, const I64& perm) {
    I64 od;
    for (int64_t p : perm) od.push_back(d[static_cast<size_t>(p)]);
    F out(a.size());
    const size_t r = d.size();
    std::vector<size_t> idx(r, 0);
    for (size_t flat = 0; flat < a.size(); ++flat) {
      size_t rem = flat;
      for (size_t k = r; k-- > 0;) {
        idx[k] = rem % static_cast<size_t>(d[k]);
        rem /= static_cast<size_t>(d[k]);
      }
      size_t o = 0;
      for (size_t k = 0; k < r; ++k)
        o = o * static_cast<size_t>(od[k]) + idx[static_cast<size_t>(perm[k])];
      out[o] = a[flat];
    }
    return out;
  };
  I64 yd;
  const F y = conv2d(transpose(xv, {1, 12, 12, 4}, {0, 3, 1, 2}), {1, 4, 12, 12},
                     transpose(wv, {3, 3, 4, 8}, {3, 2, 0, 1}), {8, 4, 3, 3}, 2, 1, 1, yd);
  const F p = pool2d(y, yd, 2, false);
  auto r = check(t, {{"w", f32({3, 3, 4, 8}, wv)}}, {{"x", f32({1, 12, 12, 4}, xv)}},
                 {f32({1, 3, 3, 8}, transpose(p, {1, 8, 3, 3}, {0, 2, 3, 1}))});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device_ops, 6u);  // Conv, AveragePool and the four layout Transposes
  EXPECT_EQ(r->host_ops, 0u);
}

// Elementwise composites, sigmoid/tanh, and gelu (the registry's Gelu: the device's erf GELU).
TEST_F(TvmRun, ElementwiseAndActivations) {
  TvmGraph t;
  const int x = t.input("x", {2, 8}), y = t.input("y", {8});
  int v = t.kernel1("example_npu.add", {{x, 0}, {y, 0}}, {2, 8});
  v = t.kernel1("example_npu.multiply", {{v, 0}, {y, 0}}, {2, 8});
  v = t.kernel1("example_npu.subtract", {{v, 0}, {x, 0}}, {2, 8});
  v = t.kernel1("example_npu.divide", {{v, 0}, {y, 0}}, {2, 8});
  v = t.kernel1("example_npu.tanh", {{v, 0}}, {2, 8});
  v = t.kernel1("example_npu.sigmoid", {{v, 0}}, {2, 8});
  t.head(t.kernel1("example_npu.gelu", {{v, 0}}, {2, 8}));
  const F xv = rnd(16, 13), yv = rnd(8, 14, 0.5f, 1.5f);
  F want(16);
  for (size_t i = 0; i < 16; ++i) {
    const float b = yv[i % 8];
    const float e = std::tanh(((xv[i] + b) * b - xv[i]) / b);
    const float s = 1.0f / (1.0f + std::exp(-e));
    want[i] = 0.5f * s * (1.0f + std::erf(s / std::sqrt(2.0f)));
  }
  auto r = check(t, {}, {{"x", f32({2, 8}, xv)}, {"y", f32({8}, yv)}}, {f32({2, 8}, want)});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device_ops, 7u);
  EXPECT_EQ(r->host_ops, 0u);
}

// Gelu with approximate="tanh" stays on the host: the device's GELU is the erf form.
TEST_F(TvmRun, GeluTanhRunsOnTheHost) {
  TvmGraph t;
  const int x = t.input("x", {2, 8});
  t.head(t.kernel1("relax.nn.gelu_tanh", {{x, 0}}, {2, 8}));
  const F xv = rnd(16, 21);
  F want(16);
  for (size_t i = 0; i < 16; ++i) {
    const double v = xv[i];
    want[i] = static_cast<float>(
        0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  auto r = check(t, {}, {{"x", f32({2, 8}, xv)}}, {f32({2, 8}, want)});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->device_ops, 0u);
  EXPECT_EQ(r->host_ops, 1u);
}

// Heads may repeat an entry or name an input (a pass-through): each still gets its output_<k>.
TEST_F(TvmRun, HeadsThatRepeatOrPassThrough) {
  TvmGraph t;
  const int x = t.input("x", {2, 4});
  const int r = t.kernel1("example_npu.relu", {{x, 0}}, {2, 4});
  t.head(r);
  t.head(r);
  t.head(x);
  const F xv = rnd(8, 15);
  auto out = check(t, {}, {{"x", f32({2, 4}, xv)}},
                   {f32({2, 4}, relu(xv)), f32({2, 4}, relu(xv)), f32({2, 4}, xv)});
  ASSERT_TRUE(out);
}

}  // namespace
}  // namespace npu::compiler
