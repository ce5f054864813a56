// Convolution and pooling windows (window_geometry.h).
#include "window_geometry.h"

#include <string>

#include "attributes.h"

namespace npu::ops::detail {

Expected<AutoPad> auto_pad_attr(const OpCall& c) {
  auto s = string_attr(c, "auto_pad", "NOTSET");
  if (!s) return s.error();
  if (auto mode = parse_auto_pad(*s)) return *mode;
  return op_error(c, "attribute auto_pad: unknown value '" + *s + "'");
}

Expected<SpatialAttrs> spatial_attrs(const OpCall& c, size_t rank,
                                     const std::vector<int64_t>& kernel_from_weights) {
  SpatialAttrs a;
  auto ks = ints_attr(c, "kernel_shape");
  if (!ks) return ks.error();
  if (*ks) {
    a.kernel = **ks;
    if (!kernel_from_weights.empty() && a.kernel != kernel_from_weights) {
      return op_error(c, "attribute kernel_shape " + shape_text(a.kernel) +
                             " does not match the weights' " + shape_text(kernel_from_weights));
    }
  } else if (!kernel_from_weights.empty()) {
    a.kernel = kernel_from_weights;
  } else {
    return op_error(c, "attribute kernel_shape is required");
  }
  struct Spec {
    const char* name;
    std::vector<int64_t>* out;
    size_t size;
    int64_t def;
    int64_t min;
  };
  for (const Spec& s :
       {Spec{"strides", &a.strides, rank, 1, 1}, Spec{"dilations", &a.dilations, rank, 1, 1},
        Spec{"pads", &a.pads, 2 * rank, 0, 0}}) {
    auto v = ints_attr(c, s.name);
    if (!v) return v.error();
    *s.out = *v ? **v : std::vector<int64_t>(s.size, s.def);
    if (s.out->size() != s.size) {
      return op_error(c, std::string("attribute ") + s.name + " has " +
                             std::to_string(s.out->size()) + " values, expected " +
                             std::to_string(s.size));
    }
    for (int64_t x : *s.out) {
      if (x < s.min) {
        return op_error(c, std::string("attribute ") + s.name + ": value " + std::to_string(x) +
                               " must be >= " + std::to_string(s.min));
      }
    }
  }
  if (a.kernel.size() != rank) {
    return op_error(c, "attribute kernel_shape has " + std::to_string(a.kernel.size()) +
                           " values, expected " + std::to_string(rank));
  }
  for (int64_t k : a.kernel) {
    if (k < 1)
      return op_error(c, "attribute kernel_shape: value " + std::to_string(k) + " must be >= 1");
  }
  return a;
}

Expected<std::vector<PadResult>> resolve_windows(const OpCall& c, AutoPad mode,
                                                 const std::vector<int64_t>& x,
                                                 const SpatialAttrs& a, bool ceil_mode) {
  const size_t rank = a.kernel.size();
  std::vector<PadResult> pads(rank);
  for (size_t d = 0; d < rank; ++d) {
    pads[d] = resolve_pads(mode, x[2 + d], a.kernel[d], a.strides[d], a.dilations[d], a.pads[d],
                           a.pads[rank + d], ceil_mode);
    if (pads[d].overflow) {
      return op_error(
          c, "spatial dim " + std::to_string(d) + ": kernel_shape " + std::to_string(a.kernel[d]) +
                 ", dilation " + std::to_string(a.dilations[d]) + ", stride " +
                 std::to_string(a.strides[d]) + " and pads " + std::to_string(a.pads[d]) + "+" +
                 std::to_string(a.pads[rank + d]) + " overflow the int64 range");
    }
    if (pads[d].out < 1) {
      return op_error(c, "kernel " + shape_text(a.kernel) + " does not fit input " + shape_text(x));
    }
  }
  return pads;
}

}  // namespace npu::ops::detail
