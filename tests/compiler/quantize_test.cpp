// Post-training int8 quantization (npu/compiler/quantize.h): activation parameters from
// ranges, the calibration graph's outputs, and quantize_int8 on a Conv+Relu -> MaxPool ->
// Flatten -> Gemm graph with hand-made ranges (QLinearConv/QLinearMatMul with the expected
// scales, zero points, int8 weights and int32 biases; int8 through MaxPool/Flatten; Quantize/
// DequantizeLinear only at the float boundaries), and what stays float.
#include "npu/compiler/quantize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "model_builder.h"
#include "npu/compiler/pass_manager.h"
#include "random_values.h"

namespace npu::compiler {
namespace {

using testing::count_ops;
using testing::ModelBuilder;

/// The passes compile_graph runs before quantization.
Expected<void> front_passes(Graph& g) {
  PassManager pm;
  for (const PassInfo& p : registered_passes()) {
    pm.add(create_pass(p.name));
    if (p.name == "fuse-activation") break;
  }
  return pm.run(g);
}

const Node* find_node(const Graph& g, const std::string& op) {
  for (const Node& n : g.nodes) {
    if (n.op_type == op) return &n;
  }
  return nullptr;
}

std::vector<float> floats_of(const Graph& g, ValueId v) {
  const NpyArray* t = g.constant(v);
  return t ? format::to_floats(*t) : std::vector<float>{};
}

std::vector<int64_t> ints_of(const Graph& g, ValueId v) {
  const NpyArray* t = g.constant(v);
  return t ? format::to_ints(*t) : std::vector<int64_t>{};
}

TEST(ActivationQParams, WidensToZeroAndRounds) {
  // [-1, 2]: scale 3/255, zero point round(-128 + 85) = -43.
  QuantParams p = activation_qparams({-1.0f, 2.0f});
  EXPECT_FLOAT_EQ(p.scale, 3.0f / 255.0f);
  EXPECT_EQ(p.zero_point, -43);
  // A non-negative range starts at 0: zero point -128, so 0 (a Relu's floor) is exact.
  p = activation_qparams({0.5f, 6.0f});
  EXPECT_FLOAT_EQ(p.scale, 6.0f / 255.0f);
  EXPECT_EQ(p.zero_point, -128);
  // A negative range ends at 0.
  p = activation_qparams({-2.0f, -1.0f});
  EXPECT_FLOAT_EQ(p.scale, 2.0f / 255.0f);
  EXPECT_EQ(p.zero_point, 127);
  // Nothing observed but zeros.
  p = activation_qparams({0.0f, 0.0f});
  EXPECT_FLOAT_EQ(p.scale, 1.0f);
  EXPECT_EQ(p.zero_point, -128);
}

TEST(RangesOf, MinMaxOfFloatArraysOnly) {
  std::map<std::string, format::NpyArray> t;
  t["a"] = format::NpyArray::of<float>({4}, std::vector<float>{0.5f, -2.0f, NAN, 3.0f});
  t["b"] = format::NpyArray::of<int32_t>({2}, std::vector<int32_t>{-7, 9});
  t["c"] = format::NpyArray::of<float>({1}, std::vector<float>{INFINITY});
  const Ranges r = ranges_of(t);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r.at("a").min, -2.0f);
  EXPECT_EQ(r.at("a").max, 3.0f);
}

// x[1,2,4,4] -> Conv(3x3, pad 1, bias) -> Relu -> MaxPool 2x2 -> Flatten -> Gemm(transB, C)
// -> y[1,5].
struct ConvGemm {
  std::vector<float> cw = testing::rnd(3 * 2 * 3 * 3, 1, -0.8f, 0.8f);
  std::vector<float> cb = testing::rnd(3, 2, -0.2f, 0.2f);
  std::vector<float> gw = testing::rnd(5 * 12, 3, -0.3f, 0.3f);
  std::vector<float> gb = testing::rnd(5, 4, -0.5f, 0.5f);

