// TVM BYOC JSON import (npu/compiler/tvm_import.h): the graphs the example_npu codegen writes,
// in both attribute encodings (native TVM >= 0.24 and legacy <= 0.23, also a legacy graph
// written out by hand), become the same IR; every composite of the table maps onto a registry
// operator; layouts become transposes; missing attributes take Relax's defaults or are
// inferred where exactly one natural assignment fits; and every malformed graph gives one
// line naming the node.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "npu/compiler/tvm_import.h"
#include "npu/ops/registry.h"
#include "tvm_graph.h"

namespace npu::compiler {
namespace {

using testing::TvmGraph;
using json = nlohmann::json;
using I64 = std::vector<int64_t>;

/// Imports both encodings, checks they give the same IR and returns it.
Graph import_both(const TvmGraph& t, const ImportOptions& o = {}) {
  auto native = import_tvm_json_text(t.native(), o, "g.json");
  EXPECT_TRUE(native) << native.error().message;
  auto legacy = import_tvm_json_text(t.legacy(), o, "g.json");
  EXPECT_TRUE(legacy) << legacy.error().message;
  if (!native || !legacy) return {};
  EXPECT_EQ(to_string(*native), to_string(*legacy));
  return std::move(*native);
}

std::vector<std::string> op_types(const Graph& g) {
  std::vector<std::string> ops;
  for (const Node& n : g.nodes) ops.push_back(n.op_type);
  return ops;
}

const Node& only(const Graph& g, const std::string& op) {
  static const Node none;
  for (const Node& n : g.nodes) {
    if (n.op_type == op) return n;
  }
  ADD_FAILURE() << "no " << op << " node";
  return none;
}

TEST(TvmImport, EveryTableRowMapsOntoTheRegistry) {
  std::set<std::string_view> names;
  for (const TvmOpInfo& r : tvm_ops()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    EXPECT_NE(ops::find(r.op), nullptr) << r.name << " -> " << r.op;
    if (!r.activation.empty()) {
      EXPECT_NE(ops::find(r.activation), nullptr) << r.name;
    }
    EXPECT_EQ(find_tvm_op(r.name), &r);
  }
  EXPECT_EQ(find_tvm_op("relax.nn.conv2d"), find_tvm_op("nn.conv2d"));
  EXPECT_EQ(find_tvm_op("jsonruntime.nn.conv2d"), find_tvm_op("nn.conv2d"));
  EXPECT_EQ(find_tvm_op("example_npu.nope"), nullptr);
  // The composites the issue lists (apache/tvm example_npu patterns).
  for (const char* c : {"conv2d_relu_fused",
                        "matmul_relu_fused",
                        "matmul",
                        "dense",
                        "conv1d",
                        "conv2d",
                        "depthwise_conv2d",
                        "max_pool2d",
                        "avg_pool2d",
                        "batch_norm",
                        "softmax",
                        "relu",
                        "gelu",
                        "add",
                        "multiply",
                        "subtract",
                        "divide",
                        "quantize",
                        "dequantize",
                        "relu6",
                        "sigmoid",
                        "tanh"}) {
    EXPECT_NE(find_tvm_op(std::string("example_npu.") + c), nullptr) << c;
  }
}

// docs/tvm.md's kernel table lists every row of the table.
TEST(TvmImport, DocsListEveryKernel) {
  std::ifstream f(std::string(NPU_SOURCE_DIR) + "/docs/tvm.md");
  std::stringstream text;
  text << f.rdbuf();
  ASSERT_FALSE(text.str().empty());
  for (const TvmOpInfo& r : tvm_ops()) {
    EXPECT_NE(text.str().find("`" + std::string(r.name) + "`"), std::string::npos) << r.name;
  }
}

// The tutorial's MatmulReLU after FuseOpsByPattern + MergeCompositeFunctions + RunCodegen.
TEST(TvmImport, MatmulReluBothEncodings) {
  TvmGraph t;
  const int x = t.input("x", {2, 4}), w = t.input("w", {4, 8});
  t.head(t.kernel1("example_npu.matmul_relu_fused", {{x, 0}, {w, 0}}, {2, 8}));
  const Graph g = import_both(t);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"MatMul", "Relu"}));
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.value(g.inputs[0]).name, "x");
  EXPECT_EQ(g.value(g.inputs[1]).name, "w");
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.value(g.outputs[0]).name, "output_0");
  EXPECT_EQ(g.value(g.outputs[0]).static_dims(), (I64{2, 8}));
  EXPECT_EQ(g.value(g.outputs[0]).dtype, DType::kFloat32);
  EXPECT_EQ(g.opsets.at(""), 17);
}

