// NpyArray and the NumPy .npy file format (docs/npy.md): read versions 1.0, 2.0 and 3.0,
// write 1.0 (2.0 only when the header does not fit 1.0), little-endian C-order arrays of the
// DType table. Every malformed file gives an Error naming the file and the problem; nothing
// in a hostile file can crash the reader. ArrayView is the non-owning form of an NpyArray: a
// run's inputs handed over without copying them (a NumPy array's memory, a slice of a batch).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "npu/expected.h"
#include "npu/format/dtype.h"

namespace npu::format {

using NpyDtype = DType;

/// A dense C-order array: dtype, shape (empty = 0-d scalar) and little-endian element bytes
/// (data.size() == num_elements() * dtype_size(dtype)). Plain value type.
struct NpyArray {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::vector<std::byte> data;

  /// Product of the dims (1 for a 0-d array, 0 when a dim is 0).
  int64_t num_elements() const;

  /// A zero-filled array.
  static NpyArray zeros(DType dtype, std::vector<int64_t> shape);
  /// An array of T (dtype_of<T>()) with the given values in C order. Precondition:
  /// values.size() equals the shape's element count (otherwise data is zero-filled or cut to
  /// fit, never out of bounds).
  template <typename T>
  static NpyArray of(std::vector<int64_t> shape, std::span<const T> values) {
    NpyArray a = zeros(dtype_of<T>(), std::move(shape));
    const size_t n = std::min(a.data.size(), values.size_bytes());
    if (n) std::memcpy(a.data.data(), values.data(), n);
    return a;
  }
  template <typename T>
  static NpyArray of(std::vector<int64_t> shape, const std::vector<T>& values) {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> is not contiguous
      NpyArray a = zeros(DType::kBool, std::move(shape));
      for (size_t i = 0; i < std::min(a.data.size(), values.size()); ++i) {
        a.data[i] = std::byte{values[i]};
      }
      return a;
    } else {
      return of<T>(std::move(shape), std::span<const T>(values));
    }
  }

  /// True when the elements are T.
  template <typename T>
  bool holds() const {
    return dtype == dtype_of<T>();
  }
  /// The elements as T in place; empty when dtype is not dtype_of<T>(). (data comes from
  /// operator new, so it is aligned for every element type.)
  template <typename T>
  std::span<const T> view() const {
    if (!holds<T>()) return {};
    return {reinterpret_cast<const T*>(data.data()), data.size() / sizeof(T)};
  }
  template <typename T>
  std::span<T> view() {
    if (!holds<T>()) return {};
    return {reinterpret_cast<T*>(data.data()), data.size() / sizeof(T)};
  }
  /// A copy of the elements as T; empty when dtype is not dtype_of<T>().
  template <typename T>
  std::vector<T> values() const {
    auto v = view<T>();
    return {v.begin(), v.end()};
  }

  bool operator==(const NpyArray&) const = default;
};

/// A dense C-order array whose element bytes live elsewhere: the caller keeps `data` valid
/// and unchanged while the view is used. The shape is held by value (views of a slice of rows
/// get their own). Implicitly made from an NpyArray, which it then refers to.
struct ArrayView {
  DType dtype = DType::kFloat32;
  std::vector<int64_t> shape;
  std::span<const std::byte> data;

  ArrayView() = default;
  ArrayView(DType t, std::vector<int64_t> s, std::span<const std::byte> d)
      : dtype(t), shape(std::move(s)), data(d) {}
  ArrayView(const NpyArray& a)  // NOLINT(google-explicit-constructor): a view of `a`
      : dtype(a.dtype), shape(a.shape), data(a.data) {}

  /// An owning copy.
  NpyArray to_array() const { return {dtype, shape, {data.begin(), data.end()}}; }
};

/// Parses the bytes of a .npy file; `name` (usually the path) prefixes every error, e.g.
/// "x.npy: header: fortran_order True is not supported (save a C-order array)".
Expected<NpyArray> parse_npy(std::span<const std::byte> bytes, std::string_view name);
/// Reads and parses a file; errors name the path.
Expected<NpyArray> read_npy(const std::string& path);
/// The .npy bytes of an array (version 1.0, header padded with spaces and '\n' to a multiple
/// of 64 bytes, exactly as NumPy writes it). A data size that does not match the shape is
/// written as is; use check_npy() first when unsure.
std::vector<std::byte> serialize_npy(const NpyArray& a);
/// Checks the array's invariants (dims >= 0, data size = elements * dtype size, bool bytes 0/1).
Expected<void> check_npy(const ArrayView& a, std::string_view name);
/// Checks and writes the file; errors name the path.
Expected<void> write_npy(const std::string& path, const NpyArray& a);

}  // namespace npu::format
