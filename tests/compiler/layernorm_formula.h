// Test helper: LayerNorm written as its formula, the way exporters before opset 17 write it
// (torch.onnx at opsets 11-16 for nn.LayerNorm):
//   mean = ReduceMean(x)  d = Sub(x, mean)  sq = Pow(d, 2) or Mul(d, d)  var = ReduceMean(sq)
//   ve = Add(var, eps)  s = Sqrt(ve)  n = Div(d, s)  g = Mul(n, gamma)  y = Add(g, beta)
// with the options below (which axes, keepdims, the optional affine part). ReduceMean takes
// its axes as an attribute: the importer (ONNX 1.12) reads models up to opset 17, so the
// opset-18 form (axes as an input) is made on the imported graph (fusion_test.cpp). Used by
// the fuse-layernorm tests of fusion_test.cpp (the rewritten graph) and lower_test.cpp
// (device vs host numbers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_builder.h"

namespace npu::compiler::testing {

struct LayerNormFormula {
  int64_t opset = 13;                  // from 18 ReduceMean takes its axes as an input
  std::vector<int64_t> dims{2, 3, 8};  // x
  std::vector<int64_t> axes{-1};
  int64_t keepdims = 1;
  bool mul_square = false;     // Mul(d, d) instead of Pow(d, 2)
  std::vector<int64_t> gamma;  // shape of gamma; empty: no Mul
  std::vector<int64_t> beta;   // shape of beta; empty: no Add
  float eps = 1e-5f;
  bool symbolic_batch = false;  // x's dim 0 is the symbol N
  bool constant_nodes = false;  // 2 and eps as Constant nodes (as torch.onnx writes them)
};

/// A deterministic non-trivial constant of `n` values (gamma around 1, beta around 0).
inline std::vector<float> formula_values(int64_t n, float base, float step) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = base + step * static_cast<float>(i % 7);
  return v;
}

/// A model with input "x" and output "y" computing `f`.
inline ModelBuilder layernorm_formula(const LayerNormFormula& f) {
  ModelBuilder b(f.opset);
  std::vector<DimSpec> x_dims(f.dims.begin(), f.dims.end());
  if (f.symbolic_batch) x_dims[0] = std::string("N");
  b.input("x", x_dims);
  auto scalar = [&](const std::string& name, float v) {
    if (!f.constant_nodes) {
      b.init_f(name, {}, {v});
      return;
    }
    auto& c = b.node("Constant", {}, {name});
    auto* a = c.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_float_data(v);
  };
  auto reduce = [&](const std::string& in, const std::string& out) {
    auto& n = b.node("ReduceMean", {in}, {out});
    ModelBuilder::attr(n, "axes", f.axes);
    ModelBuilder::attr(n, "keepdims", f.keepdims);
  };
  reduce("x", "mean");
  b.node("Sub", {"x", "mean"}, {"d"});
  if (f.mul_square) {
    b.node("Mul", {"d", "d"}, {"sq"});
  } else {
    scalar("two", 2.0f);
    b.node("Pow", {"d", "two"}, {"sq"});
  }
  reduce("sq", "var");
  scalar("eps", f.eps);
  b.node("Add", {"var", "eps"}, {"ve"});
  b.node("Sqrt", {"ve"}, {"s"});
  const bool affine = !f.gamma.empty() || !f.beta.empty();
  b.node("Div", {"d", "s"}, {affine ? "n" : "y"});
  auto count = [](const std::vector<int64_t>& d) {
    int64_t n = 1;
    for (int64_t x : d) n *= x;
    return n;
  };
  if (!f.gamma.empty()) {
    b.init_f("gamma", f.gamma, formula_values(count(f.gamma), 0.75f, 0.1f));
    b.node("Mul", {"n", "gamma"}, {f.beta.empty() ? "y" : "g"});
  }
  if (!f.beta.empty()) {
    b.init_f("beta", f.beta, formula_values(count(f.beta), -0.3f, 0.1f));
    b.node("Add", {f.gamma.empty() ? "n" : "g", "beta"}, {"y"});
  }
  b.output("y");
  return b;
}

}  // namespace npu::compiler::testing
