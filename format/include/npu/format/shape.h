// Shapes as every layer counts and prints them: Dim (a static or symbolic dimension of a
// package tensor), the element count of a static shape, and shape_text(), the one way the
// stack writes a shape in messages and dumps ("[1, 3, 224, 224]", "[N, 3, 224, 224]", "[]"
// for a 0-d tensor). Plain functions of their arguments, no state; safe from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>

namespace npu::format {

/// One dimension: a size >= 0, or a symbol ("N", "batch") bound at run time.
struct Dim {
  int64_t size = 0;
  std::string symbol = {};  // non-empty: symbolic

  bool symbolic() const { return !symbol.empty(); }
  static Dim fixed(int64_t n) { return Dim{n, {}}; }
  static Dim named(std::string s) { return Dim{0, std::move(s)}; }
  bool operator==(const Dim&) const = default;
};

/// Elements of a static shape (1 for a 0-d shape, 0 when a dim is 0); -1 when a dim is
/// negative or the product overflows int64.
int64_t element_count(std::span<const int64_t> dims);

/// "[3, 2]": the dims in brackets, separated by ", " ("[]" for a 0-d shape).
std::string shape_text(std::span<const int64_t> dims);
/// The same with symbolic dims by name: "[N, 3, 8, 8]".
std::string shape_text(std::span<const Dim> dims);

}  // namespace npu::format