// A legacy graph written out by hand from TVM 0.23's json_node.h / codegen_json.h (the dmlc
// writer), attributes in an order of its own.
TEST(TvmImport, LegacyGraphWrittenByHand) {
  const std::string text = R"({
    "nodes": [
      {"op": "input", "name": "data", "attrs": {"dtype": [["float32"]], "shape": [[[1, 3, 32, 32]]]}},
      {"op": "input", "name": "weight", "attrs": {"shape": [[[16, 3, 3, 3]]], "dtype": [["float32"]]}},
      {"op": "kernel", "name": "example_npu.conv2d_relu_fused", "inputs": [[0, 0, 0], [1, 0, 0]],
       "attrs": {"num_outputs": "1", "shape": [[[1, 16, 30, 30]]], "num_inputs": "2", "dtype": [["float32"]]}}
    ],
    "arg_nodes": [0, 1], "node_row_ptr": [0, 1, 2, 3], "heads": [[2, 0, 0]]})";
  auto g = import_tvm_json_text(text, {}, "conv.json");
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(op_types(*g), (std::vector<std::string>{"Conv", "Relu"}));
  const Node& conv = only(*g, "Conv");
  EXPECT_EQ(conv.attr_ints("kernel_shape"), (I64{3, 3}));
  EXPECT_EQ(conv.attr_ints("strides"), (I64{1, 1}));
  EXPECT_EQ(conv.attr_ints("pads"), (I64{0, 0, 0, 0}));
  EXPECT_EQ(conv.attr_int("group", 0), 1);
  EXPECT_EQ(g->value(g->outputs[0]).static_dims(), (I64{1, 16, 30, 30}));
}

// nn.conv2d as the generic JSONSerializer records it: every attribute, NHWC/HWIO layouts.
TEST(TvmImport, RecordedAttributesAndLayouts) {
  TvmGraph t;
  const int x = t.input("x", {1, 9, 9, 4}), w = t.constant("w", {3, 3, 4, 8});
  t.head(t.kernel1("relax.nn.conv2d", {{x, 0}, {w, 0}}, {1, 8, 5, 5},
                   {{"strides", {2, 2}},
                    {"padding", {1, 1, 1, 1}},
                    {"dilation", {1, 1}},
                    {"groups", 1},
                    {"data_layout", "NHWC"},
                    {"kernel_layout", "HWIO"},
                    {"out_layout", "NCHW"},
                    {"out_dtype", ""}}));
  ImportOptions o;
  o.constant_inputs["w"] = NpyArray::zeros(DType::kFloat32, {3, 3, 4, 8});
  const Graph g = import_both(t, o);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Transpose", "Transpose", "Conv"}));
  EXPECT_EQ(g.nodes[0].attr_ints("perm"), (I64{0, 3, 1, 2}));  // NHWC -> NCHW
  EXPECT_EQ(g.nodes[1].attr_ints("perm"), (I64{3, 2, 0, 1}));  // HWIO -> OIHW
  const Node& conv = only(g, "Conv");
  EXPECT_EQ(conv.attr_ints("strides"), (I64{2, 2}));
  EXPECT_EQ(conv.attr_ints("pads"), (I64{1, 1, 1, 1}));
  EXPECT_FALSE(conv.has_attr("dilations"));
  EXPECT_EQ(g.value(g.outputs[0]).static_dims(), (I64{1, 8, 5, 5}));
}

