// The lowering end to end: each model is compiled twice, for the device and with every node
// on the host (CompileOptions::host_only, the reference operators of libnpu's host ops), both
// packages run on the emulator with the same pseudo-random inputs, and the outputs must agree
// (float32 within 1e-4 relative/absolute, integer types bit-exactly). Each case also checks
// that the device compile really lowered the ops it is about (its layers, its host segments),
// so a test cannot pass by running everything on the host.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "emu_suite.h"
#include "layernorm_formula.h"
#include "model_builder.h"
#include "npu/compiler/compile.h"
#include "npu/compiler/onnx_tensor.h"
#include "npu/device.h"
#include "npu/runtime/model.h"
#include "random_values.h"

namespace npu::compiler {
namespace {

using format::NpyArray;
using testing::ModelBuilder;
using Arrays = std::map<std::string, NpyArray>;
using I64 = std::vector<int64_t>;
constexpr int kF32 = onnx::TensorProto::FLOAT, kU8 = onnx::TensorProto::UINT8,
              kI8 = onnx::TensorProto::INT8, kI32 = onnx::TensorProto::INT32;

using testing::numel;
using testing::rnd;

/// An initializer of any element type, from T values in raw_data.
template <typename T>
void init(ModelBuilder& b, const std::string& name, const I64& dims, const std::vector<T>& v,
          int elem) {
  auto* t = b.graph().add_initializer();
  t->set_name(name);
  t->set_data_type(elem);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)));
}

/// Deterministic int8 weights covering the whole range.
std::vector<int8_t> i8_weights(size_t n, size_t mul, size_t add) {
  std::vector<int8_t> w(n);
  for (size_t i = 0; i < n; ++i)
    w[i] = static_cast<int8_t>(static_cast<int>((i * mul + add) % 255) - 127);
  return w;
}

/// A graph input of static shape.
void input(ModelBuilder& b, const std::string& name, const I64& dims, int elem = kF32) {
  b.input(name, std::vector<testing::DimSpec>(dims.begin(), dims.end()), elem);
}

using Attr = std::pair<std::string, std::variant<int64_t, float, std::string, I64>>;

/// A node with attributes.
onnx::NodeProto& node(ModelBuilder& b, const std::string& op, const std::vector<std::string>& in,
                      const std::string& out, const std::vector<Attr>& attrs = {}) {
  auto& n = b.node(op, in, {out});
  for (const auto& [key, value] : attrs) {
    std::visit([&, k = key](const auto& v) { ModelBuilder::attr(n, k, v); }, value);
  }
  return n;
}

/// A float weight initializer of random values.
void weight(ModelBuilder& b, const std::string& name, const I64& dims, uint32_t seed,
            float lo = -0.5f, float hi = 0.5f) {
  b.init_f(name, dims, rnd(numel(dims), seed, lo, hi));
}

onnx::NodeProto& conv(ModelBuilder& b, const std::string& x, const std::string& y, int64_t ic,
                      int64_t oc, uint32_t seed) {
  weight(b, y + "_w", {oc, ic, 3, 3}, seed);
  weight(b, y + "_b", {oc}, seed + 1000);
  return node(b, "Conv", {x, y + "_w", y + "_b"}, y, {{"pads", I64{1, 1, 1, 1}}});
}

// ---- the shared check: compile both, run both, compare -------------------------------------

struct Opts {
  std::optional<isa::DeviceConfig> device;  // default: the emulator's
  float lo = -1.0f, hi = 1.0f;              // range of float inputs
  uint32_t seed = 7;
  size_t host_segments = 0;  // expected in the device compile
};

Opts range(float lo, float hi) {
  Opts o;
  o.lo = lo, o.hi = hi;
  return o;
}

struct Both {
  CompileResult dev;
  Arrays inputs, dev_out, host_out;
  std::vector<std::string> layers;  // op of each layer of the device compile, in order
  size_t host_segments = 0;
  uint64_t arena = 0;  // the device package's "activations" buffer size

  size_t count(const std::string& op) const {
    return static_cast<size_t>(std::count(layers.begin(), layers.end(), op));
  }
  std::string layer_list() const {
    std::string s;
    for (const auto& l : layers) s += (s.empty() ? "" : ",") + l;
    return s;
  }
};

NpyArray random_input(const Value& v, uint32_t seed, const Opts& o) {
  const auto dims = v.static_dims().value_or(I64{});
  std::mt19937 rng(seed);
  const size_t n = numel(dims);
  switch (v.dtype.value_or(DType::kFloat32)) {
    case DType::kUint8:
    case DType::kInt8: {
      std::vector<uint8_t> b(n);
      for (auto& x : b) x = static_cast<uint8_t>(rng() & 0xff);
      NpyArray a = NpyArray::of<uint8_t>(dims, b);
      a.dtype = *v.dtype;
      return a;
    }
    default:  // float32 (other input types are not used here)
      return NpyArray::of<float>(dims, rnd(n, seed, o.lo, o.hi));
  }
}

std::string compare(const NpyArray& got, const NpyArray& want) {
  if (got.dtype != want.dtype) return "dtype differs";
  if (got.shape != want.shape) return "shape differs";
  if (got.data.size() != want.data.size()) return "size differs";
  if (got.dtype == format::DType::kFloat32) {
    auto g = got.view<float>(), w = want.view<float>();
    for (size_t i = 0; i < g.size(); ++i) {
      if (!(std::fabs(g[i] - w[i]) <= 1e-4f + 1e-4f * std::fabs(w[i]))) {
        return "element " + std::to_string(i) + ": device " + std::to_string(g[i]) + ", host " +
               std::to_string(w[i]);
      }
    }
    return {};
  }
  const size_t es = got.data.size() / std::max<size_t>(1, static_cast<size_t>(got.num_elements()));
  for (size_t i = 0; i < got.data.size(); i += es) {
    if (std::memcmp(&got.data[i], &want.data[i], es) != 0)
      return "element " + std::to_string(i / es) + " differs";
  }
  return {};
}

/// True when every element has the same bytes (then matching the host proves little).
bool is_constant(const NpyArray& a) {
  if (a.num_elements() < 2) return false;
  const size_t es = a.data.size() / std::max<size_t>(1, static_cast<size_t>(a.num_elements()));
  for (size_t i = es; i < a.data.size(); i += es) {
    if (std::memcmp(&a.data[i], a.data.data(), es) != 0) return false;
  }
  return true;
}

class LowerTest : public testing::EmuSuite<> {
 protected:
  static Expected<Arrays> run(CompileResult& r, const Arrays& inputs, const std::string& name) {
    auto m = Model::load(*device_, r.package, name);
    if (!m) return m.error();
    return m->run(inputs);
  }

