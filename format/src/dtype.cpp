// The DType table: size, package name, NumPy descr, ISA dtype and kind of each element type.
#include "npu/format/dtype.h"

#include "npu_isa.h"

namespace npu::format {
namespace {

struct Row {
  DType type;
  size_t size;
  const char* name;
  const char* descr;
  uint8_t isa;
  bool floating;
};

constexpr Row kRows[] = {
    {DType::kBool, 1, "bool", "|b1", 0, false},
    {DType::kInt8, 1, "int8", "|i1", NPU_DTYPE_INT8, false},
    {DType::kUint8, 1, "uint8", "|u1", NPU_DTYPE_UINT8, false},
    {DType::kInt16, 2, "int16", "<i2", 0, false},
    {DType::kUint16, 2, "uint16", "<u2", 0, false},
    {DType::kInt32, 4, "int32", "<i4", NPU_DTYPE_INT32, false},
    {DType::kUint32, 4, "uint32", "<u4", 0, false},
    {DType::kInt64, 8, "int64", "<i8", 0, false},
    {DType::kUint64, 8, "uint64", "<u8", 0, false},
    {DType::kFloat16, 2, "float16", "<f2", NPU_DTYPE_FP16, true},
    {DType::kFloat32, 4, "float32", "<f4", NPU_DTYPE_FP32, true},
    {DType::kFloat64, 8, "float64", "<f8", 0, true},
};

const Row& row(DType t) {
  for (const Row& r : kRows) {
    if (r.type == t) return r;
  }
  return kRows[0];  // unreachable for valid enumerators
}

}  // namespace

size_t dtype_size(DType t) {
  return row(t).size;
}
const char* dtype_name(DType t) {
  return row(t).name;
}
const char* npy_descr(DType t) {
  return row(t).descr;
}
uint8_t isa_dtype(DType t) {
  return row(t).isa;
}
bool dtype_is_float(DType t) {
  return row(t).floating;
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const Row& r : kRows) {
    if (name == r.name) return r.type;
  }
  return std::nullopt;
}

}  // namespace npu::format
