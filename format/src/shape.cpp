// Element counts and the text of shapes (shape.h).
#include "npu/format/shape.h"

namespace npu::format {

namespace {

/// The one formatting rule: "[" + the dims' texts joined by ", " + "]".
template <typename T, typename Text>
std::string bracketed(std::span<const T> dims, Text text) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ", ";
    out += text(dims[i]);
  }
  return out + "]";
}

}  // namespace

int64_t element_count(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

std::string shape_text(std::span<const int64_t> dims) {
  return bracketed(dims, [](int64_t d) { return std::to_string(d); });
}

std::string shape_text(std::span<const Dim> dims) {
  return bracketed(dims,
                   [](const Dim& d) { return d.symbolic() ? d.symbol : std::to_string(d.size); });
}

}  // namespace npu::format
