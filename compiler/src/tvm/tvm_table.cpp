// The table npu/compiler/tvm_ops.def, expanded once: the kernel rows with their parsed
// attribute schemas, the TVM -> ONNX attribute names, and the dispatch from Kind to its
// translation.
#include <array>
#include <span>

#include "tvm/tvm_kernels.h"

namespace npu::compiler {

namespace tvm {

namespace {

struct AttrsRow {
  std::string_view id;
  std::string_view schema;
};
constexpr AttrsRow kAttrs[] = {
#define NPU_TVM_ATTRS(Id, Schema) {#Id, Schema},
#include "npu/compiler/tvm_ops.def"
};

struct RenameRow {
  std::string_view tvm, onnx;
};
constexpr RenameRow kRenames[] = {
#define NPU_TVM_ATTR(TvmName, OnnxName) {TvmName, OnnxName},
#include "npu/compiler/tvm_ops.def"
};

constexpr TvmOpInfo kOps[] = {
#define NPU_TVM_OP(Name, Kind, Operator, Activation, Inputs, Outputs, Attrs, Fixed) \
  {Name, #Kind, Operator, Activation, Inputs, Outputs, #Attrs, Fixed},
#include "npu/compiler/tvm_ops.def"
};

constexpr Kind kKinds[] = {
#define NPU_TVM_OP(Name, K, Operator, Activation, Inputs, Outputs, Attrs, Fixed) Kind::K,
#include "npu/compiler/tvm_ops.def"
};
static_assert(std::size(kOps) == std::size(kKinds));

std::string_view schema_text(std::string_view id) {
  for (const AttrsRow& a : kAttrs) {
    if (a.id == id) return a.schema;
  }
  return "?:?";  // a row naming an unknown schema aborts in parse_attribute_schema
}

const std::vector<OpRow>& rows() {
  static const std::vector<OpRow> table = [] {
    std::vector<OpRow> out;
    for (size_t i = 0; i < std::size(kOps); ++i) {
      const TvmOpInfo& info = kOps[i];
      const std::string owner = "tvm_ops.def: " + std::string(info.name);
      out.push_back(OpRow{info, kKinds[i],
                          ops::parse_attribute_schema(owner, schema_text(info.attrs)),
                          ops::parse_attribute_schema(owner, info.fixed)});
    }
    return out;
  }();
  return table;
}

}  // namespace

const OpRow* find_row(std::string_view name) {
  for (std::string_view prefix : {"relax.", "jsonruntime."}) {
    if (name.starts_with(prefix)) name.remove_prefix(prefix.size());
  }
  for (const OpRow& r : rows()) {
    if (r.info.name == name) return &r;
  }
  return nullptr;
}

std::string_view onnx_attr_name(std::string_view tvm_name) {
  for (const RenameRow& r : kRenames) {
    if (r.tvm == tvm_name) return r.onnx;
  }
  return {};
}

KernelFn kernel_fn(Kind k) {
  static constexpr std::array<KernelFn, 11> kFns = {
      conv, pool, matmul, dense, softmax, batch_norm, unary, clip, binary, quantize, dequantize};
  static_assert(kFns.size() == static_cast<size_t>(Kind::Dequantize) + 1);
  return kFns[static_cast<size_t>(k)];
}

}  // namespace tvm

std::span<const TvmOpInfo> tvm_ops() {
  return tvm::kOps;
}

const TvmOpInfo* find_tvm_op(std::string_view kernel_name) {
  const tvm::OpRow* r = tvm::find_row(kernel_name);
  return r ? &tvm::kOps[static_cast<size_t>(r - tvm::rows().data())] : nullptr;
}

}  // namespace npu::compiler
