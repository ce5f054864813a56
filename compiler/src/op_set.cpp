// The supported operator set: the operator registry's rows with their device family.
#include "npu/compiler/op_set.h"

#include <map>

namespace npu::compiler {

const char* op_class_name(OpClass c) {
  static constexpr const char* kNames[kNumOpClasses] = {
      "conv",   "matmul",    "eltwise", "activation", "pool", "softmax", "norm", "quant",
      "reduce", "transpose", "reshape", "concat",     "pad",  "noop",    "host"};
  return kNames[static_cast<size_t>(c)];
}

const std::vector<OpInfo>& supported_ops() {
  static const std::vector<OpInfo> table = [] {
    std::vector<OpInfo> v;
#define NPU_OP(Name, Since, Until, Types, Shape, Device, Code, Host, Attributes) \
  v.push_back(OpInfo{#Name, OpClass::k##Device, ops::find(#Name)});
#include "npu/ops/operators.def"
#undef NPU_OP
    return v;
  }();
  return table;
}

const OpInfo* find_op(std::string_view op_type) {
  static const std::map<std::string_view, const OpInfo*> index = [] {
    std::map<std::string_view, const OpInfo*> m;
    for (const OpInfo& op : supported_ops()) m.emplace(op.op_type, &op);
    return m;
  }();
  const auto it = index.find(op_type);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace npu::compiler