  /// Compiles `b` for the device and host-only, runs both on the same inputs and compares
  /// every output. Failures are reported; nullopt when a compile or a run failed.
  std::optional<Both> run_both(const ModelBuilder& b, Opts o = {}) {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    auto g = import_onnx_bytes(b.bytes(), {}, name + ".onnx");
    if (!g) {
      ADD_FAILURE() << "import: " << g.error().message;
      return std::nullopt;
    }
    Both r;
    uint32_t seed = o.seed;
    for (ValueId v : g->inputs) r.inputs[g->value(v).name] = random_input(g->value(v), seed++, o);
    CompileOptions co;
    co.device = o.device.value_or(device_->config());
    auto dev = compile_graph(*g, co, name + ".onnx");
    // The oracle runs every ONNX node as written: no folding or fusion on the host side.
    co.host_only = true;
    co.passes.disable = {"fuse-gelu",        "fuse-layernorm", "conv-transpose-to-conv",
                         "einsum-to-matmul", "fold-batchnorm", "fuse-bias",
                         "fuse-activation"};
    auto host = compile_graph(std::move(*g), co, name + ".onnx");
    if (!dev || !host) {
      ADD_FAILURE() << "compile: " << (dev ? host.error().message : dev.error().message);
      return std::nullopt;
    }
    r.dev = std::move(*dev);
    for (const auto& s : r.dev.package.metadata.segments) {
      r.host_segments += s.kind == format::SegmentKind::kHost;
      for (const auto& l : s.layers) r.layers.push_back(l.op);
    }
    for (const auto& buf : r.dev.package.metadata.buffers) {
      if (buf.name == "activations") r.arena = buf.size;
    }
    EXPECT_EQ(host->device_ops, 0u);
    EXPECT_EQ(r.host_segments, o.host_segments) << r.dev.partition_report;
    auto dev_out = run(r.dev, r.inputs, "dev.npub");
    auto host_out = run(*host, r.inputs, "host.npub");
    if (!dev_out || !host_out) {
      ADD_FAILURE() << "run: " << (dev_out ? host_out.error().message : dev_out.error().message)
                    << "\n"
                    << r.dev.partition_report << "\nlayers: " << r.layer_list();
      return std::nullopt;
    }
    r.dev_out = std::move(*dev_out);
    r.host_out = std::move(*host_out);
    EXPECT_EQ(r.dev_out.size(), r.host_out.size());
    for (const auto& [out, want] : r.host_out) {
      auto it = r.dev_out.find(out);
      if (it == r.dev_out.end()) {
        ADD_FAILURE() << "output '" << out << "' missing from the device run";
        continue;
      }
      const std::string diff = compare(it->second, want);
      EXPECT_FALSE(is_constant(want)) << "output '" << out << "' is constant: a vacuous test";
      EXPECT_EQ(diff, "") << "output '" << out << "'\n"
                          << r.dev.partition_report << "\nlayers: " << r.layer_list();
    }
    return r;
  }
};

// ---- CNN and convolutions --------------------------------------------------------------------

TEST_F(LowerTest, SmallCnnRunsEntirelyOnTheDevice) {
  ModelBuilder b;
  input(b, "x", {1, 3, 8, 8});
  conv(b, "x", "c1", 3, 4, 1);
  b.node("Relu", {"c1"}, {"r1"});
  node(b, "MaxPool", {"r1"}, "p1", {{"kernel_shape", I64{2, 2}}, {"strides", I64{2, 2}}});
  auto& c2 = conv(b, "p1", "c2", 4, 8, 2);
  ModelBuilder::attr(c2, "strides", I64{2, 2});
  b.node("Flatten", {"c2"}, {"f"});
  weight(b, "gw", {32, 10}, 3);
  weight(b, "gb", {10}, 4);
  b.node("Gemm", {"f", "gw", "gb"}, {"g"});
  b.node("Softmax", {"g"}, {"y"});
  b.output("y");
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("conv2d"), 2u) << r->layer_list();
  EXPECT_EQ(r->count("pool"), 1u);
  EXPECT_EQ(r->count("matmul"), 1u);
  EXPECT_EQ(r->count("softmax"), 1u);
  // NHWC inside: the input goes channels-last once and back before the Flatten.
  EXPECT_EQ(r->count("transpose"), 2u) << r->layer_list();
  EXPECT_EQ(r->layers.back(), "softmax");
}

struct ConvCase {
  const char* name;
  I64 x, w;
  std::vector<Attr> attrs;
};

class ConvShapes : public LowerTest, public ::testing::WithParamInterface<ConvCase> {};

TEST_P(ConvShapes, MatchHost) {
  const ConvCase& c = GetParam();
  ModelBuilder b;
  input(b, "x", c.x);
  weight(b, "w", c.w, 11);
  weight(b, "b", {c.w[0]}, 12);
  node(b, "Conv", {"x", "w", "b"}, "y", c.attrs);
  b.output("y");
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("conv2d"), 1u) << r->layer_list();
}

INSTANTIATE_TEST_SUITE_P(
    Lower, ConvShapes,
    ::testing::Values(ConvCase{"conv1d_pad_dilation",
                               {1, 3, 16},
                               {4, 3, 3},
                               {{"pads", I64{2, 1}}, {"dilations", I64{2}}}},
                      ConvCase{"depthwise",
                               {1, 4, 6, 6},
                               {4, 1, 3, 3},
                               {{"pads", I64{1, 1, 1, 1}}, {"group", int64_t{4}}}},
                      ConvCase{"grouped",
                               {1, 4, 6, 6},
                               {6, 2, 3, 3},
                               {{"pads", I64{1, 1, 1, 1}}, {"group", int64_t{2}}}},
                      ConvCase{"same_upper",
                               {1, 3, 7, 7},
                               {4, 3, 2, 2},
                               {{"strides", I64{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}}}),
    [](const ::testing::TestParamInfo<ConvCase>& p) { return std::string(p.param.name); });

// ConvTranspose becomes a device Conv (conv-transpose-to-conv: flipped weights, channels
// swapped per group, strides as zeros inserted by device Reshape/Pad); the host oracle runs
// the ConvTranspose operator itself.
class ConvTransposeShapes : public LowerTest, public ::testing::WithParamInterface<ConvCase> {};

TEST_P(ConvTransposeShapes, RunOnTheDeviceAndMatchHost) {
  const ConvCase& c = GetParam();
  const int64_t group =
      c.attrs.empty() || c.attrs[0].first != "group" ? 1 : std::get<int64_t>(c.attrs[0].second);
  ModelBuilder b;
  input(b, "x", c.x);
  weight(b, "w", c.w, 21);
  weight(b, "b", {c.w[1] * group}, 22);
  node(b, "ConvTranspose", {"x", "w", "b"}, "y", c.attrs);
  b.output("y");
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("conv2d"), 1u) << r->layer_list();
  EXPECT_EQ(r->dev.host_ops, 0u) << r->dev.partition_report;
  // One device PAD inserts the zeros of each strided spatial dim.
  size_t strided = 0;
  for (const auto& [name, value] : c.attrs) {
    if (name != "strides") continue;
    for (int64_t s : std::get<I64>(value)) strided += s > 1;
  }
  EXPECT_EQ(r->count("pad"), strided) << r->layer_list();
}

