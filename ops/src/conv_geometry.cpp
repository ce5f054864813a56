// Convolution geometry and layouts (conv_geometry.h).
#include "conv_geometry.h"

#include <limits>
#include <string>
#include <vector>

#include "attributes.h"
#include "permute.h"
#include "window_geometry.h"
#include "work_limits.h"

namespace npu::ops::detail {

Expected<ConvGeometry> conv_geometry(const OpCall& c, const Shape& x, const Shape& w) {
  if (x.size() < 3) return op_error(c, "input must have rank >= 3, got " + shape_text(x));
  const size_t rank = x.size() - 2;
  if (rank > 2) {
    return op_error(c, std::to_string(rank) + "-d convolution is not supported (1-d and 2-d)");
  }
  if (w.size() != x.size()) {
    return op_error(
        c, "weights " + shape_text(w) + " do not match input rank " + std::to_string(x.size()));
  }
  auto group = int_attr(c, "group", 1);
  if (!group) return group.error();
  if (*group < 1) return op_error(c, "attribute group must be >= 1");
  if (w[0] < 1 || w[0] % *group != 0 || x[1] != w[1] * *group) {
    return op_error(c, "weights " + shape_text(w) + " do not match input " + shape_text(x) +
                           " with group " + std::to_string(*group));
  }
  auto attrs = spatial_attrs(c, rank, Shape(w.begin() + 2, w.end()));
  if (!attrs) return attrs.error();
  auto mode = auto_pad_attr(c);
  if (!mode) return mode.error();
  ConvGeometry g;
  g.out_shape = {x[0], w[0]};
  auto windows = resolve_windows(c, *mode, x, *attrs, false);
  if (!windows) return windows.error();
  const std::vector<PadResult>& pads = *windows;
  for (const PadResult& p : pads) g.out_shape.push_back(p.out);
  NPU_TRY(check_work(c, count(g.out_shape), count(w) / w[0], "multiply-accumulates"));
  for (int64_t v : x) {
    if (v > std::numeric_limits<uint32_t>::max()) return op_error(c, "dimension too large");
  }
  for (const PadResult& p : pads) {
    if (p.begin > std::numeric_limits<uint32_t>::max() ||
        p.end > std::numeric_limits<uint32_t>::max()) {
      return op_error(c, "padding too large");
    }
  }
  auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
  ref::Conv2dShape& s = g.s;
  const size_t wd = rank - 1;  // spatial index of the width (1-d: height 1)
  s.batch = u(x[0]);
  s.in_c = u(x[1]);
  s.out_c = u(w[0]);
  s.groups = u(*group);
  s.in_w = u(x[2 + wd]);
  s.out_w = u(pads[wd].out);
  s.k_w = u(attrs->kernel[wd]);
  s.stride_w = u(attrs->strides[wd]);
  s.dil_w = u(attrs->dilations[wd]);
  s.pad_left = u(pads[wd].begin);
  s.pad_right = u(pads[wd].end);
  if (rank == 2) {
    s.in_h = u(x[2]);
    s.out_h = u(pads[0].out);
    s.k_h = u(attrs->kernel[0]);
    s.stride_h = u(attrs->strides[0]);
    s.dil_h = u(attrs->dilations[0]);
    s.pad_top = u(pads[0].begin);
    s.pad_bottom = u(pads[0].end);
  }
  return g;
}

namespace {
NpyArray reshaped(const NpyArray& a, Shape shape) {
  NpyArray out = a;
  out.shape = std::move(shape);
  return out;
}
}  // namespace

Expected<NpyArray> conv_input_nhwc(const OpCall& c, const NpyArray& x, const ConvGeometry& g) {
  const ref::Conv2dShape& s = g.s;
  return permute(c, reshaped(x, {s.batch, s.in_c, s.in_h, s.in_w}), {0, 2, 3, 1});
}

Expected<NpyArray> conv_weights_ohwi(const OpCall& c, const NpyArray& w, const ConvGeometry& g) {
  const ref::Conv2dShape& s = g.s;
  return permute(c, reshaped(w, {s.out_c, s.in_c / s.groups, s.k_h, s.k_w}), {0, 2, 3, 1});
}

Expected<NpyArray> conv_output_nchw(const OpCall& c, const NpyArray& y_nhwc,
                                    const ConvGeometry& g) {
  auto y = permute(c, y_nhwc, {0, 3, 1, 2});
  if (!y) return y.error();
  y->shape = g.out_shape;
  return y;
}

}  // namespace npu::ops::detail
