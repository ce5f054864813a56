// ONNX import: initializers, attributes, shape inference, symbolic batch binding, constant
// inputs, legacy forms and the one-line errors for bad models.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "model_builder.h"
#include "npu/compiler/onnx_import.h"

namespace npu::compiler {
namespace {

using testing::count_ops;
using testing::dims_of;
using testing::ModelBuilder;

TEST(OnnxImport, InitializersRawAndTyped) {
  ModelBuilder b;
  b.input("x", {int64_t{2}, int64_t{3}});
  b.init_f("raw", {2, 3}, {1, 2, 3, 4, 5, 6}, /*raw=*/true);
  b.init_f("typed", {3}, {0.5f, -1.5f, 2.0f}, /*raw=*/false);
  b.node("Add", {"x", "raw"}, {"a"});
  b.node("Add", {"a", "typed"}, {"y"});
  b.output("y");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  const NpyArray* raw = g->constant(g->find_value("raw"));
  const NpyArray* typed = g->constant(g->find_value("typed"));
  ASSERT_TRUE(raw && typed);
  EXPECT_EQ(raw->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(format::to_floats(*raw), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(format::to_floats(*typed), (std::vector<float>{0.5f, -1.5f, 2.0f}));
  EXPECT_EQ(g->inputs.size(), 1u);  // initializers are not runtime inputs
  EXPECT_EQ(dims_of(*g, "y"), (std::vector<int64_t>{2, 3}));
}

// Large float initializers are cut from the bytes protobuf parses and read from the model
// file (onnx_weights.h): the values, the checks and a bound replacement must not change.
TEST(OnnxImport, LargeInitializersReadFromTheModelBytes) {
  constexpr int64_t kN = 3000;  // 12000 bytes of float32, above the cut size
  std::vector<float> big(kN), big2(kN);
  for (int64_t i = 0; i < kN; ++i) {
    big[static_cast<size_t>(i)] = static_cast<float>(i) * 0.25f - 7.0f;
    big2[static_cast<size_t>(i)] = static_cast<float>(kN - i);
  }
  ModelBuilder b;
  b.input("x", {kN});
  b.init_f("small", {2}, {1.5f, 2.5f});  // kept in the proto
  b.init_f("big", {kN}, big);
  b.init_f("big2", {kN}, big2);
  auto* ints = b.graph().add_initializer();  // large, but not floating point: kept
  ints->set_name("ints");
  ints->set_data_type(onnx::TensorProto::INT32);
  ints->add_dims(kN);
  std::vector<int32_t> iv(kN);
  for (int64_t i = 0; i < kN; ++i) iv[static_cast<size_t>(i)] = static_cast<int32_t>(i * 3);
  ints->set_raw_data(std::string(reinterpret_cast<const char*>(iv.data()), iv.size() * 4));
  b.node("Add", {"x", "big"}, {"a"});
  b.node("Add", {"a", "big2"}, {"y"});
  b.output("y");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(format::to_floats(*g->constant(g->find_value("big"))), big);
  EXPECT_EQ(format::to_floats(*g->constant(g->find_value("big2"))), big2);
  EXPECT_EQ(format::to_floats(*g->constant(g->find_value("small"))),
            (std::vector<float>{1.5f, 2.5f}));
  const auto got_ints = format::to_ints(*g->constant(g->find_value("ints")));
  ASSERT_EQ(got_ints.size(), static_cast<size_t>(kN));
  EXPECT_EQ(got_ints[kN - 1], (kN - 1) * 3);
  EXPECT_EQ(dims_of(*g, "y"), (std::vector<int64_t>{kN}));

  // A bound constant replaces the first large initializer; the second keeps its bytes.
  b.input("big", {kN});
  ImportOptions opts;
  opts.constant_inputs["big"] = NpyArray::of<float>({kN}, std::vector<float>(kN, 4.0f));
  auto bound = b.import(opts);
  ASSERT_TRUE(bound) << bound.error().message;
  EXPECT_EQ(format::to_floats(*bound->constant(bound->find_value("big"))),
            std::vector<float>(kN, 4.0f));
  EXPECT_EQ(format::to_floats(*bound->constant(bound->find_value("big2"))), big2);

  // A cut raw_data of the wrong size is still an error that names the initializer.
  b.graph().mutable_initializer(2)->add_dims(1);  // big2 now claims 3000x1... of 4 bytes
  b.graph().mutable_initializer(2)->set_dims(0, kN + 1);
  auto bad = b.import();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("initializer 'big2': raw_data has 12000 bytes, expected "
                                     "12004"),
            std::string::npos)
      << bad.error().message;
}

TEST(OnnxImport, AttributesOfEachType) {
  ModelBuilder b;
  b.input("x", {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  b.init_f("w", {4, 2, 3, 3}, std::vector<float>(72, 0.1f));
  auto& conv = b.node("Conv", {"x", "w"}, {"c"}, "conv");
  ModelBuilder::attr(conv, "strides", std::vector<int64_t>{2, 2});
  ModelBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  ModelBuilder::attr(conv, "group", int64_t{1});
  ModelBuilder::attr(conv, "auto_pad", std::string("NOTSET"));
  auto& lr = b.node("LeakyRelu", {"c"}, {"l"}, "leaky");
  ModelBuilder::attr(lr, "alpha", 0.25f);
  auto& cst = b.node("ConstantOfShape", {"shape"}, {"k"}, "cos");
  b.init_i64("shape", {1}, {3});
  auto* value = cst.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(7.0f);
  b.output("l");
  b.output("k");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  const Node& c = g->nodes[0];
  EXPECT_EQ(c.op_type, "Conv");
  EXPECT_EQ(c.attr_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.attr_int("group", 0), 1);
  EXPECT_EQ(c.attr_string("auto_pad"), "NOTSET");
  EXPECT_EQ(dims_of(*g, "c"), (std::vector<int64_t>{1, 4, 3, 3}));  // shape inference
  const Node& l = g->nodes[1];
  EXPECT_FLOAT_EQ(l.attr_float("alpha", 0), 0.25f);
  const NpyArray* t = g->nodes[2].attr_tensor("value");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(format::to_floats(*t), std::vector<float>{7.0f});
  EXPECT_EQ(g->nodes[0].opset, 13);
}

TEST(OnnxImport, ConstantNodeBecomesConstantValue) {
  ModelBuilder b;
  b.input("x", {int64_t{4}});
  auto& k = b.node("Constant", {}, {"two"}, "k");
  ModelBuilder::attr(k, "value_floats", std::vector<float>{2, 2, 2, 2});
  b.node("Mul", {"x", "two"}, {"y"});
  b.output("y");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(count_ops(*g, "Constant"), 0u);
  ASSERT_TRUE(g->value(g->find_value("two")).is_constant());
}

TEST(OnnxImport, ZeroStrideOrKernelIsAnErrorNotACrash) {
  // ONNX's own shape inference divides by these; the importer refuses them first.
  for (const char* key : {"strides", "kernel_shape"}) {
    ModelBuilder b;
    b.input("x", {int64_t{1}, int64_t{1}, int64_t{8}, int64_t{8}});
    auto& n = b.node("MaxPool", {"x"}, {"y"}, "p");
    ModelBuilder::attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
    ModelBuilder::attr(n, key, std::vector<int64_t>{0, 2});
    b.output("y");
    auto g = b.import();
    ASSERT_FALSE(g) << key;
    const std::string want =
        std::string(": node 'p' (MaxPool): attribute ") + key + " has 0 (must be >= 1)";
    EXPECT_NE(g.error().message.find(want), std::string::npos) << g.error().message;
  }
}

TEST(OnnxImport, SymbolicBatchStaysSymbolicWithoutBinding) {
  ModelBuilder b;
  b.input("x", {std::string("N"), int64_t{3}, int64_t{8}, int64_t{8}});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  const Value& y = g->value(g->find_value("y"));
  ASSERT_TRUE(y.shape);
  EXPECT_EQ(shape_to_string(*y.shape), "[N, 3, 8, 8]");
}

TEST(OnnxImport, SymbolicBatchBoundFromInputShape) {
  ModelBuilder b;
  b.input("x", {std::string("N"), int64_t{3}, int64_t{8}, int64_t{8}});
  b.input("z", {std::string("N"), int64_t{3}, int64_t{8}, int64_t{8}});
  b.node("Add", {"x", "z"}, {"y"});
  b.output("y");
  ImportOptions opts;
  opts.input_shapes["x"] = {5, 3, 8, 8};  // as from a .npy of that shape
  auto g = b.import(opts);
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(dims_of(*g, "x"), (std::vector<int64_t>{5, 3, 8, 8}));
  EXPECT_EQ(dims_of(*g, "z"), (std::vector<int64_t>{5, 3, 8, 8}));  // same symbol
  EXPECT_EQ(dims_of(*g, "y"), (std::vector<int64_t>{5, 3, 8, 8}));

  ImportOptions by_name;
  by_name.dim_values["N"] = 2;
  auto g2 = b.import(by_name);
  ASSERT_TRUE(g2) << g2.error().message;
  EXPECT_EQ(dims_of(*g2, "y"), (std::vector<int64_t>{2, 3, 8, 8}));
}

TEST(OnnxImport, InputShapeMismatchIsAnError) {
  ModelBuilder b;
  b.input("x", {std::string("N"), int64_t{3}});
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  ImportOptions opts;
  opts.input_shapes["x"] = {2, 4};
  auto g = b.import(opts);
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("input 'x': dim 1 is 3 in the model but 4"), std::string::npos)
      << g.error().message;
  opts.input_shapes = {{"nope", {1}}};
  auto g2 = b.import(opts);
  ASSERT_FALSE(g2);
  EXPECT_NE(g2.error().message.find("'nope'"), std::string::npos);
}

TEST(OnnxImport, ConstantInputFixesReshapeTarget) {
  ModelBuilder b;
  b.input("x", {int64_t{2}, int64_t{6}});
  b.input("shape", {int64_t{2}}, onnx::TensorProto::INT64);
  b.node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  b.output("y");
  auto unbound = b.import();
  ASSERT_TRUE(unbound) << unbound.error().message;
  EXPECT_EQ(dims_of(*unbound, "y"), std::vector<int64_t>{-1});
  ImportOptions opts;
  const std::vector<int64_t> target = {3, 4};
  opts.constant_inputs["shape"] = format::from_ints(DType::kInt64, {2}, target);
  auto g = b.import(opts);
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->inputs.size(), 1u);
  EXPECT_EQ(dims_of(*g, "y"), (std::vector<int64_t>{3, 4}));
}

// (Moved from the conformance tests' NpyConversions, which tested the NpyArray <-> TensorData
// crossing that binding went through before the IR held NpyArrays.)
TEST(OnnxImport, BoundConstantKeepsTheArrayAndRejectsTypesOutsideTheIr) {
  ModelBuilder b;
  b.input("x", {int64_t{2}, int64_t{1}}, onnx::TensorProto::INT32);
  b.input("y", {int64_t{2}, int64_t{1}}, onnx::TensorProto::INT32);
  b.node("Add", {"x", "y"}, {"z"}, "add");
  b.output("z", onnx::TensorProto::INT32);
  ImportOptions opts;
  const NpyArray a = NpyArray::of<int32_t>({2, 1}, std::vector<int32_t>{3, -4});
  opts.constant_inputs["y"] = a;
  auto g = b.import(opts);
  ASSERT_TRUE(g) << g.error().message;
  const Value& y = g->value(g->find_value("y"));
  ASSERT_TRUE(y.is_constant());
  EXPECT_EQ(y.dtype, DType::kInt32);
  EXPECT_EQ(*y.constant, a);
  EXPECT_EQ(format::to_ints(*y.constant), (std::vector<int64_t>{3, -4}));

  // Every NpyArray dtype is an IR type now (float16 since the fp16 work); one that is not
  // the declared type is still refused.
  opts.constant_inputs["y"] = NpyArray::zeros(DType::kFloat16, {2, 1});
  auto h = b.import(opts);
  ASSERT_FALSE(h);
  EXPECT_EQ(h.error().code, EINVAL);
  EXPECT_NE(h.error().message.find("input 'y': bound constant is float16 but the model expects "
                                   "INT32"),
            std::string::npos)
      << h.error().message;

  NpyArray truncated = a;
  truncated.data.resize(4);
  opts.constant_inputs["y"] = truncated;
  auto t = b.import(opts);
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message.find("input 'y': shape [2, 1] int32 needs 8 bytes, array has 4"),
            std::string::npos)
      << t.error().message;
}

TEST(OnnxImport, LegacyClipAttributesBecomeInputs) {
  ModelBuilder b(/*opset=*/6);
  b.input("x", {int64_t{4}});
  auto& clip = b.node("Clip", {"x"}, {"y"}, "clip");
  ModelBuilder::attr(clip, "min", 0.0f);
  ModelBuilder::attr(clip, "max", 6.0f);
  b.output("y");
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  const Node& n = g->nodes[0];
  EXPECT_FALSE(n.has_attr("min"));
  ASSERT_EQ(n.inputs.size(), 3u);
  EXPECT_EQ(format::to_floats(*g->constant(n.inputs[2])), std::vector<float>{6.0f});
  EXPECT_EQ(n.opset, 6);
}

TEST(OnnxImport, UnknownOperatorNamesNodeAndOpType) {
  ModelBuilder b;
  b.input("x", {int64_t{4}});
  b.node("FooBar", {"x"}, {"y"}, "mystery");
  b.output("y");
  auto g = b.import();
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("node 'mystery' (FooBar): unknown operator"), std::string::npos)
      << g.error().message;
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos);
}