  Graph build(const std::string& activation = "Relu") const {
    ModelBuilder b;
    b.input("x", {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{4}});
    b.init_f("cw", {3, 2, 3, 3}, cw);
    b.init_f("cb", {3}, cb);
    b.init_f("gw", {5, 12}, gw);
    b.init_f("gb", {5}, gb);
    auto& conv = b.node("Conv", {"x", "cw", "cb"}, {"c"}, "conv");
    ModelBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
    b.node(activation, {"c"}, {"r"}, "act");
    auto& pool = b.node("MaxPool", {"r"}, {"p"}, "pool");
    ModelBuilder::attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
    ModelBuilder::attr(pool, "strides", std::vector<int64_t>{2, 2});
    b.node("Flatten", {"p"}, {"f"}, "flatten");
    auto& gemm = b.node("Gemm", {"f", "gw", "gb"}, {"y"}, "gemm");
    ModelBuilder::attr(gemm, "transB", int64_t{1});
    b.output("y", {int64_t{1}, int64_t{5}});
    auto g = b.import();
    EXPECT_TRUE(g) << g.error().message;
    EXPECT_TRUE(front_passes(*g));
    return std::move(*g);
  }
};

TEST(CalibrationGraph, OutputsEveryConvAndGemmTensor) {
  const Graph g = ConvGemm{}.build();
  const Graph c = calibration_graph(g);
  std::vector<std::string> names;
  for (ValueId o : c.outputs) names.push_back(c.value(o).name);
  // The fused conv writes the Relu's output ("r"); the Gemm reads the Flatten's ("f"); the
  // graph input is copied by an Identity (a package cannot list an input as an output).
  EXPECT_EQ(names, (std::vector<std::string>{"y", "x/calibration", "r", "f"}));
  ASSERT_EQ(c.nodes.front().op_type, "Identity");
  EXPECT_EQ(c.value(c.nodes.front().inputs[0]).name, "x");
  EXPECT_EQ(g.outputs.size(), 1u);  // the original is untouched
  EXPECT_EQ(g.nodes.size() + 1, c.nodes.size());
  EXPECT_TRUE(c.verify());

  // The copy's range counts for the input.
  std::map<std::string, format::NpyArray> outs;
  outs["x/calibration"] = format::NpyArray::of<float>({2}, std::vector<float>{-1.0f, 0.5f});
  outs["r"] = format::NpyArray::of<float>({2}, std::vector<float>{0.0f, 3.0f});
  const Ranges r = calibration_ranges(c, outs);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r.at("x").min, -1.0f);
  EXPECT_EQ(r.at("x").max, 0.5f);
  EXPECT_EQ(r.at("r").max, 3.0f);
}

