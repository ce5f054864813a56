// Names in fixed-width table columns (the per-layer tables of --stats and --report): a name
// longer than the column keeps its head and its tail with "…" between them, because the tail
// is what tells layers apart ("/encoder/layers/encoder_layer_11/self_attn/MatMul" becomes
// "/encoder/…_11/self_attn/MatMul", not forty rows of "/encoder/layers/encoder_layer_").
// Widths count characters as a terminal shows them: bytes, except that "…" (3 bytes of
// UTF-8) is one column. Header-only; pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace npu {

/// `name` itself when it has at most `width` bytes; else its first (width - 1) / 3 bytes, "…"
/// and its last bytes, `width` columns in all. A width below 2 cuts to the width.
inline std::string elide_middle(std::string_view name, size_t width) {
  if (name.size() <= width) return std::string(name);
  if (width < 2) return std::string(name.substr(0, width));
  const size_t head = (width - 1) / 3;
  const size_t tail = width - 1 - head;
  std::string out(name.substr(0, head));
  out += "\u2026";
  out += name.substr(name.size() - tail);
  return out;
}

/// elide_middle() padded with spaces to exactly `width` columns (a left-aligned cell).
inline std::string elide_cell(std::string_view name, size_t width) {
  std::string out = elide_middle(name, width);
  const size_t columns = name.size() <= width ? out.size() : width;
  if (columns < width) out.append(width - columns, ' ');
  return out;
}

}  // namespace npu
