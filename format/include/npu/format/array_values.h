// Element values of an NpyArray read and written as plain numbers, whatever its dtype: what
// code that inspects or builds small tensors needs (the compiler's constants and rewritten
// weights, an operator's scalar operands) without a switch over dtypes at every use.
//
// Conversions follow NumPy's astype() where it is defined: integers convert exactly to int64
// (uint64 above INT64_MAX wraps), floats truncate toward zero (NaN gives 0 and out-of-range
// values saturate, where NumPy leaves them undefined), bool reads as 0/1 and stores v != 0,
// and a store into a narrower integer type wraps (two's complement), as ONNX Cast does.
// float16 elements read exactly and store rounded to nearest even (through float32).
// Index preconditions are the caller's: i must be below a.num_elements() and a.data must
// hold that many elements (check_npy()). Plain functions; an array is not synchronized.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "npu/format/npy.h"

namespace npu::format {

/// Element i as int64 (floats truncate toward zero).
int64_t int_at(const NpyArray& a, int64_t i);
/// Element i as double.
double number_at(const NpyArray& a, int64_t i);
/// Every element as int64 / as float, in C order.
std::vector<int64_t> to_ints(const NpyArray& a);
std::vector<float> to_floats(const NpyArray& a);

/// Sets element i from an int64 / a double, converted to a.dtype.
void set_int(NpyArray& a, int64_t i, int64_t v);
void set_number(NpyArray& a, int64_t i, double v);

/// An array of dtype `t` and `shape` holding `values` converted (as set_int); missing values
/// are 0 and extra ones are ignored. (NpyArray::of() builds one from values of its own type.)
NpyArray from_ints(DType t, std::vector<int64_t> shape, std::span<const int64_t> values);

}  // namespace npu::format