TEST(OnnxImport, UnsupportedOperatorIsRejectedUnlessAllowed) {
  ModelBuilder b;
  b.input("x", {int64_t{2}, int64_t{4}});
  b.node("Hardmax", {"x"}, {"y"}, "hm");
  b.output("y");
  auto g = b.import();
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("node 'hm' (Hardmax): unsupported operator"), std::string::npos)
      << g.error().message;
  ImportOptions lenient;
  lenient.allow_unsupported_ops = true;
  auto g2 = b.import(lenient);
  ASSERT_TRUE(g2) << g2.error().message;
}

TEST(OnnxImport, InvalidNodeNamesNodeAndReason) {
  ModelBuilder b;
  b.input("x", {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{4}});
  b.init_f("w", {2, 2, 1, 1}, std::vector<float>(4, 1.0f));
  auto& conv = b.node("Conv", {"x", "w"}, {"y"}, "bad_conv");
  ModelBuilder::attr(conv, "strides", std::string("oops"));  // wrong attribute type
  b.output("y");
  auto g = b.import();
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("node 'bad_conv' (Conv)"), std::string::npos)
      << g.error().message;
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos);
}

TEST(OnnxImport, ShapeInferenceErrorIsOneLine) {
  ModelBuilder b;
  b.input("a", {int64_t{2}, int64_t{3}});
  b.input("c", {int64_t{4}, int64_t{5}});
  b.node("MatMul", {"a", "c"}, {"y"}, "mm");
  b.output("y");
  auto g = b.import();
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("mm"), std::string::npos) << g.error().message;
  EXPECT_EQ(g.error().message.find('\n'), std::string::npos);
}