INSTANTIATE_TEST_SUITE_P(
    Lower, ConvTransposeShapes,
    ::testing::Values(
        ConvCase{"plain_2d", {1, 3, 5, 6}, {3, 4, 3, 3}, {}},
        ConvCase{"grouped_pads_dilation",
                 {1, 4, 6, 5},
                 {4, 3, 3, 2},
                 {{"group", int64_t{2}}, {"pads", I64{1, 0, 2, 1}}, {"dilations", I64{2, 1}}}},
        ConvCase{"depthwise_output_padding",
                 {2, 3, 4, 4},
                 {3, 1, 2, 2},
                 {{"group", int64_t{3}}, {"dilations", I64{3, 2}}, {"output_padding", I64{2, 1}}}},
        ConvCase{
            "same_lower", {1, 2, 5, 5}, {2, 3, 4, 4}, {{"auto_pad", std::string("SAME_LOWER")}}},
        ConvCase{"output_shape", {1, 2, 4, 4}, {2, 2, 3, 3}, {{"output_shape", I64{5, 6}}}},
        ConvCase{"conv1d", {1, 3, 9}, {3, 2, 4}, {{"pads", I64{2, 1}}}},
        ConvCase{"strided_unet_up", {1, 4, 4, 4}, {4, 2, 2, 2}, {{"strides", I64{2, 2}}}},
        ConvCase{
            "strided_pads_output_padding",
            {2, 2, 3, 4},
            {2, 3, 3, 3},
            {{"strides", I64{2, 3}}, {"pads", I64{1, 0, 1, 1}}, {"output_padding", I64{1, 2}}}},
        ConvCase{"strided_grouped_same_upper",
                 {1, 4, 3, 3},
                 {4, 1, 3, 3},
                 {{"group", int64_t{2}},
                  {"strides", I64{2, 2}},
                  {"auto_pad", std::string("SAME_UPPER")}}},
        ConvCase{"strided_1d_dilated",
                 {1, 2, 5},
                 {2, 2, 3},
                 {{"strides", I64{3}}, {"dilations", I64{2}}}}),
    [](const ::testing::TestParamInfo<ConvCase>& p) { return std::string(p.param.name); });

TEST_F(LowerTest, ConvTransposeBeyondTheRewriteRunsOnTheHostWithItsReason) {
  // Kernel 2, stride 2, end pad 1: the equivalent Conv's end pad would be 1 - 1 - 1 = -1.
  ModelBuilder b;
  input(b, "x", {1, 2, 4, 4});
  weight(b, "w", {2, 3, 2, 2}, 23);
  node(b, "ConvTranspose", {"x", "w"}, "t", {{"strides", I64{2, 2}}, {"pads", I64{0, 0, 1, 1}}});
  b.node("Relu", {"t"}, {"y"});
  b.output("y");
  Opts o;
  o.host_segments = 1;
  auto r = run_both(b, o);
  ASSERT_TRUE(r);
  EXPECT_NE(r->dev.partition_report.find("(ConvTranspose): pads [0, 0, 1, 1] larger than the "
                                         "kernel's reach"),
            std::string::npos)
      << r->dev.partition_report;
}

// ---- elementwise on channels-last tensors ----------------------------------------------------

TEST_F(LowerTest, ElementwiseOnChannelsLastTensors) {
  ModelBuilder b;
  input(b, "x", {1, 3, 5, 6});
  conv(b, "x", "c1", 3, 4, 21);
  b.node("Relu", {"c1"}, {"r"});  // fused into the conv, so the Add below is not a bias
  b.init_f("k", {4, 1, 1}, {1.0f, -2.0f, 3.0f, 0.25f});
  b.node("Add", {"r", "k"}, {"a"});  // [C,1,1] broadcast in the stored (NHWC) order
  conv(b, "x", "c2", 3, 4, 22);
  b.node("Add", {"a", "c2"}, {"s"});  // two conv outputs
  b.init_f("half", {}, {0.5f});
  b.node("Mul", {"s", "half"}, {"y"});  // a scalar
  b.output("y");
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("conv2d"), 2u);
  EXPECT_EQ(r->count("eltwise"), 3u) << r->layer_list();
}

TEST_F(LowerTest, TransposeOfConvIsAnAliasBeforeReshapeAndMatMul) {
  ModelBuilder b;
  input(b, "x", {1, 3, 6, 6});
  conv(b, "x", "c", 3, 4, 41);
  node(b, "Transpose", {"c"}, "t", {{"perm", I64{0, 2, 3, 1}}});
  b.init_i64("shape", {2}, {36, 4});
  b.node("Reshape", {"t", "shape"}, {"m"});
  weight(b, "w", {4, 5}, 42);
  b.node("MatMul", {"m", "w"}, {"y"});
  b.output("y");
  auto r = run_both(b);
  ASSERT_TRUE(r);
  // Only the input's relayout: the conv's NHWC output is the transposed tensor as stored.
  EXPECT_EQ(r->count("transpose"), 1u) << r->layer_list();
  EXPECT_EQ(r->count("matmul"), 1u);
}

TEST_F(LowerTest, ChannelsLastValueReadByTwoIdentityOrderOpsIsTransposedOnce) {
  // The conv output (stored channels-last) feeds a Softmax and a MatMul, both in ONNX order:
  // one TRANSPOSE makes the copy both read.
  ModelBuilder b;
  input(b, "x", {1, 3, 6, 6});
  conv(b, "x", "c", 3, 4, 43);
  b.node("Softmax", {"c"}, {"s"});
  weight(b, "w", {6, 5}, 44);
  b.node("MatMul", {"c", "w"}, {"m"});
  b.output("s");
  b.output("m");
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("transpose"), 2u) << r->layer_list();  // the input's and the conv output's
  EXPECT_EQ(r->count("softmax"), 1u) << r->layer_list();
  EXPECT_EQ(r->count("matmul"), 1u) << r->layer_list();
}

// ---- pools, reductions, softmax, batch norm --------------------------------------------------

TEST_F(LowerTest, Pools) {
  ModelBuilder b;
  input(b, "x", {1, 3, 8, 8});
  node(b, "MaxPool", {"x"}, "max",
       {{"kernel_shape", I64{3, 3}},
        {"strides", I64{2, 2}},
        {"pads", I64{1, 1, 1, 1}},
        {"ceil_mode", int64_t{1}}});
  input(b, "z", {1, 3, 7, 7});
  node(b, "AveragePool", {"z"}, "avg",
       {{"kernel_shape", I64{3, 3}},
        {"strides", I64{2, 2}},
        {"pads", I64{1, 1, 1, 1}},
        {"count_include_pad", int64_t{0}}});
  input(b, "w", {2, 5, 4, 4});
  b.node("GlobalAveragePool", {"w"}, {"g"});
  b.node("Flatten", {"g"}, {"gap"});
  for (const char* y : {"max", "avg", "gap"}) b.output(y);
  auto r = run_both(b, range(-2.0f, -0.5f));  // negative: padding must not win the max
  ASSERT_TRUE(r);
  EXPECT_EQ(r->host_out.at("max").shape, (I64{1, 3, 5, 5}));  // ceil_mode
  EXPECT_EQ(r->count("pool"), 3u) << r->layer_list();
}