TEST(QuantizeInt8, ConvReluPoolFlattenGemm) {
  const ConvGemm m;
  Graph g = m.build();
  ASSERT_EQ(count_ops(g, "Relu"), 0u);  // fused into the conv
  // The conv's range reaches below 0 (as if calibrated before the Relu): the fused Relu
  // clamps it to [0, 6]. Pool/Flatten have no ranges: they carry the conv's parameters.
  const Ranges ranges = {{"x", {-1.0f, 2.0f}}, {"r", {-0.3f, 6.0f}}, {"y", {-4.0f, 12.0f}}};
  ASSERT_TRUE(quantize_int8(g, ranges));
  ASSERT_TRUE(g.verify());

  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.push_back(n.op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"QuantizeLinear", "QLinearConv", "MaxPool", "Flatten",
                                           "QLinearMatMul", "DequantizeLinear"}));

  // Input: [-1, 2] -> scale 3/255, zero point -43.
  const Node& q = *find_node(g, "QuantizeLinear");
  EXPECT_EQ(g.value(q.inputs[0]).name, "x");
  EXPECT_FLOAT_EQ(floats_of(g, q.inputs[1]).at(0), 3.0f / 255.0f);
  EXPECT_EQ(ints_of(g, q.inputs[2]), std::vector<int64_t>{-43});
  EXPECT_EQ(g.value(q.inputs[2]).dtype, DType::kInt8);

  // QLinearConv: x's parameters, per-channel symmetric weights, y [0, 6] -> zp -128.
  const Node& conv = *find_node(g, "QLinearConv");
  ASSERT_EQ(conv.inputs.size(), 9u);
  EXPECT_EQ(conv.name, "conv");
  EXPECT_FALSE(conv.activation);
  EXPECT_EQ(conv.inputs[0], q.outputs[0]);
  EXPECT_EQ(conv.attr_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  const float xs = floats_of(g, conv.inputs[1]).at(0);
  EXPECT_FLOAT_EQ(xs, 3.0f / 255.0f);
  EXPECT_EQ(ints_of(g, conv.inputs[2]), std::vector<int64_t>{-43});
  const NpyArray& wq = *g.constant(conv.inputs[3]);
  EXPECT_EQ(wq.dtype, DType::kInt8);
  EXPECT_EQ(wq.shape, (std::vector<int64_t>{3, 2, 3, 3}));
  const auto ws = floats_of(g, conv.inputs[4]);
  ASSERT_EQ(ws.size(), 3u);
  EXPECT_EQ(ints_of(g, conv.inputs[5]), (std::vector<int64_t>{0, 0, 0}));
  const auto wqv = format::to_ints(wq);
  for (size_t o = 0; o < 3; ++o) {
    float amax = 0.0f;
    for (size_t i = 0; i < 18; ++i) amax = std::max(amax, std::fabs(m.cw[o * 18 + i]));
    EXPECT_FLOAT_EQ(ws[o], amax / 127.0f);
    int64_t qmax = 0;
    for (size_t i = 0; i < 18; ++i) {
      EXPECT_EQ(wqv[o * 18 + i], std::lrint(m.cw[o * 18 + i] / ws[o])) << o << "," << i;
      qmax = std::max(qmax, std::abs(wqv[o * 18 + i]));
    }
    EXPECT_EQ(qmax, 127);  // the largest weight of each channel maps to +-127
  }
  EXPECT_FLOAT_EQ(floats_of(g, conv.inputs[6]).at(0), 6.0f / 255.0f);
  EXPECT_EQ(ints_of(g, conv.inputs[7]), std::vector<int64_t>{-128});
  const auto cb = ints_of(g, conv.inputs[8]);
  EXPECT_EQ(g.value(conv.inputs[8]).dtype, DType::kInt32);
  ASSERT_EQ(cb.size(), 3u);
  for (size_t o = 0; o < 3; ++o) {
    EXPECT_EQ(cb[o], std::llround(double(m.cb[o]) / (double(xs) * ws[o])));
  }
  const Value& cy = g.value(conv.outputs[0]);
  EXPECT_EQ(cy.dtype, DType::kInt8);
  ASSERT_TRUE(cy.quant);
  EXPECT_EQ(cy.quant->zero_points, std::vector<int64_t>{-128});

  // MaxPool and Flatten run on the int8 tensor with its parameters.
  const Node& pool = *find_node(g, "MaxPool");
  const Node& flat = *find_node(g, "Flatten");
  EXPECT_EQ(pool.inputs[0], conv.outputs[0]);
  EXPECT_EQ(flat.inputs[0], pool.outputs[0]);
  for (const Node* n : {&pool, &flat}) {
    const Value& out = g.value(n->outputs[0]);
    EXPECT_EQ(out.dtype, DType::kInt8) << n->op_type;
    ASSERT_TRUE(out.quant);
    EXPECT_EQ(out.quant->scales, cy.quant->scales);
    EXPECT_EQ(out.quant->zero_points, cy.quant->zero_points);
  }
  EXPECT_EQ(*g.value(flat.outputs[0]).static_dims(), (std::vector<int64_t>{1, 12}));

  // QLinearMatMul: a = the conv's parameters, b = W^T [12,5] per column, y [-4, 12] -> scale
  // 16/255, zp round(-128 + 63.75) = -64, and the 9th input: int32 bias per column.
  const Node& mm = *find_node(g, "QLinearMatMul");
  ASSERT_EQ(mm.inputs.size(), 9u);
  EXPECT_EQ(mm.inputs[0], flat.outputs[0]);
  const float as = floats_of(g, mm.inputs[1]).at(0);
  EXPECT_FLOAT_EQ(as, 6.0f / 255.0f);
  EXPECT_EQ(ints_of(g, mm.inputs[2]), std::vector<int64_t>{-128});
  const NpyArray& bq = *g.constant(mm.inputs[3]);
  EXPECT_EQ(bq.shape, (std::vector<int64_t>{12, 5}));
  const auto bs = floats_of(g, mm.inputs[4]);
  ASSERT_EQ(bs.size(), 5u);
  const auto bqv = format::to_ints(bq);
  for (size_t n = 0; n < 5; ++n) {
    float amax = 0.0f;
    for (size_t k = 0; k < 12; ++k) amax = std::max(amax, std::fabs(m.gw[n * 12 + k]));
    EXPECT_FLOAT_EQ(bs[n], amax / 127.0f);
    for (size_t k = 0; k < 12; ++k) {
      EXPECT_EQ(bqv[k * 5 + n], std::lrint(m.gw[n * 12 + k] / bs[n])) << k << "," << n;
    }
  }
  EXPECT_EQ(ints_of(g, mm.inputs[5]), (std::vector<int64_t>(5, 0)));
  EXPECT_FLOAT_EQ(floats_of(g, mm.inputs[6]).at(0), 16.0f / 255.0f);
  EXPECT_EQ(ints_of(g, mm.inputs[7]), std::vector<int64_t>{-64});
  const auto mb = ints_of(g, mm.inputs[8]);
  ASSERT_EQ(mb.size(), 5u);
  for (size_t n = 0; n < 5; ++n) {
    EXPECT_EQ(mb[n], std::llround(double(m.gb[n]) / (double(as) * bs[n])));
  }

  // The graph output keeps its name and is the DequantizeLinear's, with y's parameters.
  const Node& dq = *find_node(g, "DequantizeLinear");
  EXPECT_EQ(dq.inputs[0], mm.outputs[0]);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(dq.outputs[0], g.outputs[0]);
  EXPECT_EQ(g.value(g.outputs[0]).name, "y");
  EXPECT_EQ(g.value(g.outputs[0]).dtype, DType::kFloat32);
  EXPECT_FLOAT_EQ(floats_of(g, dq.inputs[1]).at(0), 16.0f / 255.0f);
  EXPECT_EQ(ints_of(g, dq.inputs[2]), std::vector<int64_t>{-64});

  // The rest of the pipeline places every op on the device.
  PassManager back;
  back.add(create_pass("check-support"));
  back.add(create_pass("choose-layout"));
  ASSERT_TRUE(back.run(g));
  for (const Node& n : g.nodes) {
    EXPECT_EQ(n.placement.target, Target::kDevice) << n.label() << ": " << n.placement.reason;
  }
}

