// The supported operator set: the operator registry's rows with their device family.
#include "npu/compiler/op_set.h"

#include <cstdio>
#include <map>

namespace npu::compiler {

const char* op_class_name(OpClass c) {
  static constexpr const char* kNames[kNumOpClasses] = {
#define NPU_FAMILY(Class, Name, Support, Lower, Int32) Name,
#include "npu/compiler/device_families.def"
#undef NPU_FAMILY
  };
  return kNames[static_cast<size_t>(c)];
}

const std::vector<OpInfo>& supported_ops() {
  static const std::vector<OpInfo> table = [] {
    std::vector<OpInfo> v;
#define NPU_OP(Name, Since, Until, Types, Shape, Device, Code, Host, ...) \
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

std::string format_supported_ops() {
  std::string out = "operator            opsets  device      input 0 types / attributes\n";
  for (const OpInfo& op : supported_ops()) {
    const ops::OpSchema& s = *op.schema;
    char line[96];
    std::snprintf(line, sizeof line, "%-19.*s %2lld-%-4lld %-11s ",
                  static_cast<int>(op.op_type.size()), op.op_type.data(),
                  static_cast<long long>(s.since), static_cast<long long>(s.until),
                  op_class_name(op.op_class));
    out += line + s.types.to_string() + "\n";
    if (s.attributes.empty()) continue;
    std::string attrs;
    for (const ops::AttrSchema& a : s.attributes) {
      attrs += " " + a.name + ":" + ops::attr_type_name(a.type);
      if (a.default_value) attrs += "=" + *a.default_value;
      if (a.required) attrs += "!";
    }
    out += std::string(39, ' ') + attrs.substr(1) + "\n";
  }
  return out;
}

}  // namespace npu::compiler