TEST_F(LowerTest, ReduceMeanSoftmaxLogSoftmax) {
  ModelBuilder b;
  input(b, "x", {2, 3, 5});
  node(b, "ReduceMean", {"x"}, "mean", {{"axes", I64{-1}}, {"keepdims", int64_t{1}}});
  node(b, "Softmax", {"x"}, "sm", {{"axis", int64_t{-1}}});
  input(b, "z", {2, 7});
  b.node("LogSoftmax", {"z"}, {"lsm"});
  for (const char* y : {"mean", "sm", "lsm"}) b.output(y);
  auto r = run_both(b, range(-4.0f, 4.0f));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->host_out.at("mean").shape, (I64{2, 3, 1}));
  EXPECT_EQ(r->count("reduce"), 1u) << r->layer_list();
  EXPECT_EQ(r->count("softmax"), 2u);
}

TEST_F(LowerTest, LayerNormalizationRunsOnTheVectorEngine) {
  ModelBuilder b(17);
  input(b, "x", {2, 4, 6});
  weight(b, "g", {6}, 21, 0.5f, 1.5f);
  weight(b, "beta", {6}, 22);
  node(b, "LayerNormalization", {"x", "g", "beta"}, "y", {{"epsilon", 1e-3f}});
  weight(b, "g2", {4, 6}, 23, 0.5f, 1.5f);  // over the last two axes, no bias
  node(b, "LayerNormalization", {"x", "g2"}, "z", {{"axis", int64_t{1}}});
  b.output("y");
  b.output("z");
  auto r = run_both(b, range(-3.0f, 5.0f));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dev.host_ops, 0u) << r->dev.partition_report;
  // mean, variance per node; center, square, epsilon, normalize, scale (+ bias) eltwises.
  EXPECT_EQ(r->count("reduce"), 4u) << r->layer_list();
  EXPECT_EQ(r->count("activation"), 2u) << r->layer_list();
  EXPECT_EQ(r->count("eltwise"), 11u) << r->layer_list();
}

TEST_F(LowerTest, LayerNormalizationStatisticsOutputs) {
  ModelBuilder b(17);
  input(b, "x", {2, 3, 6});
  weight(b, "g", {6}, 21);
  b.node("LayerNormalization", {"x", "g"}, {"y", "mean", "inv_std"});
  for (const char* o : {"y", "mean", "inv_std"}) b.output(o);
  auto r = run_both(b, range(-2.0f, 6.0f));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dev.host_ops, 0u) << r->dev.partition_report;
  EXPECT_EQ(r->host_out.at("mean").shape, (I64{2, 3, 1}));
  EXPECT_EQ(r->count("activation"), 2u) << r->layer_list();  // sqrt, reciprocal
}

TEST_F(LowerTest, MatrixProductEinsumsRunAsMatMuls) {
  ModelBuilder b;
  input(b, "a", {2, 3, 4});
  input(b, "c", {2, 5, 4});
  input(b, "d", {2, 4, 5});
  weight(b, "w", {6, 4}, 31);
  node(b, "Einsum", {"a", "d"}, "p", {{"equation", std::string("bij,bjk->bik")}});
  node(b, "Einsum", {"a", "c"}, "q", {{"equation", std::string("bij, bkj -> bik")}});
  node(b, "Einsum", {"a", "w"}, "r", {{"equation", std::string("bij,kj->bik")}});
  node(b, "Einsum", {"a"}, "s", {{"equation", std::string("bij->bji")}});  // not a product
  for (const char* y : {"p", "q", "r", "s"}) b.output(y);
  auto r = run_both(b, Opts{.host_segments = 1});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("matmul"), 3u) << r->layer_list();
  EXPECT_NE(r->dev.partition_report.find("Einsum"), std::string::npos) << r->dev.partition_report;
}

TEST_F(LowerTest, NearestResizeByIntegerFactorsIsADeviceCopy) {
  ModelBuilder b;
  input(b, "x", {1, 3, 4, 5});
  conv(b, "x", "c", 3, 2, 41);  // a channels-last input to resize
  b.init_f("scales", {4}, {1.0f, 1.0f, 2.0f, 3.0f});
  auto& r1 = b.node("Resize", {"c", "", "scales"}, {"up"});
  ModelBuilder::attr(r1, "coordinate_transformation_mode", std::string("asymmetric"));
  ModelBuilder::attr(r1, "nearest_mode", std::string("floor"));
  b.init_i64("sizes", {4}, {1, 3, 12, 10});
  b.node("Resize", {"x", "", "", "sizes"}, {"up2"});  // half_pixel, round_prefer_floor
  auto& r3 = b.node("Resize", {"x", "", "scales"}, {"lin"});
  ModelBuilder::attr(r3, "mode", std::string("linear"));
  for (const char* y : {"up", "up2", "lin"}) b.output(y);
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->host_out.at("up").shape, (I64{1, 2, 8, 15}));
  EXPECT_EQ(r->host_out.at("up2").shape, (I64{1, 3, 12, 10}));
  EXPECT_EQ(r->count("copy"), 2u) << r->layer_list();
  // The linear one is resize-to-matmul's: Rh · X · Rw^T on the matrix engine.
  EXPECT_EQ(r->count("matmul"), 2u) << r->layer_list();
}

