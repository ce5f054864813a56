// NumPy broadcasting (broadcasting.h).
#include "broadcasting.h"

#include <algorithm>
#include <string>

namespace npu::ops::detail {

Expected<Shape> broadcast(const OpCall& c, std::span<const Shape* const> shapes) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Shape out(rank, 1);
  for (const Shape* s : shapes) {
    for (size_t i = 0; i < s->size(); ++i) {
      int64_t& o = out[rank - s->size() + i];
      const int64_t d = (*s)[i];
      if (d != o && d != 1 && o != 1) {
        std::string names;
        for (const Shape* t : shapes) names += (names.empty() ? "" : " and ") + shape_text(*t);
        return op_error(c, "shapes " + names + " do not broadcast");
      }
      if (o == 1) o = d;
    }
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& s, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    const size_t o = i + (out.size() - s.size());
    st[o] = s[i] == 1 ? 0 : acc;
    acc *= s[i];
  }
  return st;
}

}  // namespace npu::ops::detail