TEST(QuantizeInt8, WhatCannotBeQuantizedStaysFloat) {
  // A fused Sigmoid is not a range: the conv stays float, and so does everything after it
  // (MaxPool/Flatten only carry int8 they are given); the Gemm is quantized between a
  // QuantizeLinear and a DequantizeLinear.
  {
    Graph g = ConvGemm{}.build("Sigmoid");
    const Ranges ranges = {{"x", {-1, 2}}, {"r", {0, 1}}, {"f", {0, 1}}, {"y", {-4, 12}}};
    ASSERT_TRUE(quantize_int8(g, ranges));
    std::vector<std::string> ops;
    for (const Node& n : g.nodes) ops.push_back(n.op_type);
    EXPECT_EQ(ops, (std::vector<std::string>{"Conv", "MaxPool", "Flatten", "QuantizeLinear",
                                             "QLinearMatMul", "DequantizeLinear"}));
    EXPECT_EQ(find_node(g, "Conv")->activation->op_type, "Sigmoid");
    EXPECT_EQ(g.value(find_node(g, "QuantizeLinear")->inputs[0]).name, "f");
  }
  // No range for the conv's output: it stays float; without one for "f" the Gemm does too.
  {
    Graph g = ConvGemm{}.build();
    ASSERT_TRUE(quantize_int8(g, {{"x", {-1, 2}}, {"y", {-4, 12}}}));
    EXPECT_EQ(count_ops(g, "Conv"), 1u);
    EXPECT_EQ(count_ops(g, "Gemm"), 1u);
    EXPECT_EQ(count_ops(g, "QuantizeLinear"), 0u);
    EXPECT_EQ(count_ops(g, "DequantizeLinear"), 0u);
  }
  // A Clip whose bounds exclude 0 cannot be a quantization range.
  {
    ModelBuilder b;
    b.input("x", {int64_t{1}, int64_t{4}});
    b.init_f("w", {4, 3}, testing::rnd(12, 5));
    b.init_f("lo", {}, {0.5f});
    b.init_f("hi", {}, {2.0f});
    b.node("MatMul", {"x", "w"}, {"m"}, "mm");
    b.node("Clip", {"m", "lo", "hi"}, {"y"}, "clip");
    b.output("y", {int64_t{1}, int64_t{3}});
    auto g = b.import();
    ASSERT_TRUE(g) << g.error().message;
    ASSERT_TRUE(front_passes(*g));
    ASSERT_EQ(count_ops(*g, "Clip"), 0u);
    ASSERT_TRUE(quantize_int8(*g, {{"x", {-1, 1}}, {"y", {0.5f, 2}}}));
    EXPECT_EQ(count_ops(*g, "MatMul"), 1u);
    EXPECT_EQ(count_ops(*g, "QLinearMatMul"), 0u);
  }
}