TEST(OnnxImport, DeclaredShapesTheOperatorContradictsAreErrors) {
  // ONNX's inference leaves Relu-1 and Dropout-1 alone, so a declared output shape reached
  // the lowering, which sized (and read) the output by it (fuzz_onnx found the Relu).
  ModelBuilder relu(2);
  relu.input("x", {int64_t{3}, int64_t{4}, int64_t{5}});
  relu.node("Relu", {"x"}, {"y"}, "r");
  relu.output("y", {int64_t{4}, int64_t{5}});
  auto g = relu.import();
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find(
                "node 'r' (Relu): output 'y' has shape [4, 5], but Relu of [3, 4, 5] gives "
                "[3, 4, 5]"),
            std::string::npos)
      << g.error().message;

  ModelBuilder dropout(1);
  dropout.input("x", {int64_t{1}, int64_t{2}, int64_t{2}, int64_t{4}});
  dropout.node("Dropout", {"x"}, {"d"}, "drop");
  dropout.value_info("d", {int64_t{16}});
  dropout.node("Transpose", {"d"}, {"y"}, "t");
  dropout.output("y");
  g = dropout.import();
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("node 'drop' (Dropout): output 'd' has shape [16], but "
                                   "Dropout of [1, 2, 2, 4] gives [1, 2, 2, 4]"),
            std::string::npos)
      << g.error().message;
}

