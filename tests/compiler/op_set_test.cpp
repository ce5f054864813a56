// The compiler's operator set is the operator registry (npu/ops/operators.def): each row's
// attribute schema and opset range are checked against ONNX's own operator schemas (the
// installed ONNX C++ library, opsets up to its newest), so the registry can neither miss an
// attribute ONNX defines (run() would refuse a valid model) nor invent one.
#include <onnx/defs/schema.h>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "npu/compiler/op_set.h"

namespace npu::compiler {
namespace {

std::string onnx_type_name(onnx::AttributeProto::AttributeType t) {
  switch (t) {
    case onnx::AttributeProto::INT:
      return "int";
    case onnx::AttributeProto::FLOAT:
      return "float";
    case onnx::AttributeProto::STRING:
      return "string";
    case onnx::AttributeProto::INTS:
      return "ints";
    case onnx::AttributeProto::FLOATS:
      return "floats";
    case onnx::AttributeProto::STRINGS:
      return "strings";
    case onnx::AttributeProto::TENSOR:
      return "tensor";
    default:
      return "other";
  }
}

TEST(OpSet, IsTheOperatorRegistry) {
  EXPECT_EQ(supported_ops().size(), ops::registry().size());
  for (const OpInfo& op : supported_ops()) {
    EXPECT_EQ(op.schema, ops::find(op.op_type)) << op.op_type;
    EXPECT_EQ(find_op(op.op_type), &op);
    EXPECT_EQ(op.schema->device == "Host", op.op_class == OpClass::kHost) << op.op_type;
  }
  EXPECT_EQ(find_op("Conv")->op_class, OpClass::kConv);
  EXPECT_EQ(find_op("Concat")->op_class, OpClass::kConcat);
  EXPECT_STREQ(op_class_name(OpClass::kReshape), "reshape");
  EXPECT_EQ(find_op("NoSuchOp"), nullptr);
}

TEST(OpSet, RegistrySchemasMatchOnnx) {
  const int newest = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().at("").second;
  size_t checked = 0;
  for (const OpInfo& op : supported_ops()) {
    const ops::OpSchema& s = *op.schema;
    if (s.since > newest) continue;   // newer than the installed ONNX (Gelu, opset 20)
    if (!s.domain.empty()) continue;  // the stack's own operators (domain "npu")
    SCOPED_TRACE(std::string(op.op_type));
    ASSERT_NE(onnx::OpSchemaRegistry::Schema(std::string(op.op_type), static_cast<int>(s.since)),
              nullptr)
        << "ONNX has no " << op.op_type << " at opset " << s.since;
    std::map<std::string, std::string> onnx_attrs;  // name -> type over the registry's range
    const int last = static_cast<int>(std::min<int64_t>(s.until, newest));
    for (int v = static_cast<int>(s.since); v <= last; ++v) {
      const auto* schema = onnx::OpSchemaRegistry::Schema(std::string(op.op_type), v);
      ASSERT_NE(schema, nullptr) << "opset " << v;
      for (const auto& [name, a] : schema->attributes()) onnx_attrs[name] = onnx_type_name(a.type);
    }
    for (const auto& [name, type] : onnx_attrs) {
      const ops::AttrSchema* a = s.attribute(name);
      ASSERT_NE(a, nullptr) << "the registry lacks ONNX attribute '" << name << "'";
      EXPECT_EQ(ops::attr_type_name(a->type), type) << name;
    }
    // Attributes of opsets newer than the installed ONNX (1.12, opset 17) that the
    // implementations follow: Reduce*-18 noop_with_empty_axes, Split-18 num_outputs,
    // AveragePool-19 dilations, Resize-18 antialias, axes and keep_aspect_ratio_policy.
    const std::set<std::string> newer = {
        "noop_with_empty_axes",    "num_outputs", "dilations", "antialias", "axes",
        "keep_aspect_ratio_policy"};
    for (const ops::AttrSchema& a : s.attributes) {
      EXPECT_TRUE(onnx_attrs.count(a.name) || (newer.count(a.name) && s.until > newest))
          << "attribute '" << a.name << "' is not ONNX's";
    }
    ++checked;
  }
  EXPECT_GE(checked, 80u);
}

}  // namespace
}  // namespace npu::compiler