TEST_F(LowerTest, SliceIsAViewOfItsInputOrAStridedCopy) {
  ModelBuilder b(13);
  input(b, "x", {4, 3, 5});
  const int64_t kEnd = std::numeric_limits<int64_t>::max();
  // Rows 1-2: one run of x's bytes, an alias (no layer), read by a Relu and as an output.
  b.init_i64("rows_s", {1}, {1});
  b.init_i64("rows_e", {1}, {3});
  b.node("Slice", {"x", "rows_s", "rows_e"}, {"rows"});
  b.node("Relu", {"rows"}, {"rows_relu"});
  // Every second element of the last axis from -4 on: a strided COPY.
  b.init_i64("cols_s", {1}, {-4});
  b.init_i64("cols_e", {1}, {kEnd});
  b.init_i64("cols_a", {1}, {-1});
  b.init_i64("cols_st", {1}, {2});
  b.node("Slice", {"x", "cols_s", "cols_e", "cols_a", "cols_st"}, {"cols"});
  b.node("Relu", {"cols"}, {"cols_relu"});
  // Steps 3 and 2 on the first two axes, ends past the dims: another COPY.
  b.init_i64("grid_s", {2}, {0, 0});
  b.init_i64("grid_e", {2}, {100, 3});
  b.init_i64("grid_a", {2}, {0, 1});
  b.init_i64("grid_st", {2}, {3, 2});
  b.node("Slice", {"x", "grid_s", "grid_e", "grid_a", "grid_st"}, {"grid"});
  b.node("Relu", {"grid"}, {"grid_relu"});
  // Columns 1-2 of every row: runs of 2 elements, a COPY.
  b.init_i64("mid_s", {1}, {1});
  b.init_i64("mid_e", {1}, {3});
  b.init_i64("mid_a", {1}, {2});
  b.node("Slice", {"x", "mid_s", "mid_e", "mid_a"}, {"mid"});
  b.node("Relu", {"mid"}, {"mid_relu"});
  // Every second row: whole inner dims, but a step on the outer one: a COPY too.
  b.init_i64("evens_s", {1}, {0});
  b.init_i64("evens_e", {1}, {4});
  b.init_i64("evens_a", {1}, {0});
  b.init_i64("evens_st", {1}, {2});
  b.node("Slice", {"x", "evens_s", "evens_e", "evens_a", "evens_st"}, {"evens"});
  b.node("Relu", {"evens"}, {"evens_relu"});
  // A negative step stays on the host.
  b.init_i64("back_s", {1}, {-1});
  b.init_i64("back_e", {1}, {-kEnd});
  b.init_i64("back_a", {1}, {2});
  b.init_i64("back_st", {1}, {-1});
  b.node("Slice", {"x", "back_s", "back_e", "back_a", "back_st"}, {"back"});
  for (const char* out :
       {"rows", "rows_relu", "cols_relu", "mid_relu", "grid_relu", "evens_relu", "back"}) {
    b.output(out);
  }
  Opts o;
  o.host_segments = 1;
  auto r = run_both(b, o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("copy"), 4u) << r->layer_list();
  EXPECT_EQ(r->count("activation"), 5u) << r->layer_list();
  EXPECT_EQ(r->host_out.at("rows").shape, (I64{2, 3, 5}));
  EXPECT_EQ(r->host_out.at("cols_relu").shape, (I64{4, 3, 2}));
  EXPECT_EQ(r->host_out.at("grid_relu").shape, (I64{2, 2, 5}));
  EXPECT_NE(r->dev.partition_report.find("Slice step -1"), std::string::npos)
      << r->dev.partition_report;
}

TEST_F(LowerTest, SliceOfAChannelsLastConvOutputKeepsItsOrder) {
  // The conv's output is stored NHWC: channels 1-2 are a strided COPY into NHWC storage, which
  // the next conv reads without a relayout; image 1 of the batch is an alias.
  ModelBuilder b;
  input(b, "x", {2, 3, 6, 6});
  conv(b, "x", "c1", 3, 4, 21);
  b.init_i64("ch_s", {1}, {1});
  b.init_i64("ch_e", {1}, {3});
  b.init_i64("ch_a", {1}, {1});
  b.node("Slice", {"c1", "ch_s", "ch_e", "ch_a"}, {"ch"});
  conv(b, "ch", "c2", 2, 3, 22);
  b.init_i64("im_s", {1}, {1});
  b.init_i64("im_e", {1}, {2});
  b.node("Slice", {"c2", "im_s", "im_e"}, {"im"});
  b.node("Relu", {"im"}, {"y"});
  b.output("y");
  Opts o = range(-2.0f, 2.0f);
  auto r = run_both(b, o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("copy"), 1u) << r->layer_list();
  // x into NHWC and nothing else: no relayout around either Slice.
  EXPECT_EQ(r->count("transpose"), 1u) << r->layer_list();
}

TEST_F(LowerTest, StandaloneBatchNormAfterAdd) {
  ModelBuilder b;
  input(b, "a", {1, 4, 5, 5});
  input(b, "c", {1, 4, 5, 5});
  b.node("Add", {"a", "c"}, {"s"});
  weight(b, "gamma", {4}, 51, 0.5f, 2.0f);
  weight(b, "beta", {4}, 52);
  weight(b, "mean", {4}, 53);
  weight(b, "var", {4}, 54, 0.1f, 2.0f);
  b.node("BatchNormalization", {"s", "gamma", "beta", "mean", "var"}, {"y"});
  b.output("y");
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("scale_shift"), 1u) << r->layer_list();
}

// ---- quantization ----------------------------------------------------------------------------

TEST_F(LowerTest, QuantizeDequantizePerTensor) {
  for (const int elem : {kU8, kI8}) {
    SCOPED_TRACE(elem == kU8 ? "uint8" : "int8");
    ModelBuilder b;
    input(b, "x", {1, 2, 4, 4});
    b.init_f("s", {}, {0.02f});
    if (elem == kU8) init<uint8_t>(b, "zp", {}, {128}, kU8);
    if (elem == kI8) init<int8_t>(b, "zp", {}, {-3}, kI8);
    b.node("QuantizeLinear", {"x", "s", "zp"}, {"q"});
    b.node("DequantizeLinear", {"q", "s", "zp"}, {"y"});
    b.output("q", elem);
    b.output("y");
    // Inputs beyond the int8 range saturate.
    auto r = run_both(b, range(-3.0f, 3.0f));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->count("quantize") + r->count("dequantize"), 2u) << r->layer_list();
  }
}

TEST_F(LowerTest, DequantizePerAxisOfAnInput) {
  ModelBuilder b;
  input(b, "x", {2, 3, 4}, kI8);
  b.init_f("s", {3}, {0.1f, 0.02f, 0.5f});
  init<int8_t>(b, "zp", {3}, {0, -5, 7}, kI8);
  node(b, "DequantizeLinear", {"x", "s", "zp"}, "y", {{"axis", int64_t{1}}});
  b.output("y");
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->layers.size(), 1u) << r->layer_list();
}

TEST_F(LowerTest, QLinearConvAndMatMulPerChannelBitExact) {
  ModelBuilder b;
  input(b, "x", {1, 3, 6, 6}, kU8);
  b.init_f("xs", {}, {0.05f});
  init<uint8_t>(b, "xz", {}, {128}, kU8);
  init<int8_t>(b, "w", {4, 3, 3, 3}, i8_weights(4 * 3 * 3 * 3, 37, 11), kI8);
  b.init_f("ws", {4}, {0.01f, 0.02f, 0.005f, 0.03f});
  init<int8_t>(b, "wz", {4}, {0, 0, 0, 0}, kI8);
  b.init_f("ys", {}, {0.25f});
  init<uint8_t>(b, "yz", {}, {100}, kU8);
  init<int32_t>(b, "bias", {4}, {100, -2000, 0, 5000}, kI32);
  node(b, "QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "bias"}, "y",
       {{"pads", I64{1, 1, 1, 1}}});
  b.output("y", kU8);
  input(b, "a", {2, 3, 8}, kU8);
  init<int8_t>(b, "b", {8, 5}, i8_weights(8 * 5, 53, 7), kI8);
  b.init_f("bs", {5}, {0.01f, 0.02f, 0.03f, 0.015f, 0.005f});
  init<int8_t>(b, "bz", {5}, {0, 0, 0, 0, 0}, kI8);
  b.node("QLinearMatMul", {"a", "xs", "xz", "b", "bs", "bz", "ys", "yz"}, {"mm"});
  b.output("mm", kU8);
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("conv2d"), 1u) << r->layer_list();
  EXPECT_EQ(r->count("matmul"), 1u);
}