TEST(TvmImport, ConvInfersStridesPaddingAndGroups) {
  struct Case {
    I64 x, w, y;
    I64 strides, pads;
    int64_t group;
  };
  for (const Case& c :
       {Case{{1, 3, 32, 32}, {16, 3, 3, 3}, {1, 16, 30, 30}, {1, 1}, {0, 0, 0, 0}, 1},
        Case{{1, 3, 32, 32}, {16, 3, 3, 3}, {1, 16, 32, 32}, {1, 1}, {1, 1, 1, 1}, 1},
        Case{{1, 3, 32, 32}, {16, 3, 3, 3}, {1, 16, 16, 16}, {2, 2}, {1, 1, 1, 1}, 1},
        Case{{1, 8, 10, 12}, {8, 1, 3, 3}, {1, 8, 10, 12}, {1, 1}, {1, 1, 1, 1}, 8},
        Case{{1, 8, 10, 10}, {4, 4, 1, 1}, {1, 4, 5, 5}, {2, 2}, {0, 0, 0, 0}, 2}}) {
    TvmGraph t;
    const int x = t.input("x", c.x), w = t.input("w", c.w);
    t.head(t.kernel1("example_npu.depthwise_conv2d", {{x, 0}, {w, 0}}, c.y));
    const Graph g = import_both(t);
    const Node& conv = only(g, "Conv");
    EXPECT_EQ(conv.attr_ints("strides"), c.strides);
    EXPECT_EQ(conv.attr_ints("pads"), c.pads);
    EXPECT_EQ(conv.attr_int("group", 0), c.group);
  }
}

TEST(TvmImport, PoolInfersWindow) {
  struct Case {
    I64 x, y;
    json attrs;
    I64 kernel, strides, pads;
  };
  for (const Case& c :
       {Case{{1, 16, 32, 32}, {1, 16, 16, 16}, json::object(), {2, 2}, {2, 2}, {0, 0, 0, 0}},
        Case{{1, 16, 30, 30}, {1, 16, 10, 10}, json::object(), {3, 3}, {3, 3}, {0, 0, 0, 0}},
        Case{{1, 4, 8, 8}, {1, 4, 8, 8}, json::object(), {1, 1}, {1, 1}, {0, 0, 0, 0}},
        Case{{1, 4, 8, 8}, {1, 4, 1, 1}, json::object(), {8, 8}, {8, 8}, {0, 0, 0, 0}},
        Case{{1, 4, 32, 32}, {1, 4, 15, 15}, {{"pool_size", {3, 3}}}, {3, 3}, {2, 2}, {0, 0, 0, 0}},
        Case{{1, 4, 32, 32},
             {1, 4, 16, 16},
             {{"pool_size", {3, 3}}, {"strides", {2, 2}}},
             {3, 3},
             {2, 2},
             {1, 1, 1, 1}}}) {
    TvmGraph t;
    const int x = t.input("x", c.x);
    t.head(t.kernel1("example_npu.max_pool2d", {{x, 0}}, c.y, c.attrs));
    const Graph g = import_both(t);
    const Node& pool = only(g, "MaxPool");
    EXPECT_EQ(pool.attr_ints("kernel_shape"), c.kernel) << c.attrs.dump();
    EXPECT_EQ(pool.attr_ints("strides"), c.strides) << c.attrs.dump();
    EXPECT_EQ(pool.attr_ints("pads"), c.pads) << c.attrs.dump();
  }
}

// batch_norm returns (result, moving_mean, moving_var): three entries through node_row_ptr;
// the channel axis (here NHWC's 3, inferred from gamma) moves to ONNX's axis 1 and back.
TEST(TvmImport, BatchNormMultiOutputAndAxis) {
  TvmGraph t;
  const int x = t.input("x", {1, 5, 6, 4});
  const int bn =
      t.batch_norm("example_npu.batch_norm", x, {1, 5, 6, 4}, 4, {"gamma", "beta", "mean", "var"});
  const int relu = t.kernel1("example_npu.relu", {{bn, 0}}, {1, 5, 6, 4});
  t.head(relu);
  t.head(bn, 2);
  ImportOptions o;
  for (const char* name : {"gamma", "beta", "mean", "var"}) {
    o.constant_inputs[name] = NpyArray::of<float>({4}, std::vector<float>{1, 2, 3, 4});
  }
  const Graph g = import_both(t, o);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Transpose", "BatchNormalization", "Transpose",
                                                   "Relu", "Identity"}));
  EXPECT_EQ(g.nodes[0].attr_ints("perm"), (I64{0, 3, 1, 2}));
  EXPECT_EQ(g.nodes[2].attr_ints("perm"), (I64{0, 2, 3, 1}));
  EXPECT_FLOAT_EQ(g.nodes[1].attr_float("epsilon", 0), 1e-5f);
  ASSERT_EQ(g.outputs.size(), 2u);
  EXPECT_EQ(g.value(g.outputs[1]).name, "output_1");
  EXPECT_EQ(g.nodes[4].inputs[0], g.find_value("var"));
}

