// The pass manager and the graph-cleanup passes: constant folding (shape subgraphs, through
// the operator library), identity removal, shape re-inference, verifier and --print-after.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "npu/compiler/pass_manager.h"
#include "run_passes.h"

namespace npu::compiler {
namespace {

using testing::count_ops;
using testing::dims_of;
using testing::ModelBuilder;

using testing::run_passes;

// x -> Shape -> Gather(0) -> Unsqueeze -> Concat(.., [-1]) -> Reshape(x, ..): PyTorch's flatten.
ModelBuilder flatten_chain(std::variant<int64_t, std::string> batch) {
  ModelBuilder b;
  b.input("x", {batch, int64_t{3}, int64_t{4}, int64_t{4}});
  b.node("Shape", {"x"}, {"s"}, "shape");
  auto* idx = b.graph().add_initializer();
  idx->set_name("zero");
  idx->set_data_type(onnx::TensorProto::INT64);
  idx->add_int64_data(0);  // a scalar
  b.node("Gather", {"s", "zero"}, {"n"}, "gather");
  b.init_i64("axes0", {1}, {0});
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"}, "unsqueeze");
  b.init_i64("minus1", {1}, {-1});
  b.node("Concat", {"n1", "minus1"}, {"target"}, "concat");
  ModelBuilder::attr(*b.graph().mutable_node(3), "axis", int64_t{0});
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  b.output("y");
  return b;
}

TEST(FoldConstants, ShapeGatherUnsqueezeConcatReshapeChain) {
  auto g = flatten_chain(int64_t{2}).import();
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_EQ(g->nodes.size(), 5u);
  ASSERT_TRUE(run_passes(*g, {"fold-constants", "infer-shapes"}));
  ASSERT_EQ(g->nodes.size(), 1u) << to_string(*g);
  EXPECT_EQ(g->nodes[0].op_type, "Reshape");
  const NpyArray* target = g->constant(g->nodes[0].input(1));
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(format::to_ints(*target), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(dims_of(*g, "y"), (std::vector<int64_t>{2, 48}));
}

TEST(FoldConstants, SymbolicBatchBlocksShapeUntilBound) {
  auto unbound = flatten_chain(std::string("N")).import();
  ASSERT_TRUE(unbound) << unbound.error().message;
  ASSERT_TRUE(run_passes(*unbound, {"fold-constants"}));
  EXPECT_EQ(count_ops(*unbound, "Shape"), 1u);  // N is not known

  ImportOptions opts;
  opts.input_shapes["x"] = {7, 3, 4, 4};
  auto bound = flatten_chain(std::string("N")).import(opts);
  ASSERT_TRUE(bound) << bound.error().message;
  ASSERT_TRUE(run_passes(*bound, {"fold-constants", "infer-shapes"}));
  EXPECT_EQ(bound->nodes.size(), 1u);
  EXPECT_EQ(dims_of(*bound, "y"), (std::vector<int64_t>{7, 48}));
}

// The sizes of a second Resize come from the Shape of the first Resize's output, which is
// only known once the first sizes are folded and shapes inferred (torchvision's LR-ASPP head):
// fold-constants alone folds both chains.
TEST(FoldConstants, ShapeAfterAResizeFoldsInALaterRound) {
  ModelBuilder b;
  b.input("x", {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{4}});
  b.node("Relu", {"x"}, {"a"});
  b.init_i64("st", {1}, {0});
  b.init_i64("en", {1}, {2});
  b.init_i64("ax", {1}, {0});
  b.init_i64("hw1", {2}, {8, 8});
  b.init_i64("hw2", {2}, {16, 16});
  const auto resize = [&](const std::string& in, const std::string& hw, const std::string& out) {
    b.node("Shape", {in}, {in + "_shape"});
    b.node("Slice", {in + "_shape", "st", "en", "ax"}, {in + "_nc"});
    auto& cat = b.node("Concat", {in + "_nc", hw}, {in + "_sizes"});
    ModelBuilder::attr(cat, "axis", int64_t{0});
    auto& r = b.node("Resize", {in, "", "", in + "_sizes"}, {out});
    ModelBuilder::attr(r, "mode", std::string("linear"));
  };
  resize("a", "hw1", "r");
  b.node("Relu", {"r"}, {"c"});
  resize("c", "hw2", "y");
  b.output("y");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(run_passes(*g, {"fold-constants"}));
  EXPECT_EQ(count_ops(*g, "Shape"), 0u) << to_string(*g);
  EXPECT_EQ(count_ops(*g, "Concat"), 0u) << to_string(*g);
  ASSERT_EQ(count_ops(*g, "Resize"), 2u);
  for (const Node& n : g->nodes) {
    if (n.op_type != "Resize") continue;
    const NpyArray* sizes = g->constant(n.input(3));
    ASSERT_NE(sizes, nullptr) << n.label();
  }
  ASSERT_TRUE(run_passes(*g, {"infer-shapes"}));
  EXPECT_EQ(dims_of(*g, "y"), (std::vector<int64_t>{1, 2, 16, 16}));
}

TEST(FoldConstants, SliceCastRangeAndArithmetic) {
  ModelBuilder b;
  b.input("x", {int64_t{2}, int64_t{6}});
  b.init_i64("v", {4}, {10, 20, 30, 40});
  b.init_i64("st", {1}, {1});
  b.init_i64("en", {1}, {3});
  b.node("Slice", {"v", "st", "en"}, {"sl"}, "slice");  // [20, 30]
  b.init_i64("two", {}, {2});
  b.node("Div", {"sl", "two"}, {"half"}, "div");         // [10, 15]
  auto& cast = b.node("Cast", {"half"}, {"f"}, "cast");  // float
  ModelBuilder::attr(cast, "to", int64_t{onnx::TensorProto::FLOAT});
  b.output("f");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(run_passes(*g, {"fold-constants"}));
  EXPECT_TRUE(g->nodes.empty());
  const NpyArray* f = g->constant(g->outputs[0]);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->dtype, DType::kFloat32);
  EXPECT_EQ(format::to_floats(*f), (std::vector<float>{10, 15}));
}

/// A graph computing `op_type` on constants a and b (b omitted when null), output "y".
Graph constant_graph(const std::string& op_type, const NpyArray& a, const NpyArray* b,
                     std::map<std::string, AttrValue> attrs = {}) {
  Graph g;
  g.opsets[""] = 17;
  Node n;
  n.name = "b";
  n.op_type = op_type;
  n.opset = 17;
  n.attrs = std::move(attrs);
  n.inputs.push_back(g.add_constant("a", a));
  if (b) n.inputs.push_back(g.add_constant("b", *b));
  Value y;
  y.name = "y";
  y.dtype = a.dtype;
  n.outputs.push_back(g.add_value(std::move(y)));
  g.outputs = n.outputs;
  g.nodes.push_back(std::move(n));
  return g;
}

TEST(FoldConstants, ComputesWithTheOperatorLibrary) {
  const float av[] = {1, 2, 3, 4, 5, 6};
  const float bv[] = {10, 100};
  const NpyArray a = NpyArray::of<float>({3, 2}, av);
  const NpyArray b = NpyArray::of<float>({2}, bv);
  Graph mul = constant_graph("Mul", a, &b);
  ASSERT_TRUE(run_passes(mul, {"fold-constants"}));
  ASSERT_TRUE(mul.nodes.empty());
  EXPECT_EQ(format::to_floats(*mul.constant(mul.outputs[0])),
            (std::vector<float>{10, 200, 30, 400, 50, 600}));

  Graph tr = constant_graph("Transpose", a, nullptr, {{"perm", std::vector<int64_t>{1, 0}}});
  ASSERT_TRUE(run_passes(tr, {"fold-constants"}));
  const NpyArray* t = tr.constant(tr.outputs[0]);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(format::to_floats(*t), (std::vector<float>{1, 3, 5, 2, 4, 6}));

  // An invalid constant subgraph fails the compilation, naming the node.
  const NpyArray c = NpyArray::of<float>({4}, std::vector<float>{1, 2, 3, 4});
  Graph bad = constant_graph("Add", a, &c);
  auto e = run_passes(bad, {"fold-constants"});
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message.find("node 'b' (Add): Add: shapes [3, 2] and [4] do not broadcast"),
            std::string::npos)
      << e.error().message;
}

TEST(RemoveIdentities, IdentityDropoutAndNoOpReshape) {
  ModelBuilder b;
  b.input("x", {int64_t{2}, int64_t{3}});
  b.node("Identity", {"x"}, {"a"}, "id");
  b.node("Relu", {"a"}, {"r"}, "relu");
  b.node("Dropout", {"r"}, {"d"}, "drop");
  b.init_i64("same", {2}, {2, 3});
  b.node("Reshape", {"d", "same"}, {"e"}, "reshape");
  b.node("Identity", {"e"}, {"out"}, "id_out");  // its output is a graph output
  b.output("out");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(run_passes(*g, {"remove-identities"}));
  ASSERT_EQ(g->nodes.size(), 1u) << to_string(*g);
  EXPECT_EQ(g->nodes[0].op_type, "Relu");
  EXPECT_EQ(g->nodes[0].input(0), g->inputs[0]);
  // The model's output keeps its name.
  EXPECT_EQ(g->value(g->outputs[0]).name, "out");
  EXPECT_EQ(g->nodes[0].outputs[0], g->outputs[0]);
}

TEST(RemoveIdentities, KeepsIdentityFromInputToOutput) {
  ModelBuilder b;
  b.input("x", {int64_t{2}});
  b.node("Identity", {"x"}, {"y"}, "id");
  b.output("y");
  auto g = b.import();
  ASSERT_TRUE(g);
  ASSERT_TRUE(run_passes(*g, {"remove-identities"}));
  EXPECT_EQ(g->nodes.size(), 1u);
}

TEST(PassManager, RegistryOrderPrintAfterAndUnknownPass) {
  const auto& passes = registered_passes();
  ASSERT_GE(passes.size(), 8u);
  EXPECT_EQ(passes.front().name, "fold-constants");
  EXPECT_EQ(PassManager::default_pipeline().pass_names().size(), passes.size());

  auto g = flatten_chain(int64_t{1}).import();
  ASSERT_TRUE(g);
  PassOptions opts;
  opts.print_after = {"fold-constants"};
  std::vector<std::string> dumps;
  opts.printer = [&](std::string_view pass, const std::string& dump) {
    dumps.push_back(std::string(pass) + "\n" + dump);
  };
  ASSERT_TRUE(PassManager::default_pipeline().run(*g, opts));
  ASSERT_EQ(dumps.size(), 1u);
  EXPECT_NE(dumps[0].find("Reshape(%x, %target)"), std::string::npos) << dumps[0];

  PassOptions bad;
  bad.disable = {"no-such-pass"};
  auto r = PassManager::default_pipeline().run(*g, bad);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "unknown pass 'no-such-pass'");
}

TEST(GraphVerify, CatchesUseBeforeDefinition) {
  ModelBuilder b;
  b.input("x", {int64_t{2}});
  b.node("Relu", {"x"}, {"a"}, "r1");
  b.node("Neg", {"a"}, {"y"}, "n1");
  b.output("y");
  auto g = b.import();
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->verify());
  std::swap(g->nodes[0], g->nodes[1]);
  auto v = g->verify();
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().message, "node 'n1' (Neg): input 'a' is not defined before use");
  ASSERT_TRUE(g->topological_sort());
  EXPECT_TRUE(g->verify());
}

}  // namespace
}  // namespace npu::compiler