TEST_F(LowerTest, MatMulIntegerAndConvIntegerBitExact) {
  ModelBuilder b;
  input(b, "a", {4, 8}, kU8);
  init<int8_t>(b, "b", {8, 5}, i8_weights(8 * 5, 29, 3), kI8);
  init<uint8_t>(b, "az", {}, {7}, kU8);
  init<int8_t>(b, "bz", {5}, {0, 1, -2, 3, 0}, kI8);
  b.node("MatMulInteger", {"a", "b", "az", "bz"}, {"mi"});
  b.output("mi", kI32);
  input(b, "x", {1, 3, 5, 5}, kU8);
  init<int8_t>(b, "cw", {4, 3, 3, 3}, i8_weights(4 * 3 * 3 * 3, 41, 5), kI8);
  init<uint8_t>(b, "xz", {}, {128}, kU8);
  node(b, "ConvInteger", {"x", "cw", "xz"}, "ci", {{"pads", I64{1, 1, 1, 1}}});
  b.output("ci", kI32);
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("matmul"), 1u) << r->layer_list();
  EXPECT_EQ(r->count("conv2d"), 1u);
}

// ---- matmuls ---------------------------------------------------------------------------------

TEST_F(LowerTest, GemmWithFullCAndBatchedMatMuls) {
  ModelBuilder b;
  input(b, "a", {3, 8});
  weight(b, "w", {6, 8}, 61);
  weight(b, "c", {3, 6}, 62);
  node(b, "Gemm", {"a", "w", "c"}, "gemm", {{"transB", int64_t{1}}});
  input(b, "a4", {2, 3, 4, 5});
  weight(b, "w2", {5, 6}, 71);
  b.node("MatMul", {"a4", "w2"}, {"mm4"});  // [2,3,4,5] x [5,6]: batches share B
  input(b, "p", {2, 3, 4});
  input(b, "q", {2, 4, 5});
  b.node("MatMul", {"p", "q"}, {"mm3"});  // a B per batch
  for (const char* y : {"gemm", "mm4", "mm3"}) b.output(y);
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("matmul"), 3u) << r->layer_list();
  EXPECT_EQ(r->count("eltwise"), 1u);  // Gemm's C added after the product
}

// ---- activations, fused after a conv and standalone ------------------------------------------

struct ActCase {
  const char* op;
  bool fused;
};

class Activations : public LowerTest, public ::testing::WithParamInterface<ActCase> {};

TEST_P(Activations, MatchHost) {
  const ActCase& c = GetParam();
  ModelBuilder b(14);  // HardSwish
  std::string src = "x";
  if (c.fused) {
    input(b, "x", {1, 3, 6, 6});
    conv(b, "x", "c", 3, 4, 81);
    src = "c";
  } else {
    input(b, "x", {2, 3, 4, 5});
  }
  std::vector<std::string> ins = {src};
  if (std::string(c.op) == "Clip") {
    b.init_f("lo", {}, {-0.5f});
    b.init_f("hi", {}, {0.4f});
    ins.insert(ins.end(), {"lo", "hi"});
  }
  auto& n = b.node(c.op, ins, {"y"});
  if (std::string(c.op) == "LeakyRelu") ModelBuilder::attr(n, "alpha", 0.2f);
  b.output("y");
  auto r = run_both(b, range(-4.0f, 4.0f));
  ASSERT_TRUE(r);
  // One device op: the conv with the activation fused, or the activation alone.
  EXPECT_EQ(r->dev.device_ops, 1u) << r->dev.partition_report;
  const bool clamp = std::string(c.op) == "Clip" && c.fused;  // a conv clamp, no extra layer
  EXPECT_EQ(r->count("activation"), clamp ? 0u : 1u) << r->layer_list();
  EXPECT_EQ(r->count("conv2d"), c.fused ? 1u : 0u);
}

INSTANTIATE_TEST_SUITE_P(Lower, Activations,
                         ::testing::Values(ActCase{"Sigmoid", true}, ActCase{"Tanh", true},
                                           ActCase{"LeakyRelu", true}, ActCase{"HardSwish", true},
                                           ActCase{"Clip", true}, ActCase{"Sigmoid", false},
                                           ActCase{"Tanh", false}, ActCase{"LeakyRelu", false},
                                           ActCase{"HardSwish", false}, ActCase{"Clip", false}),
                         [](const ::testing::TestParamInfo<ActCase>& p) {
                           return std::string(p.param.op) +
                                  (p.param.fused ? "_fused" : "_standalone");
                         });

// GELU as exporters before opset 20 write it (x * 0.5 * (1 + erf(x / sqrt(2))), in the three
// orders of the Muls) becomes one ACTIVATION command on the device (fuse-gelu), matching the
// formula run node by node on the host.
class GeluForms : public LowerTest, public ::testing::WithParamInterface<int> {};