TEST(TvmImport, QuantizeZeroPointsAndAxes) {
  TvmGraph t;
  const int x = t.input("x", {2, 3});
  const int s = t.constant("s", {3}), z = t.constant("z", {3}, "int32");
  const int q = t.kernel1("example_npu.quantize", {{x, 0}, {s, 0}, {z, 0}}, {2, 3}, {}, "int8");
  const int s1 = t.constant("s1", {1}), z1 = t.constant("z1", {}, "int8");
  t.head(t.kernel1("example_npu.dequantize", {{q, 0}, {s1, 0}, {z1, 0}}, {2, 3}));
  ImportOptions o;
  o.constant_inputs["s"] = NpyArray::of<float>({3}, std::vector<float>{0.1f, 0.2f, 0.3f});
  o.constant_inputs["z"] = NpyArray::of<int32_t>({3}, std::vector<int32_t>{-1, 0, 1});
  o.constant_inputs["s1"] = NpyArray::of<float>({1}, std::vector<float>{0.5f});
  o.constant_inputs["z1"] = NpyArray::of<int8_t>({}, std::vector<int8_t>{2});
  const Graph g = import_both(t, o);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"QuantizeLinear", "DequantizeLinear"}));
  const Node& qn = only(g, "QuantizeLinear");
  EXPECT_EQ(qn.attr_int("axis", 0), 1);  // Relax's -1 of a rank-2 input
  const NpyArray* zp = g.constant(qn.input(2));
  ASSERT_NE(zp, nullptr);
  EXPECT_EQ(zp->dtype, DType::kInt8);
  EXPECT_EQ(zp->values<int8_t>(), (std::vector<int8_t>{-1, 0, 1}));
  const NpyArray* scale = g.constant(only(g, "DequantizeLinear").input(1));
  ASSERT_NE(scale, nullptr);
  EXPECT_TRUE(scale->shape.empty());  // a one-value scale is per tensor
  EXPECT_EQ(g.value(g.outputs[0]).dtype, DType::kFloat32);
}

TEST(TvmImport, ActivationsAndElementwise) {
  TvmGraph t;
  const int x = t.input("x", {2, 8}), y = t.input("y", {8});
  int v = t.kernel1("example_npu.relu6", {{x, 0}}, {2, 8});
  v = t.kernel1("example_npu.gelu", {{v, 0}}, {2, 8});
  v = t.kernel1("relax.nn.gelu_tanh", {{v, 0}}, {2, 8});
  v = t.kernel1("relax.nn.leakyrelu", {{v, 0}}, {2, 8}, {{"alpha", 0.2}});
  v = t.kernel1("example_npu.sigmoid", {{v, 0}}, {2, 8});
  v = t.kernel1("example_npu.add", {{v, 0}, {y, 0}}, {2, 8});
  v = t.kernel1("example_npu.divide", {{v, 0}, {y, 0}}, {2, 8});
  t.head(t.kernel1("example_npu.softmax", {{v, 0}}, {2, 8}));
  const Graph g = import_both(t);
  EXPECT_EQ(op_types(g), (std::vector<std::string>{"Clip", "Gelu", "Gelu", "LeakyRelu", "Sigmoid",
                                                   "Add", "Div", "Softmax"}));
  EXPECT_EQ(g.nodes[1].opset, 20);  // the registry's Gelu
  EXPECT_EQ(g.nodes[1].attr_string("approximate"), "none");
  EXPECT_EQ(g.nodes[2].attr_string("approximate"), "tanh");
  EXPECT_FLOAT_EQ(g.nodes[3].attr_float("alpha", 0), 0.2f);
  EXPECT_EQ(g.nodes[7].attr_int("axis", 0), -1);
  EXPECT_EQ(format::to_floats(*g.constant(g.nodes[0].input(2))), (std::vector<float>{6}));
}

