// The operator set the compiler accepts: the operator registry of the operator library
// (npu/ops/operators.def — one row per operator), seen with the compiler's device family of
// each operator (the registry's Device column), which decides how the support check, the
// layout pass and lowering treat it. Models using an operator outside this set are rejected
// at import (or, on request, imported and kept on the host with the reason "unsupported
// operator"). Read-only after first use; safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "npu/ops/registry.h"

namespace npu::compiler {

/// The device families (npu/compiler/device_families.def): one support rule (support.cpp) and
/// one lowering (lower/) each; the registry's Device column maps every operator to one.
enum class OpClass : uint8_t {
#define NPU_FAMILY(Class, Name, Support, Lower, Int32) k##Class,
#include "npu/compiler/device_families.def"
#undef NPU_FAMILY
};
inline constexpr size_t kNumOpClasses = 0
#define NPU_FAMILY(Class, Name, Support, Lower, Int32) +1
#include "npu/compiler/device_families.def"
#undef NPU_FAMILY
    ;

/// "conv", "matmul", ... (lowercase family name).
const char* op_class_name(OpClass c);

struct OpInfo {
  std::string_view op_type;  // in the default ONNX domain
  OpClass op_class;
  const ops::OpSchema* schema;  // the registry row: opsets, attributes, dtypes
};

/// The entry for `op_type` (default ONNX domain), or nullptr if the compiler does not support it.
const OpInfo* find_op(std::string_view op_type);
/// The whole supported set, in the registry's order (for docs and tools).
const std::vector<OpInfo>& supported_ops();
/// The supported set as a table, one line per operator: name, opsets, device family (or
/// "host"), input-0 element types, attributes ("npu-compile --list-ops").
std::string format_supported_ops();

}  // namespace npu::compiler