TEST_P(GeluForms, FuseIntoOneDeviceActivation) {
  ModelBuilder b(13);
  input(b, "x", {2, 3, 8});
  b.init_f("sqrt2", {}, {1.4142135f});
  b.init_f("one", {}, {1.0f});
  b.init_f("half", {}, {0.5f});
  b.node("Div", {"x", "sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"one", "e"}, {"p"});
  switch (GetParam()) {
    case 0:  // torch.onnx: (x * p) * 0.5
      b.node("Mul", {"x", "p"}, {"t"});
      b.node("Mul", {"t", "half"}, {"y"});
      break;
    case 1:  // (x * 0.5) * p
      b.node("Mul", {"half", "x"}, {"h"});
      b.node("Mul", {"h", "p"}, {"y"});
      break;
    default:  // x * (p * 0.5)
      b.node("Mul", {"p", "half"}, {"t"});
      b.node("Mul", {"t", "x"}, {"y"});
      break;
  }
  b.output("y");
  auto r = run_both(b, range(-4.0f, 4.0f));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dev.device_ops, 1u) << r->dev.partition_report;
  EXPECT_EQ(r->count("activation"), 1u) << r->layer_list();
  EXPECT_EQ(r->layers.size(), 1u) << r->layer_list();
}

INSTANTIATE_TEST_SUITE_P(Lower, GeluForms, ::testing::Values(0, 1, 2));

// An intermediate of the formula read elsewhere keeps the nodes as written (and right).
TEST_F(LowerTest, GeluFormulaWithASecondReaderIsNotFused) {
  ModelBuilder b(13);
  input(b, "x", {2, 8});
  b.init_f("sqrt2", {}, {1.4142135f});
  b.init_f("one", {}, {1.0f});
  b.init_f("half", {}, {0.5f});
  b.node("Div", {"x", "sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"e", "one"}, {"p"});
  b.node("Mul", {"x", "p"}, {"t"});
  b.node("Mul", {"t", "half"}, {"y"});
  b.output("y");
  b.output("e");  // read outside the formula
  auto r = run_both(b, range(-4.0f, 4.0f));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dev.device_ops, 5u) << r->dev.partition_report;
}

// LayerNorm as exporters before opset 17 write it (ReduceMean, Sub, Pow or Mul, ReduceMean,
// Add, Sqrt, Div, optional Mul and Add) becomes one device LayerNormalization
// (fuse-layernorm), matching the formula run node by node on the host. (The opset-18 form,
// axes as an input, is checked on the graph in fusion_test.cpp: the importer reads opsets up
// to 17.)
struct LnRun {
  const char* name;
  testing::LayerNormFormula f;
};

void PrintTo(const LnRun& r, std::ostream* os) {
  *os << r.name;
}

LnRun ln_run(const char* name, int64_t opset, I64 axes, bool mul_square, I64 gamma, I64 beta,
             I64 dims = {2, 3, 8}) {
  LnRun r{name, {}};
  r.f.opset = opset;
  r.f.axes = std::move(axes);
  r.f.mul_square = mul_square;
  r.f.gamma = std::move(gamma);
  r.f.beta = std::move(beta);
  r.f.dims = std::move(dims);
  return r;
}

class LayerNormFormulas : public LowerTest, public ::testing::WithParamInterface<LnRun> {};

TEST_P(LayerNormFormulas, FuseIntoOneDeviceLayerNorm) {
  auto r = run_both(testing::layernorm_formula(GetParam().f), range(-3.0f, 5.0f));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dev.device_ops, 1u) << r->dev.partition_report;
  // The lowering's statistics: REDUCE mean and variance, one SQRT.
  EXPECT_EQ(r->count("reduce"), 2u) << r->layer_list();
  EXPECT_EQ(r->count("activation"), 1u) << r->layer_list();
}

INSTANTIATE_TEST_SUITE_P(
    Lower, LayerNormFormulas,
    ::testing::Values(ln_run("opset13_pow_affine", 13, {-1}, false, {8}, {8}),
                      ln_run("opset13_mul_plain", 13, {-1}, true, {}, {}),
                      ln_run("opset11_pow_gamma", 11, {-1}, false, {8}, {}),
                      ln_run("opset16_mul_beta", 16, {2}, true, {}, {8}),
                      ln_run("opset13_two_axes", 13, {1, 2}, false, {3, 8}, {1, 3, 8}),
                      ln_run("opset13_rows_of_64", 13, {-1}, false, {64}, {64}, {4, 7, 64})),
    [](const ::testing::TestParamInfo<LnRun>& p) { return std::string(p.param.name); });

// Where the formula is not fused (an intermediate read elsewhere; a gamma that broadcasts
// within the normalized axes, which stays a Mul after a fused normalization) the result is
// still the formula's.
TEST_F(LowerTest, LayerNormFormulaThatIsNotFullyFused) {
  testing::LayerNormFormula f;
  f.gamma = f.beta = {8};
  auto b = testing::layernorm_formula(f);
  b.output("var");
  auto r = run_both(b, range(-3.0f, 5.0f));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dev.device_ops, 9u) << r->dev.partition_report;

  f.gamma = {3, 8};
  r = run_both(testing::layernorm_formula(f), range(-3.0f, 5.0f));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dev.device_ops, 3u) << r->dev.partition_report;
}

TEST_F(LowerTest, NhwcInputTransposedIntoConvIsZeroCopy) {
  ModelBuilder b;
  input(b, "x", {1, 6, 7, 3});  // a channels-last model input
  node(b, "Transpose", {"x"}, "t", {{"perm", I64{0, 3, 1, 2}}});
  conv(b, "t", "c", 3, 4, 111);
  node(b, "Transpose", {"c"}, "t2", {{"perm", I64{0, 2, 3, 1}}});
  input(b, "z", {1, 6, 7, 4});
  b.node("Add", {"t2", "z"}, {"y"});
  b.output("y");
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->layer_list(), "conv2d,eltwise") << r->dev.partition_report;
}

// ---- memory planning, fallback, errors -------------------------------------------------------

TEST_F(LowerTest, ConvChainReusesTheArena) {
  ModelBuilder b;
  input(b, "x", {1, 8, 16, 16});
  std::string prev = "x";
  for (int i = 0; i < 6; ++i) {
    const std::string y = i == 5 ? "y" : "c" + std::to_string(i);
    conv(b, prev, y, 8, 8, 90 + static_cast<uint32_t>(i));
    prev = y;
  }
  b.output("y");
  auto r = run_both(b);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("conv2d"), 6u);
  // c0..c4, 8 KiB each; the arena also holds x, its NHWC copy and y, yet at most three
  // tensors are live at once.
  const uint64_t intermediates = 5u * 8 * 16 * 16 * 4;
  EXPECT_LT(r->arena, intermediates) << "arena " << r->arena;
  EXPECT_LE(r->arena, 3u * 8 * 16 * 16 * 4) << "arena " << r->arena;
}

TEST_F(LowerTest, MatMulTooBigForSramFallsBackToTheHost) {
  constexpr int64_t K = 4096;
  ModelBuilder b;
  input(b, "x", {1, K});
  b.node("Relu", {"x"}, {"r"});
  weight(b, "w", {K, 4}, 101, -0.05f, 0.05f);
  weight(b, "bias", {4}, 102);
  b.node("MatMul", {"r", "w"}, {"m"});
  b.node("Add", {"m", "bias"}, {"a"});
  b.node("Sigmoid", {"a"}, {"y"});
  b.output("y");
  Opts o;
  o.device = device_->config();
  o.device->sram_size = 16 << 10;
  o.host_segments = 3;  // MatMul, then its fused bias Add and Sigmoid
  auto r = run_both(b, o);
  ASSERT_TRUE(r);
  EXPECT_NE(r->dev.partition_report.find("lowering:"), std::string::npos)
      << r->dev.partition_report;
  EXPECT_EQ(r->dev.host_ops, 1u) << r->dev.partition_report;
  EXPECT_GE(r->dev.device_ops, 1u);
  EXPECT_EQ(r->count("activation"), 1u) << r->layer_list();  // the Relu stays on the device
}

TEST_F(LowerTest, HostFallbackConvKeepsItsFusedActivation) {
  // The oracle does not fuse: the host conv's activation chain is checked against the
  // activation node as written.
  for (const char* act : {"Clip", "HardSigmoid", "LeakyRelu"}) {
    SCOPED_TRACE(act);
    ModelBuilder b;
    input(b, "x", {1, 64, 4, 64});
    conv(b, "x", "c", 64, 4, 121);
    std::vector<std::string> ins = {"c"};
    if (std::string(act) == "Clip") {
      b.init_f("lo", {}, {-0.5f});
      b.init_f("hi", {}, {0.4f});
      ins.insert(ins.end(), {"lo", "hi"});
    }
    auto& n = b.node(act, ins, {"y"});
    if (std::string(act) != "Clip") ModelBuilder::attr(n, "alpha", 0.3f);
    b.output("y");
    Opts o;
    o.device = device_->config();
    o.device->sram_size = 16 << 10;  // no output row of the conv fits
    o.host_segments = 2;             // the Conv, then its activation
    auto r = run_both(b, o);
    ASSERT_TRUE(r);
    EXPECT_NE(r->dev.partition_report.find("lowering:"), std::string::npos);
  }
}