TEST(OnnxImport, ExternalDataAndGarbageAreClearErrors) {
  ModelBuilder b;
  b.input("x", {int64_t{2}});
  auto* t = b.graph().add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t->add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
  b.node("Add", {"x", "w"}, {"y"});
  b.output("y");
  auto g = b.import();
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("initializer 'w': external tensor data is not supported"),
            std::string::npos)
      << g.error().message;

  auto junk = import_onnx_bytes("\x08\x07garbage\xff\xff", {}, "junk.onnx");
  ASSERT_FALSE(junk);
  EXPECT_EQ(junk.error().message.rfind("junk.onnx: ", 0), 0u) << junk.error().message;
  auto missing = import_onnx("/nonexistent/model.onnx");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ENOENT);
}

TEST(OnnxImport, UnsupportedElementTypeNamesValue) {
  ModelBuilder b;
  b.input("x", {int64_t{2}}, onnx::TensorProto::BFLOAT16);
  b.node("Relu", {"x"}, {"y"});
  b.output("y", onnx::TensorProto::BFLOAT16);
  auto g = b.import();
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("'x': unsupported element type BFLOAT16"), std::string::npos)
      << g.error().message;
}

// int16, uint16, uint32 and uint64 tensors are accepted (they run on the host): typed
// initializers in int32_data (16-bit) and uint64_data (32- and 64-bit) keep every value,
// including a uint64 above 2^63.
TEST(OnnxImport, WideAndUnsignedIntegerTensors) {
  ModelBuilder b;
  b.input("x", {int64_t{2}}, onnx::TensorProto::UINT64);
  auto* u64 = b.graph().add_initializer();
  u64->set_name("u64");
  u64->set_data_type(onnx::TensorProto::UINT64);
  u64->add_dims(2);
  u64->add_uint64_data(7);
  u64->add_uint64_data(0xF000000000000001ull);
  auto* i16 = b.graph().add_initializer();
  i16->set_name("i16");
  i16->set_data_type(onnx::TensorProto::INT16);
  i16->add_dims(2);
  i16->add_int32_data(-300);
  i16->add_int32_data(32767);
  auto* u32 = b.graph().add_initializer();
  u32->set_name("u32");
  u32->set_data_type(onnx::TensorProto::UINT32);
  u32->add_dims(1);
  u32->add_uint64_data(4000000000u);
  b.node("Add", {"x", "u64"}, {"y"});
  b.output("y", onnx::TensorProto::UINT64);
  b.output("i16", onnx::TensorProto::INT16);
  b.output("u32", onnx::TensorProto::UINT32);
  auto g = b.import();
  ASSERT_TRUE(g) << g.error().message;
  const NpyArray* a = g->constant(g->find_value("u64"));
  const NpyArray* c = g->constant(g->find_value("i16"));
  const NpyArray* d = g->constant(g->find_value("u32"));
  ASSERT_TRUE(a && c && d);
  EXPECT_EQ(a->dtype, DType::kUint64);
  uint64_t big = 0;
  std::memcpy(&big, a->data.data() + 8, 8);
  EXPECT_EQ(big, 0xF000000000000001ull);
  EXPECT_EQ(c->dtype, DType::kInt16);
  EXPECT_EQ(format::to_ints(*c), (std::vector<int64_t>{-300, 32767}));
  EXPECT_EQ(d->dtype, DType::kUint32);
  EXPECT_EQ(format::to_ints(*d), (std::vector<int64_t>{4000000000}));
  EXPECT_EQ(g->value(g->find_value("y")).dtype, DType::kUint64);
  // The count is checked against the field the type lives in.
  u32->add_int32_data(1);
  u32->clear_uint64_data();
  auto bad = b.import();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("'u32': has 0 values for 1 elements"), std::string::npos)
      << bad.error().message;
}

// A given shape for an input whose element type the compiler refuses: the type is the error.
TEST(OnnxImport, UnsupportedInputTypeIsReportedBeforeItsGivenShape) {
  ModelBuilder b;
  b.input("x", {int64_t{3}, int64_t{4}}, onnx::TensorProto::BFLOAT16);
  b.node("Cast", {"x"}, {"y"});
  b.output("y");
  ImportOptions opts;
  opts.input_shapes["x"] = {1};
  auto g = b.import(opts);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().code, ENOTSUP);
  EXPECT_NE(g.error().message.find("input 'x': unsupported element type BFLOAT16"),
            std::string::npos)
      << g.error().message;
}

}  // namespace
}  // namespace npu::compiler