TEST(TvmImport, ParamsBindInputsAsConstants) {
  TvmGraph t;
  const int x = t.input("x", {2, 4}), w = t.input("w", {4, 8});
  t.head(t.kernel1("example_npu.matmul", {{x, 0}, {w, 0}}, {2, 8}));
  ImportOptions o;
  o.constant_inputs["w"] = NpyArray::zeros(DType::kFloat32, {4, 8});
  const Graph g = import_both(t, o);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_TRUE(g.value(g.find_value("w")).is_constant());
}

// ---- errors: one line naming the node -------------------------------------------------------

std::string error_of(const std::string& text, const ImportOptions& o = {}) {
  auto g = import_tvm_json_text(text, o, "g.json");
  EXPECT_FALSE(g) << text;
  if (g) return {};
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos) << g.error().message;
  return g.error().message;
}

TvmGraph matmul_graph(const std::string& kernel = "example_npu.matmul", I64 out = {2, 8}) {
  TvmGraph t;
  const int x = t.input("x", {2, 4}), w = t.input("w", {4, 8});
  t.head(t.kernel1(kernel, {{x, 0}, {w, 0}}, out));
  return t;
}

TEST(TvmImport, ErrorsAreOneLine) {
  EXPECT_EQ(error_of(matmul_graph("example_npu.foo").native()),
            "g.json: node 2 (example_npu.foo): unknown kernel (not an example_npu composite or a "
            "Relax operator of the table, docs/tvm.md)");
  EXPECT_EQ(error_of(matmul_graph("example_npu.matmul", {2, 9}).native()),
            "g.json: node 2 (example_npu.matmul): output 0: the recorded shape [2, 9] does not "
            "match the operator's [2, 8]");
  EXPECT_EQ(error_of("{\"nodes\": [}"),
            "g.json: not JSON: [json.exception.parse_error.101] parse error at line 1, column 12: "
            "syntax error while parsing value - unexpected '}'; expected '[', '{', or a literal");

  json doc = matmul_graph().document();
  json bad = doc;
  bad["nodes"][2]["inputs"][1] = {7, 0, 0};
  EXPECT_EQ(error_of(bad.dump()),
            "g.json: node 2 (example_npu.matmul): input 1: entry [7, 0] names no node (the graph "
            "has 3)");
  bad = doc;
  bad["nodes"][2]["inputs"][1] = {1, 1, 0};
  EXPECT_EQ(error_of(bad.dump()),
            "g.json: node 2 (example_npu.matmul): input 1: entry [1, 1] reads output 1 of input "
            "node 1 'w', which has 1");
  bad = doc;
  bad["heads"] = {{3, 0, 0}};
  EXPECT_EQ(error_of(bad.dump()), "g.json: head 0: entry [3, 0] names no node (the graph has 3)");

  TvmGraph cyc;
  const int x = cyc.input("x", {4});
  cyc.kernel1("example_npu.relu", {{2, 0}}, {4});
  cyc.kernel1("example_npu.relu", {{1, 0}, {x, 0}}, {4});
  cyc.head(2);
  bad = cyc.document();
  bad["nodes"][2]["inputs"] = {{1, 0, 0}};
  bad["nodes"][2]["attrs"]["num_inputs"] = 1;
  EXPECT_EQ(error_of(bad.dump()), "g.json: node 1 (example_npu.relu) is on a cycle");

  bad = doc;
  bad["node_row_ptr"] = {0, 1, 2, 4};
  EXPECT_EQ(error_of(bad.dump()),
            "g.json: node_row_ptr does not match the nodes' output counts (it must start at 0 "
            "and add each node's outputs)");
  bad = doc;
  bad["arg_nodes"] = {0};
  EXPECT_EQ(error_of(bad.dump()), "g.json: input node 1 'w' is not listed in arg_nodes");
  bad = doc;
  bad["graph"] = 1;
  EXPECT_EQ(error_of(bad.dump()), "g.json: not a TVM JSON graph: unexpected key 'graph' (1)");
  bad = doc;
  bad["nodes"][2]["attrs"]["num_inputs"] = 3;
  EXPECT_EQ(error_of(bad.dump()),
            "g.json: node 2 (example_npu.matmul): num_inputs is 3 but it lists 2");
  bad = doc;
  bad["nodes"][2]["attrs"]["transpose_b"] = 1;
  EXPECT_EQ(error_of(bad.dump()),
            "g.json: node 2 (example_npu.matmul): unknown attribute 'transpose_b'");
  bad = doc;
  bad["nodes"][2]["attrs"]["out_dtype"] = 3;
  EXPECT_EQ(error_of(bad.dump()),
            "g.json: node 2 (example_npu.matmul): attribute 'out_dtype': expected string, got 3");
  bad = doc;
  bad["nodes"][2]["attrs"]["out_dtype"] = "int32";
  EXPECT_EQ(error_of(bad.dump()),
            "g.json: node 2 (example_npu.matmul): out_dtype int32 differs from the input's "
            "float32 (mixed-precision kernels are not supported)");
  bad = doc;
  bad["nodes"][0]["attrs"]["dtype"] = {"bfloat16"};
  EXPECT_EQ(error_of(bad.dump()), "g.json: input node 0 'x': unsupported element type 'bfloat16'");
  bad = doc;
  bad["nodes"][0]["attrs"]["shape"] = {{-1, 4}};
  EXPECT_EQ(error_of(bad.dump()),
            "g.json: input node 0 'x': dim 0 is dynamic; give the input's shape");
}