TEST(QuantizeInt8, SharedInputIsQuantizedOnceAndFloatReadersKeepTheFloatTensor) {
  // x feeds two MatMuls; the first's output is also read by a float Softmax and is a graph
  // output: one QuantizeLinear for x, one DequantizeLinear for m1 (kept under its name).
  ModelBuilder b;
  b.input("x", {int64_t{2}, int64_t{4}});
  b.init_f("w1", {4, 3}, testing::rnd(12, 6));
  b.init_f("w2", {4, 3}, testing::rnd(12, 7));
  b.node("MatMul", {"x", "w1"}, {"m1"}, "mm1");
  b.node("MatMul", {"x", "w2"}, {"m2"}, "mm2");
  b.node("Softmax", {"m1"}, {"s"}, "softmax");
  b.output("m1", {int64_t{2}, int64_t{3}});
  b.output("m2", {int64_t{2}, int64_t{3}});
  b.output("s", {int64_t{2}, int64_t{3}});
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(front_passes(*g));
  ASSERT_TRUE(quantize_int8(*g, {{"x", {-1, 1}}, {"m1", {-2, 2}}, {"m2", {-3, 3}}}));
  EXPECT_EQ(count_ops(*g, "QuantizeLinear"), 1u);
  EXPECT_EQ(count_ops(*g, "QLinearMatMul"), 2u);
  EXPECT_EQ(count_ops(*g, "DequantizeLinear"), 2u);
  EXPECT_EQ(count_ops(*g, "Softmax"), 1u);
  const Node& sm = *find_node(*g, "Softmax");
  EXPECT_EQ(g->value(sm.inputs[0]).name, "m1");
  EXPECT_EQ(g->value(sm.inputs[0]).dtype, DType::kFloat32);
  // No bias: QLinearMatMul keeps ONNX's 8 inputs.
  EXPECT_EQ(find_node(*g, "QLinearMatMul")->inputs.size(), 8u);
}

}  // namespace
}  // namespace npu::compiler
