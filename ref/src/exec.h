// Private to libnpuref: what the interpreter's per-opcode REF functions share (bounds-checked
// SRAM copies, dtype dispatch, "<op>: <field>" error text), and their declarations, generated
// from the opcode table (npu/isa/opcodes.def): each data row names its REF function, defined in
// exec_dma.cpp, exec_matrix.cpp or exec_vector.cpp and called only by execute() (interp.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "npu/expected.h"
#include "npu/ref/interp.h"
#include "npu_isa.h"

namespace npu::ref::detail {

#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, FEATURES, REGIONS, COST, \
                 REF, KERNEL)                                                                  \
  Expected<void> REF(const decltype(npu_cmd::PAYLOAD)& c, std::span<std::byte> sram,           \
                     FlatDram& dram);
#include "npu/isa/opcodes.def"

inline std::string at(const char* op, const char* field) {
  return std::string(op) + ": " + field;
}

/// Error unless SRAM bytes [addr, addr + bytes) exist.
inline Expected<void> check_sram(std::span<const std::byte> sram, uint64_t addr, uint64_t bytes,
                                 const std::string& what) {
  if (addr > sram.size() || bytes > sram.size() - addr) {
    return make_error(EFAULT, what + ": sram bytes [" + std::to_string(addr) + ", +" +
                                  std::to_string(bytes) + ") exceed sram size " +
                                  std::to_string(sram.size()));
  }
  return ok();
}

/// Copies `count` elements of T from SRAM at `addr` (bounds-checked) into a vector.
template <typename T>
Expected<std::vector<T>> read_sram(std::span<const std::byte> sram, uint64_t addr, uint64_t count,
                                   const std::string& what) {
  if (count > sram.size() / sizeof(T)) {
    return make_error(EFAULT, what + ": " + std::to_string(count) + " elements of " +
                                  std::to_string(sizeof(T)) + " bytes exceed sram size " +
                                  std::to_string(sram.size()));
  }
  if (auto r = check_sram(sram, addr, count * sizeof(T), what); !r) return r.error();
  std::vector<T> v(count);
  if (count != 0) std::memcpy(v.data(), sram.data() + addr, count * sizeof(T));
  return v;
}

/// Copies `v` into SRAM at `addr` (bounds-checked).
template <typename T>
Expected<void> write_sram(std::span<std::byte> sram, uint64_t addr, const std::vector<T>& v,
                          const std::string& what) {
  const uint64_t bytes = uint64_t{v.size()} * sizeof(T);
  if (auto r = check_sram(sram, addr, bytes, what); !r) return r;
  if (bytes != 0) std::memcpy(sram.data() + addr, v.data(), bytes);
  return ok();
}

inline Expected<void> bad_dtype(const char* op, const char* field, uint8_t dtype) {
  return make_error(EINVAL, at(op, field) + ": unsupported dtype " + std::to_string(dtype));
}

template <typename T>
struct Tag {
  using type = T;
};

/// Calls f(Tag<T>{}) for an int8/uint8 dtype.
template <typename F>
Expected<void> with_byte_type(uint8_t dtype, const char* op, const char* field, F&& f) {
  switch (dtype) {
    case NPU_DTYPE_INT8:
      return f(Tag<int8_t>{});
    case NPU_DTYPE_UINT8:
      return f(Tag<uint8_t>{});
    default:
      return bad_dtype(op, field, dtype);
  }
}

/// Calls f(Tag<T>{}) for an int8/uint8/int32 dtype.
template <typename F>
Expected<void> with_int_type(uint8_t dtype, const char* op, const char* field, F&& f) {
  if (dtype == NPU_DTYPE_INT32) return f(Tag<int32_t>{});
  return with_byte_type(dtype, op, field, f);
}

/// Calls f(Tag<T>{}) for any dtype, fp32 included.
template <typename F>
Expected<void> with_any_type(uint8_t dtype, const char* op, const char* field, F&& f) {
  if (dtype == NPU_DTYPE_FP32) return f(Tag<float>{});
  return with_int_type(dtype, op, field, f);
}

}  // namespace npu::ref::detail
