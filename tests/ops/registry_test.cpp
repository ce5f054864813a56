// The operator registry (npu/ops/operators.def, npu/ops/registry.h): the table is well formed,
// run() enforces what it declares (opsets, attribute names and types, required attributes,
// input-0 dtypes), the legacy broadcast form, and every shape rule agrees with its
// implementation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "npu/ops/ops.h"
#include "npu/ops/registry.h"
#include "npu_isa.h"

namespace {

using npu::format::DType;
using npu::format::NpyArray;
using npu::ops::OpSchema;
using npu::ops::ShapeRule;
using testing::HasSubstr;

std::string error_of(npu::Expected<std::vector<NpyArray>> r) {
  EXPECT_FALSE(r) << "unexpectedly succeeded";
  return r ? "" : r.error().message;
}

npu::Expected<std::vector<NpyArray>> run(const std::string& op, const std::string& attrs,
                                         std::vector<const NpyArray*> ins, size_t outs = 1) {
  return npu::ops::run(op, attrs, ins, outs);
}

TEST(OpRegistry, TableIsWellFormed) {
  std::set<std::string_view> names;
  ASSERT_GE(npu::ops::registry().size(), 80u);
  for (const OpSchema& s : npu::ops::registry()) {
    SCOPED_TRACE(std::string(s.name));
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate row";
    EXPECT_LE(s.since, s.until);
    EXPECT_GE(s.since, 1);
    EXPECT_NE(s.host, nullptr);
    EXPECT_FALSE(s.device.empty());
    EXPECT_NE(s.types, npu::ops::DTypeSet{});
    std::set<std::string> attrs;
    for (const auto& a : s.attributes) EXPECT_TRUE(attrs.insert(a.name).second) << a.name;
    EXPECT_EQ(npu::ops::find(s.name), &s);
    EXPECT_TRUE(npu::ops::is_supported(s.name));
  }
  EXPECT_EQ(npu::ops::find("Foo"), nullptr);
  EXPECT_EQ(npu::ops::names().size(), npu::ops::registry().size());
  EXPECT_EQ(npu::ops::find("Conv")->device, "Conv");
  EXPECT_EQ(npu::ops::find("LSTM")->domain, "");
  EXPECT_EQ(npu::ops::find("LSTMRecurrence")->domain, "npu");  // internal (split-recurrence)
  // Code and defaults: what the host implementation and the compiler's lowering both read.
  EXPECT_EQ(npu::ops::find("LeakyRelu")->code, NPU_ACT_LEAKY_RELU);
  EXPECT_EQ(npu::ops::find("LeakyRelu")->host_name, "unary");
  EXPECT_FLOAT_EQ(static_cast<float>(npu::ops::find("LeakyRelu")->number_default("alpha")), 0.01f);
  EXPECT_FLOAT_EQ(static_cast<float>(npu::ops::find("HardSigmoid")->number_default("beta")), 0.5f);
  EXPECT_EQ(npu::ops::find("Sum")->code, NPU_ELTWISE_ADD);
  EXPECT_EQ(npu::ops::find("ReduceMax")->code, NPU_REDUCE_MAX);
  EXPECT_EQ(npu::ops::find("GlobalAveragePool")->code, NPU_POOL_AVG);
  EXPECT_EQ(npu::ops::find("Tile")->device, "Host");
  EXPECT_EQ(npu::ops::types::Floats.to_string(), "float32, float64");
}

TEST(OpRegistry, RunEnforcesTheSchema) {
  const NpyArray x = NpyArray::of<float>({2}, std::vector<float>{1, -2});
  const NpyArray i = NpyArray::of<int64_t>({2}, std::vector<int64_t>{1, 2});
  EXPECT_EQ(error_of(run("Foo", "{}", {&x})), "host op 'Foo' is not supported");
  EXPECT_EQ(error_of(run("Relu", R"({"alpha":1})", {&x})), "Relu: unknown attribute 'alpha'");
  EXPECT_EQ(error_of(run("LeakyRelu", R"({"alpha":"big"})", {&x})),
            "LeakyRelu: attribute alpha: not a number");
  EXPECT_EQ(error_of(run("Pad", R"({"mode":255,"_opset":11})", {&x})),
            "Pad: attribute mode is not a string");
  EXPECT_EQ(error_of(run("Transpose", R"({"perm":[1.5]})", {&x})),
            "Transpose: attribute perm is not a list of ints");
  EXPECT_EQ(error_of(run("Cast", "{}", {&x})), "Cast: missing attribute 'to'");
  EXPECT_EQ(error_of(run("Relu", R"({"_opset":19})", {&x})),
            "Relu: opset 19 is outside the supported range 1..18");
  EXPECT_EQ(error_of(run("HardSwish", R"({"_opset":13})", {&x})),
            "HardSwish: opset 13 is outside the supported range 14..18");
  EXPECT_EQ(error_of(run("Sigmoid", "{}", {&i})), "Sigmoid: dtype int64 is not supported");
  EXPECT_EQ(error_of(run("Not", "{}", {&x})), "Not: dtype float32 is not supported");
  // Names starting with '_' are the stack's own annotations and pass through.
  EXPECT_TRUE(run("Relu", R"({"_source":"conv1"})", {&x}));
  // A result over the caller's limit is EFBIG.
  npu::ops::RunOptions small;
  small.max_output_bytes = 4;
  const NpyArray* ins[] = {&x};
  auto big = npu::ops::run("Relu", "{}", ins, 1, small);
  EXPECT_TRUE(big);  // Relu writes in place of a copy of its input: no new allocation
  const NpyArray reps = NpyArray::of<int64_t>({1}, std::vector<int64_t>{4});
  const NpyArray* tile_in[] = {&x, &reps};
  auto tiled = npu::ops::run("Tile", "{}", tile_in, 1, small);
  ASSERT_FALSE(tiled);
  EXPECT_EQ(tiled.error().code, EFBIG);
  EXPECT_THAT(tiled.error().message, HasSubstr("Tile: output shape [8] is too large"));
}

TEST(OpRegistry, LegacyBroadcastAxisBeforeOpset7) {
  // A [2, 3, 2] + B [3] at axis 1: B varies along dim 1 (NumPy alone would align it with dim 2).
  std::vector<float> av(12, 0.0f);
  const NpyArray a = NpyArray::of<float>({2, 3, 2}, av);
  const NpyArray b = NpyArray::of<float>({3}, std::vector<float>{1, 2, 3});
  auto r = run("Add", R"({"broadcast":1,"axis":1,"_opset":6})", {&a, &b});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ((*r)[0].values<float>(), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  EXPECT_THAT(error_of(run("Add", R"({"broadcast":1,"axis":3,"_opset":6})", {&a, &b})),
              HasSubstr("legacy broadcast axis 3 with B of rank 1 does not fit A of rank 3"));
  // From opset 7 on, `axis` is not an attribute of Add.
  EXPECT_EQ(error_of(run("Add", R"({"axis":1,"_opset":7})", {&a, &b})).empty(), false);
}

/// A small input of the first dtype of `s.types` (float32 preferred).
NpyArray sample(const OpSchema& s, std::vector<int64_t> shape) {
  for (DType t : {DType::kFloat32, DType::kBool, DType::kInt8, DType::kInt32}) {
    if (s.types.contains(t)) {
      NpyArray a = NpyArray::zeros(t, std::move(shape));
      if (t == DType::kFloat32) {
        for (float& v : a.view<float>()) v = 0.5f;
      }
      return a;
    }
  }
  ADD_FAILURE() << s.name << ": no sample dtype";
  return {};
}

TEST(OpRegistry, ShapeRulesAgreeWithTheImplementations) {
  size_t checked = 0;
  for (const OpSchema& s : npu::ops::registry()) {
    if (s.shape == ShapeRule::kImpl) continue;
    SCOPED_TRACE(std::string(s.name));
    std::vector<NpyArray> arrays;
    if (s.shape == ShapeRule::kSame) {
      arrays.push_back(sample(s, {2, 3}));
    } else {
      arrays.push_back(sample(s, {2, 1, 3}));
      arrays.push_back(sample(s, {4, 1}));
    }
    std::vector<const NpyArray*> ins;
    std::vector<npu::ops::TensorType> types;
    for (const NpyArray& a : arrays) {
      ins.push_back(&a);
      types.push_back({a.dtype, a.shape});
    }
    // Mod on floats needs fmod=1.
    auto out = run(std::string(s.name), s.attribute("fmod") ? R"({"fmod":1})" : "{}", ins);
    ASSERT_TRUE(out) << out.error().message;
    auto rule = npu::ops::infer_output(s.name, types);
    ASSERT_TRUE(rule) << rule.error().message;
    ASSERT_TRUE(*rule);
    EXPECT_EQ((*rule)->shape, (*out)[0].shape);
    EXPECT_EQ((*rule)->dtype, (*out)[0].dtype);
    ++checked;
  }
  EXPECT_GE(checked, 40u);
  const npu::ops::TensorType a{DType::kFloat32, {2, 3}}, b{DType::kFloat32, {4}};
  const npu::ops::TensorType both[] = {a, b};
  auto bad = npu::ops::infer_output("Add", both);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "Add: shapes [2, 3] and [4] do not broadcast");
  auto impl = npu::ops::infer_output("Conv", both);
  ASSERT_TRUE(impl);
  EXPECT_FALSE(*impl);
}

TEST(OpRegistry, Float64FunctionsComputeInDouble) {
  const NpyArray x = NpyArray::of<double>({2}, std::vector<double>{1.5, 7.0});
  auto e = run("Exp", "{}", {&x});
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ((*e)[0].values<double>()[0], 4.4816890703380645);  // numpy.exp(1.5)
  auto l = run("Log", "{}", {&x});
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ((*l)[0].values<double>()[1], 1.9459101490553132);  // numpy.log(7.0)
  auto s = run("Softplus", "{}", {&x});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ((*s)[0].values<double>()[0], std::log1p(std::exp(1.5)));
}

TEST(OpRegistry, ActivationDefaultsComeFromTheSchema) {
  const NpyArray x = NpyArray::of<float>({1}, std::vector<float>{-2.0f});
  auto leaky = run("LeakyRelu", "{}", {&x});
  ASSERT_TRUE(leaky);
  EXPECT_FLOAT_EQ((*leaky)[0].values<float>()[0], -0.02f);
  auto hs = run("HardSigmoid", "{}", {&x});
  ASSERT_TRUE(hs);
  EXPECT_FLOAT_EQ((*hs)[0].values<float>()[0], 0.1f);  // 0.2 * -2 + 0.5
  auto elu = run("Elu", R"({"alpha":2})", {&x});
  ASSERT_TRUE(elu);
  EXPECT_FLOAT_EQ((*elu)[0].values<float>()[0], 2.0f * std::expm1(-2.0f));
}

TEST(OpRegistry, GeluBothForms) {
  const NpyArray x = NpyArray::of<float>({2}, std::vector<float>{1.0f, -0.5f});
  auto none = run("Gelu", "{}", {&x});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_NEAR((*none)[0].values<float>()[0], 0.8413447f, 1e-6);
  auto tanh = run("Gelu", R"({"approximate":"tanh","_opset":20})", {&x});
  ASSERT_TRUE(tanh) << tanh.error().message;
  EXPECT_NEAR((*tanh)[0].values<float>()[0], 0.8411920f, 1e-6);
  EXPECT_THAT(error_of(run("Gelu", R"({"approximate":"fast"})", {&x})),
              HasSubstr("approximate 'fast' is not 'none' or 'tanh'"));
}

TEST(OpRegistry, ModBothSignConventions) {
  // numpy.mod / numpy.fmod of [-4, 7, 5, 4, -7, 8] by [2, -3, 8, -2, 3, 5].
  const auto i32 = [](std::vector<int32_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    return NpyArray::of<int32_t>({n}, v);
  };
  const NpyArray x = i32({-4, 7, 5, 4, -7, 8}), y = i32({2, -3, 8, -2, 3, 5});
  auto m = run("Mod", "{}", {&x, &y});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ((*m)[0].values<int32_t>(), (std::vector<int32_t>{0, -2, 5, 0, 2, 3}));
  auto f = run("Mod", R"({"fmod":1})", {&x, &y});
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ((*f)[0].values<int32_t>(), (std::vector<int32_t>{0, 1, 5, 0, -1, 3}));
  // Broadcast, INT_MIN mod -1 = 0; an integer divisor 0 is an error (either convention).
  const NpyArray big = i32({std::numeric_limits<int32_t>::min(), 5}), d = i32({-1}), z = i32({0});
  EXPECT_EQ((*run("Mod", "{}", {&big, &d}))[0].values<int32_t>(), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(error_of(run("Mod", "{}", {&big, &z})),
            "Mod: integer division by zero: B has a 0 element");
  const NpyArray y0 = i32({3, 0, 2, 1, 1, 1});
  EXPECT_EQ(error_of(run("Mod", R"({"fmod":1})", {&x, &y0})),
            "Mod: integer division by zero: B has a 0 element");
  // Floats need fmod=1 (C's fmod: the dividend's sign).
  const NpyArray fx = NpyArray::of<float>({2}, std::vector<float>{-4.5f, 7.5f});
  const NpyArray fy = NpyArray::of<float>({1}, std::vector<float>{2.0f});
  EXPECT_EQ(error_of(run("Mod", "{}", {&fx, &fy})),
            "Mod: fmod must be 1 for floating-point inputs");
  auto ff = run("Mod", R"({"fmod":1})", {&fx, &fy});
  ASSERT_TRUE(ff);
  EXPECT_EQ((*ff)[0].values<float>(), (std::vector<float>{-0.5f, 1.5f}));
  EXPECT_THAT(error_of(run("Mod", "{}", {&x, &fy})), HasSubstr("different dtypes"));
}

TEST(OpRegistry, IntegerPowWrapsLikeNumPy) {
  const auto i64 = [](int64_t v) { return NpyArray::of<int64_t>({}, std::vector<int64_t>{v}); };
  const auto pow = [&](int64_t b, int64_t e) {
    const NpyArray x = i64(b), y = i64(e);
    auto r = run("Pow", "{}", {&x, &y});
    EXPECT_TRUE(r) << r.error().message;
    return r ? (*r)[0].values<int64_t>()[0] : 0;
  };
  EXPECT_EQ(pow(3, 65), 7752514261426648835);  // numpy.int64(3) ** 65 (wraps modulo 2^64)
  EXPECT_EQ(pow(1, -1), 1);
  EXPECT_EQ(pow(-1, -3), -1);
  EXPECT_EQ(pow(2, -1), 0);
}

}  // namespace