TEST_F(LowerTest, ValueLiveAcrossAHostSegment) {
  ModelBuilder b;
  input(b, "x", {1, 3, 6, 6});
  conv(b, "x", "c1", 3, 4, 131);
  b.node("Floor", {"c1"}, {"f"});  // host only
  conv(b, "f", "c2", 4, 4, 132);
  b.node("Add", {"c2", "c1"}, {"y"});
  b.output("y");
  Opts o = range(-4.0f, 4.0f);
  o.host_segments = 1;
  auto r = run_both(b, o);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count("conv2d"), 2u) << r->layer_list();
}

TEST_F(LowerTest, RecurrentLayersRunOnTheDeviceAndFeedIt) {
  // A bidirectional batch-first LSTM (opset 14, Y unnamed) and a GRU: their input projections
  // (split-recurrence) and their unrolled steps (unroll-recurrence) run on the device; ONNX
  // shape inference gives their outputs' shapes, and MatMul + Relu consume them there.
  ModelBuilder b(14);
  input(b, "x", {2, 5, 3});  // [batch, seq, input]: layout 1
  weight(b, "w", {2, 16, 3}, 141);
  weight(b, "r", {2, 16, 4}, 142);
  weight(b, "bias", {2, 32}, 143);
  auto& l = b.node("LSTM", {"x", "w", "r", "bias"}, {"", "h", "c"});
  ModelBuilder::attr(l, "hidden_size", int64_t{4});
  ModelBuilder::attr(l, "direction", std::string("bidirectional"));
  ModelBuilder::attr(l, "layout", int64_t{1});
  b.init_i64("shape", {2}, {2, 8});
  b.node("Reshape", {"h", "shape"}, {"hf"});  // [batch, dirs, hidden] -> [2, 8]
  weight(b, "fc", {8, 6}, 144);
  b.node("MatMul", {"hf", "fc"}, {"m"});
  b.node("Relu", {"m"}, {"y"});
  b.output("y");
  b.output("c");
  input(b, "s", {3, 2, 3});  // [seq, batch, input]
  weight(b, "gw", {1, 6, 3}, 145);
  weight(b, "gr", {1, 6, 2}, 146);
  auto& g = b.node("GRU", {"s", "gw", "gr"}, {"gy"});
  ModelBuilder::attr(g, "hidden_size", int64_t{2});
  ModelBuilder::attr(g, "linear_before_reset", int64_t{1});
  b.node("Relu", {"gy"}, {"gz"});
  b.output("gz");
  auto r = run_both(b, range(-2.0f, 2.0f));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->dev.host_ops, 0u) << r->dev.partition_report;
  EXPECT_EQ(r->host_out.at("c").shape, (I64{2, 2, 4}));
  EXPECT_EQ(r->host_out.at("gz").shape, (I64{3, 1, 2, 2}));
  // The FC, the input projections of the LSTM and the GRU, and the steps' H R^T: the LSTM's
  // batched over its gates (2 directions x 5 steps), the GRU's z/r and h apart (3 steps x 2).
  EXPECT_EQ(r->count("matmul"), 3u + 10u + 6u) << r->layer_list();
}

TEST_F(LowerTest, NodeThatRunsNowhereFailsWithOneLine) {
  ModelBuilder b;
  input(b, "x", {2, 5});
  b.node("Hardmax", {"x"}, {"h"});
  b.node("Relu", {"h"}, {"y"});
  b.output("y");
  CompileOptions co;
  co.import.allow_unsupported_ops = true;
  co.device = device_->config();
  auto g = import_onnx_bytes(b.bytes(), co.import, "hardmax.onnx");
  ASSERT_TRUE(g) << g.error().message;
  auto c = compile_graph(std::move(*g), co, "hardmax.onnx");
  std::string message;
  if (!c) {
    message = c.error().message;
  } else {
    auto out = run(*c, {{"x", NpyArray::of<float>({2, 5}, rnd(10, 1))}}, "hardmax.npub");
    ASSERT_FALSE(out) << "a Hardmax ran";
    message = out.error().message;
  }
  EXPECT_NE(message.find("Hardmax"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

}  // namespace
}  // namespace npu::compiler

namespace npu::compiler {
namespace {

/// compile_onnx on a model file with a symbolic batch N (nothing bound), run on `x`.
Expected<std::map<std::string, format::NpyArray>> run_dynamic(testing::ModelBuilder& b,
                                                              const std::string& name,
                                                              const NpyArray& x) {
  const std::string path = ::testing::TempDir() + name;
  std::string bytes;
  b.model().SerializeToString(&bytes);
  std::ofstream(path, std::ios::binary) << bytes;
  auto r = compile_onnx(path);
  if (!r) return r.error();
  auto dev = Device::open("emu:");
  if (!dev) return dev.error();
  auto m = Model::load(*dev, std::move(r->package), name);
  if (!m) return m.error();
  return m->run({{"x", x}});
}

TEST(DynamicBatch, RowIndependentModelRunsSliceBySlice) {
  testing::ModelBuilder b;
  b.input("x", {std::string("N"), int64_t{4}});
  b.node("Relu", {"x"}, {"y"});
  b.output("y", {std::string("N"), int64_t{4}});
  const std::vector<float> v = {-1, 2, -3, 4, 5, -6, 7, -8, 9, 10, -11, 12};
  auto r = run_dynamic(b, "relu_dyn.onnx", NpyArray::of<float>({3, 4}, v));
  ASSERT_TRUE(r) << r.error().message;
  const auto& y = r->at("y");
  ASSERT_EQ(y.shape, (I64{3, 4}));
  EXPECT_EQ(std::vector<float>(y.view<float>().begin(), y.view<float>().end()),
            (std::vector<float>{0, 2, 0, 4, 5, 0, 7, 0, 9, 10, 0, 12}));
}

TEST(DynamicBatch, CrossRowReductionIsCompiledForOneRowOnly) {
  // ReduceSum over the batch axis mixes rows: running N=3 as three slices would be wrong, so
  // the package is for N=1 and a batch of 3 is refused with a clear error.
  testing::ModelBuilder b;
  b.input("x", {std::string("N"), int64_t{4}});
  b.init_i64("axes", {1}, {0});
  b.node("ReduceSum", {"x", "axes"}, {"y"});
  b.output("y");
  auto r = run_dynamic(b, "reduce_dyn.onnx", NpyArray::zeros(format::DType::kFloat32, {3, 4}));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "reduce_dyn.onnx: input 'x': shape [3, 4], expected [1, 4]");
}

}  // namespace
}  // namespace npu::compiler