TEST(TvmImport, ParamErrors) {
  TvmGraph t;
  const int x = t.input("x", {2, 4}), w = t.constant("w", {4, 8});
  t.head(t.kernel1("example_npu.matmul", {{x, 0}, {w, 0}}, {2, 8}));
  EXPECT_EQ(error_of(t.native()), "g.json: const node 1 'w' has no value in the params");
  ImportOptions o;
  o.constant_inputs["w"] = NpyArray::zeros(DType::kFloat32, {4, 9});
  EXPECT_EQ(error_of(t.native(), o),
            "g.json: params 'w' (const node 1 'w'): shape [4, 9] but the graph records [4, 8]");
  o.constant_inputs["w"] = NpyArray::zeros(DType::kFloat64, {4, 8});
  EXPECT_EQ(error_of(t.native(), o),
            "g.json: params 'w' (const node 1 'w'): float64 array for a node of type float32");
  o.constant_inputs["w"] = NpyArray::zeros(DType::kFloat32, {4, 8});
  o.constant_inputs["bias"] = NpyArray::zeros(DType::kFloat32, {8});
  EXPECT_EQ(error_of(t.native(), o), "g.json: params: 'bias' is neither a const nor an input node");
}

TEST(TvmImport, UninferableAttributesNameTheNode) {
  TvmGraph pool;
  const int x = pool.input("x", {1, 4, 100, 100});
  pool.head(pool.kernel1("example_npu.avg_pool2d", {{x, 0}}, {1, 4, 3, 3}));
  EXPECT_EQ(error_of(pool.native()),
            "g.json: node 1 (example_npu.avg_pool2d): attributes 'pool_size', 'strides', "
            "'padding' are missing and the shapes do not determine them (input [100, 100], "
            "output [3, 3]): no natural assignment fits spatial axis 0");

  TvmGraph bn;
  const int y = bn.input("y", {1, 4, 4, 4});
  bn.head(bn.batch_norm("example_npu.batch_norm", y, {1, 4, 4, 4}, 4, {"g", "b", "m", "v"},
                        /*as_inputs=*/true));
  EXPECT_EQ(error_of(bn.native()),
            "g.json: node 5 (example_npu.batch_norm): attribute 'axis' is missing and the shapes "
            "do not determine it (input [1, 4, 4, 4], 4 channels: 3 axes fit)");

  TvmGraph conv;
  const int cx = conv.input("x", {1, 3, 8, 8}), cw = conv.input("w", {4, 3, 3, 3});
  conv.head(conv.kernel1("example_npu.conv2d", {{cx, 0}, {cw, 0}}, {1, 4, 3, 3}));
  EXPECT_EQ(error_of(conv.native()),
            "g.json: node 2 (example_npu.conv2d): attributes 'strides', 'padding' are missing "
            "and the shapes do not determine them (input [8, 8], output [3, 3]): 2 assignments "
            "fit spatial axis 0");

  TvmGraph recorded;
  const int rx = recorded.input("x", {1, 3, 8, 8}), rw = recorded.input("w", {4, 3, 3, 3});
  recorded.head(recorded.kernel1("nn.conv2d", {{rx, 0}, {rw, 0}}, {1, 4, 4, 4},
                                 {{"strides", {1, 1}}, {"padding", {0, 0, 0, 0}}}));
  EXPECT_EQ(error_of(recorded.native()),
            "g.json: node 2 (nn.conv2d): the attributes do not give the recorded output shape "
            "(input [8, 8], output [4, 4])");

  TvmGraph train;
  const int tx = train.input("x", {1, 4, 2, 2});
  train.head(train.batch_norm("nn.batch_norm", tx, {1, 4, 2, 2}, 4, {"g", "b", "m", "v"},
                              /*as_inputs=*/true, {{"axis", 1}, {"training", true}}));
  EXPECT_EQ(error_of(train.native()),
            "g.json: node 5 (nn.batch_norm): training-mode batch_norm is not supported (export "
            "the model for inference)");
}

