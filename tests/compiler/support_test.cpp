// Support check, partition into device/host segments, the report, and the layout choice.
#include <gtest/gtest.h>

#include "model_builder.h"
#include "npu/compiler/pass_manager.h"
#include "npu/compiler/support.h"

namespace npu::compiler {
namespace {

using testing::ModelBuilder;

// conv+relu -> maxpool -> Pad(reflect, host) -> global avg pool -> flatten -> gemm -> softmax
ModelBuilder mixed_model(std::variant<int64_t, std::string> batch = int64_t{1}) {
  ModelBuilder b;
  b.input("x", {batch, int64_t{3}, int64_t{8}, int64_t{8}});
  b.init_f("w", {4, 3, 3, 3}, std::vector<float>(108, 0.1f));
  b.init_f("b", {4}, {0, 0, 0, 0});
  auto& conv = b.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  ModelBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  auto& pool = b.node("MaxPool", {"r"}, {"p"}, "pool");
  ModelBuilder::attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  ModelBuilder::attr(pool, "strides", std::vector<int64_t>{2, 2});
  b.init_i64("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  auto& pad = b.node("Pad", {"p", "pads"}, {"pp"}, "reflect_pad");
  ModelBuilder::attr(pad, "mode", std::string("reflect"));
  b.node("GlobalAveragePool", {"pp"}, {"gap"}, "gap");
  b.node("Flatten", {"gap"}, {"f"}, "flatten");
  b.init_f("fw", {4, 2}, std::vector<float>(8, 1.0f));
  b.node("Gemm", {"f", "fw"}, {"logits"}, "fc");
  b.node("Softmax", {"logits"}, {"y"}, "softmax");
  b.output("y");
  return b;
}

TEST(Partition, MixedGraphReportAndSegments) {
  auto g = mixed_model().import();
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE(PassManager::default_pipeline().run(*g));
  auto p = partition(*g);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->device_ops, 6u) << to_string(*g);
  EXPECT_EQ(p->host_ops, 1u);
  ASSERT_EQ(p->segments.size(), 3u);
  EXPECT_EQ(p->segments[0].target, Target::kDevice);
  EXPECT_EQ(p->segments[1].target, Target::kHost);
  EXPECT_EQ(p->segments[2].target, Target::kDevice);
  // The host segment reads the pool output and writes the padded tensor.
  ASSERT_EQ(p->segments[1].inputs.size(), 1u);
  EXPECT_EQ(g->value(p->segments[1].inputs[0]).name, "p");
  ASSERT_EQ(p->segments[2].outputs.size(), 1u);
  EXPECT_EQ(g->value(p->segments[2].outputs[0]).name, "y");
  const std::string report = partition_report(*g, *p);
  EXPECT_EQ(report.rfind("6 ops on the NPU, 1 on the host", 0), 0u) << report;
  EXPECT_NE(report.find("node 'reflect_pad' (Pad): reflect padding"), std::string::npos) << report;
}

TEST(Partition, GroupsIndependentHostOpsTogether) {
  // Two branches: device Relu and host Floor on each; a greedy order gives 2 segments.
  ModelBuilder b;
  b.input("x", {int64_t{4}});
  b.node("Floor", {"x"}, {"f1"}, "floor1");
  b.node("Relu", {"x"}, {"r1"}, "relu1");
  b.node("Floor", {"x"}, {"f2"}, "floor2");
  b.node("Relu", {"x"}, {"r2"}, "relu2");
  for (const char* o : {"f1", "r1", "f2", "r2"}) b.output(o);
  auto g = b.import();
  ASSERT_TRUE(g);
  ASSERT_TRUE(PassManager::default_pipeline().run(*g));
  auto p = partition(*g);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->segments.size(), 2u);
  EXPECT_EQ(p->host_ops, 2u);
}

TEST(Support, DynamicShapeAndInt64StayOnHost) {
  auto g = mixed_model(std::string("N")).import();
  ASSERT_TRUE(g);
  ASSERT_TRUE(PassManager::default_pipeline().run(*g));
  EXPECT_EQ(g->nodes[0].placement.target, Target::kHost);
  EXPECT_EQ(g->nodes[0].placement.reason, "dynamic shape [N, 3, 8, 8] of 'x'");

  ModelBuilder b;
  b.input("a", {int64_t{4}}, onnx::TensorProto::INT64);
  b.input("c", {int64_t{4}}, onnx::TensorProto::INT64);
  b.node("Add", {"a", "c"}, {"y"}, "add64");
  b.output("y", onnx::TensorProto::INT64);
  auto g2 = b.import();
  ASSERT_TRUE(g2);
  ASSERT_TRUE(PassManager::default_pipeline().run(*g2));
  EXPECT_EQ(g2->nodes[0].placement.reason, "int64 tensor 'a' is not supported on the device");
}

TEST(Layout, DeviceActivationsNhwcAndConvWeightsOhwi) {
  auto g = mixed_model().import();
  ASSERT_TRUE(g);
  ASSERT_TRUE(PassManager::default_pipeline().run(*g));
  auto layout = [&](const char* name) { return g->value(g->find_value(name)).layout; };
  EXPECT_EQ(layout("x"), Layout::kOnnx);   // graph input: user memory, ONNX order
  EXPECT_EQ(layout("r"), Layout::kNHWC);   // conv(+relu) output
  EXPECT_EQ(layout("p"), Layout::kNHWC);   // pool output
  EXPECT_EQ(layout("pp"), Layout::kOnnx);  // produced on the host
  EXPECT_EQ(layout("gap"), Layout::kNHWC);
  EXPECT_EQ(layout("f"), Layout::kOnnx);  // rank 2
  const Node& conv = g->nodes[0];
  ASSERT_EQ(conv.op_type, "Conv");
  EXPECT_EQ(g->value(conv.input(1)).layout, Layout::kOHWI);
}

}  // namespace
}  // namespace npu::compiler
