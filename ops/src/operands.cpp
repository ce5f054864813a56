// Inputs and their dtype checks (operands.h).
#include "operands.h"

#include <algorithm>

namespace npu::ops::detail {

Expected<const NpyArray*> input(const OpCall& c, size_t i) {
  if (i >= c.inputs.size() || c.inputs[i] == nullptr) {
    return op_error(c, "missing input " + std::to_string(i));
  }
  return c.inputs[i];
}

const NpyArray* optional_input(const OpCall& c, size_t i) {
  return i < c.inputs.size() ? c.inputs[i] : nullptr;
}

Expected<void> need_dtype(const OpCall& c, const NpyArray& a, std::initializer_list<DType> ok,
                          const char* what) {
  if (std::find(ok.begin(), ok.end(), a.dtype) != ok.end()) return npu::ok();
  return op_error(c, std::string(what ? what : "") + (what ? " " : "") + "dtype " +
                         format::dtype_name(a.dtype) + " is not supported");
}

Expected<void> need_numeric(const OpCall& c, const NpyArray& a, bool int_ok, const char* what) {
  if (!int_ok) return need_dtype(c, a, {DType::kFloat32, DType::kFloat64}, what);
  return need_dtype(c, a,
                    {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kUint8, DType::kInt16,
                     DType::kUint16, DType::kInt32, DType::kUint32, DType::kInt64, DType::kUint64},
                    what);
}

Expected<void> need_scalar(const OpCall& c, const NpyArray& a, const char* what) {
  if (a.num_elements() == 1) return npu::ok();
  return op_error(c,
                  std::string(what) + " must have one element, got shape " + shape_text(a.shape));
}

Expected<void> need_same_dtype(const OpCall& c, const NpyArray& a, const NpyArray& b) {
  if (a.dtype == b.dtype) return npu::ok();
  return op_error(c, std::string("inputs have different dtypes ") + format::dtype_name(a.dtype) +
                         " and " + format::dtype_name(b.dtype));
}

}  // namespace npu::ops::detail