// Hostile graphs: byte-level damage of a valid graph and type-confused values anywhere in
// its JSON tree never crash the importer, and every refusal is one line.
TEST(TvmImport, DamagedGraphsNeverCrash) {
  TvmGraph t;
  const int x = t.input("x", {1, 4, 8, 8}), w = t.constant("w", {4, 4, 3, 3});
  const int c = t.kernel1("relax.nn.conv2d", {{x, 0}, {w, 0}}, {1, 4, 8, 8},
                          {{"padding", {1, 1}}, {"data_layout", "NCHW"}});
  const int p = t.kernel1("example_npu.max_pool2d", {{c, 0}}, {1, 4, 4, 4});
  const int b = t.kernel("example_npu.batch_norm", {{p, 0}, {w, 0}, {w, 0}, {w, 0}, {w, 0}},
                         {{1, 4, 4, 4}, {4}, {4}});
  t.head(b);
  t.head(b, 2);
  ImportOptions o;
  o.constant_inputs["w"] = NpyArray::zeros(DType::kFloat32, {4, 4, 3, 3});
  std::mt19937 rng(42);
  auto check = [&](const std::string& text) {
    auto g = import_tvm_json_text(text, o, "g.json");
    if (!g) {
      EXPECT_EQ(g.error().message.find('\n'), std::string::npos) << g.error().message;
    }
  };
  for (const std::string& base : {t.native(), t.legacy()}) {
    for (int i = 0; i < 300; ++i) {
      std::string s = base;
      for (int k = 0; k < 3; ++k) {
        const size_t at = rng() % s.size();
        switch (rng() % 3) {
          case 0:
            s[at] = static_cast<char>(rng() % 128);
            break;
          case 1:
            s.erase(at, 1 + rng() % 8);
            break;
          default:
            s.insert(at, 1, "[]{},:\"0123456789-e"[rng() % 18]);
            break;
        }
      }
      check(s);
    }
  }
  const std::vector<json> values = {
      json(),         json(-1),  json(0),       json(int64_t{1} << 62),       json(1e300),
      json("x"),      json(""),  json::array(), json::array({json::array()}), json::array({-5, 3}),
      json::object(), json(true)};
  const json doc = json::parse(t.native());
  for (int i = 0; i < 600; ++i) {
    json d = doc;
    json* v = &d;  // walk to a random place, replace it
    for (int depth = 0; depth < 6 && (v->is_object() || v->is_array()) && !v->empty(); ++depth) {
      auto it = v->begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % v->size()));
      v = &*it;
      if (rng() % 4 == 0) break;
    }
    *v = values[rng() % values.size()];
    check(d.dump());
  }
}

}  // namespace
}  // namespace npu::compiler
