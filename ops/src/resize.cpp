// Resize (opset 10-19) and Upsample (opset 7-9; npu/ops/operators.def), with the semantics of
// ONNX's reference implementation (onnx/reference/ops/op_resize.py), which the backend test
// data comes from.
//
// Output size: from `scales`, floor(in * scale) computed in float as ONNX shape inference does
// (so the compile-time shape and the run-time one agree; the roi does not enter it, as in
// shape inference and the reference, though the spec's text multiplies by the roi's extent);
// from `sizes`, the sizes themselves, or with keep_aspect_ratio_policy not_larger/not_smaller
// (opset 18) one scale for every resized axis, the min/max of size/in, and out =
// floor(scale * in + 0.5). Opset 18's `axes` name the dims scales/sizes/roi refer to (others
// keep their size).
//
// Values: each output coordinate x maps to a source coordinate by coordinate_transformation_
// mode, with `width` = scale * in (a float when scales are given, as the reference does):
//   half_pixel            (x + 0.5) / scale - 0.5
//   half_pixel_symmetric  the same shifted by in/2 * (1 - out / width) (opset 19)
//   pytorch_half_pixel    (x + 0.5) / scale - 0.5, or 0 when out == 1 (the spec's rule)
//   align_corners         x * (in - 1) / (width - 1), 0 when width == 1
//   asymmetric            x / scale
//   tf_half_pixel_for_nn  (x + 0.5) / scale (opsets 11-12)
//   tf_crop_and_resize    roi_start * (in - 1) + x * (roi_end - roi_start) * (in - 1) /
//                         (width - 1); a source outside [0, in - 1] gives extrapolation_value
// Resize-10 and Upsample have no such attributes: asymmetric, and nearest takes floor when
// upsampling and ceil when downsampling (what onnxruntime does for those opsets).
// Around the source coordinate, `nearest` picks one element by nearest_mode (round_prefer_floor,
// round_prefer_ceil, floor, ceil), `linear` weighs 2 neighbours, `cubic` 4 with the Keys kernel
// of cubic_coeff_a; with antialias (opset 18, when downscaling) the linear/cubic kernel is
// stretched by 1/scale over more neighbours and normalized. Neighbours outside the input take
// the edge element, or with exclude_outside weigh 0 and the rest are renormalized. Every axis
// is interpolated separately (the kernel is separable; the reference nests the same 1-d
// interpolations), shrinking axes first so that no intermediate is larger than the input or
// the output; axes that map onto themselves are skipped.
//
// The taps of every axis (build_taps: the coordinate transform and the kernel) are also
// what npu::ops::resize_taps() returns (npu/ops/resize_taps.h), from which the compiler's
// resize-to-matmul pass builds the device's interpolation matrices: one definition.
//
// Element types: nearest moves bytes (every dtype); linear and cubic compute in float for
// float32 and in double otherwise, and convert back with Cast's rules (integers truncate and
// saturate, as the reference's astype truncates). Work (output elements x taps, over all
// passes) is checked against the call's max_work and the output against max_output_bytes
// before anything is allocated; the passes poll the deadline.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "attributes.h"
#include "dtype_dispatch.h"
#include "npu/cancel.h"
#include "npu/ops/resize_taps.h"
#include "operands.h"
#include "tensor_common.h"
#include "work_limits.h"

namespace npu::ops::detail {

namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kLegacy };

struct Options {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation = 0.0;
};

/// One axis as the interpolation sees it.
struct Axis {
  int64_t in = 1, out = 1;
  double scale = 1.0;
  double roi_start = 0.0, roi_end = 1.0;
};

/// The source taps of every output index of one axis: n per index, index clamped into the
/// input, weight; `outside` marks indices whose value is the extrapolation value.
struct Taps {
  int64_t n = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> outside;
};

// ---- attributes ----

template <typename E>
struct Named {
  const char* name;
  E value;
  int64_t since = 1, until = std::numeric_limits<int64_t>::max();
};

template <typename E, size_t N>
Expected<E> pick(const OpCall& c, const char* attr, const Named<E> (&table)[N]) {
  auto s = string_attr(c, attr);
  if (!s) return s.error();
  for (const Named<E>& e : table) {
    if (*s == e.name && c.opset >= e.since && c.opset <= e.until) return e.value;
  }
  return op_error(c, std::string("attribute ") + attr + ": '" + *s +
                         "' is not supported at opset " + std::to_string(c.opset));
}

/// Fails when an attribute newer than the call's opset is given.
Expected<void> check_attr_opsets(const OpCall& c) {
  struct Since {
    const char* name;
    int64_t opset;
  };
  for (const Since& a :
       {Since{"coordinate_transformation_mode", 11}, Since{"cubic_coeff_a", 11},
        Since{"exclude_outside", 11}, Since{"extrapolation_value", 11}, Since{"nearest_mode", 11},
        Since{"antialias", 18}, Since{"axes", 18}, Since{"keep_aspect_ratio_policy", 18}}) {
    if (c.opset < a.opset && c.attrs.contains(a.name)) {
      return op_error(c, std::string("attribute ") + a.name + " needs opset " +
                             std::to_string(a.opset) + ", the model has " +
                             std::to_string(c.opset));
    }
  }
  return ok();
}

Expected<Mode> mode_attr(const OpCall& c, bool legacy) {
  static constexpr Named<Mode> kModes[] = {
      {"nearest", Mode::kNearest}, {"linear", Mode::kLinear}, {"cubic", Mode::kCubic, 11}};
  if (!legacy) return pick(c, "mode", kModes);
  static constexpr Named<Mode> kLegacy[] = {{"nearest", Mode::kNearest}, {"linear", Mode::kLinear}};
  return pick(c, "mode", kLegacy);
}

Expected<Options> resize_options(const OpCall& c) {
  NPU_TRY(check_attr_opsets(c));
  Options o;
  auto mode = mode_attr(c, c.opset < 11);
  if (!mode) return mode.error();
  o.mode = *mode;
  if (c.opset < 11) {
    o.coord = Coord::kAsymmetric;
    o.nearest = Nearest::kLegacy;
    return o;
  }
  static constexpr Named<Coord> kCoords[] = {
      {"half_pixel", Coord::kHalfPixel},
      {"half_pixel_symmetric", Coord::kHalfPixelSymmetric, 19},
      {"pytorch_half_pixel", Coord::kPytorchHalfPixel},
      {"align_corners", Coord::kAlignCorners},
      {"asymmetric", Coord::kAsymmetric},
      {"tf_half_pixel_for_nn", Coord::kTfHalfPixelForNn, 11, 12},
      {"tf_crop_and_resize", Coord::kTfCropAndResize}};
  auto coord = pick(c, "coordinate_transformation_mode", kCoords);
  if (!coord) return coord.error();
  o.coord = *coord;
  static constexpr Named<Nearest> kNearest[] = {{"round_prefer_floor", Nearest::kRoundPreferFloor},
                                                {"round_prefer_ceil", Nearest::kRoundPreferCeil},
                                                {"floor", Nearest::kFloor},
                                                {"ceil", Nearest::kCeil}};
  auto nearest = pick(c, "nearest_mode", kNearest);
  if (!nearest) return nearest.error();
  o.nearest = *nearest;
  auto a = float_attr(c, "cubic_coeff_a");
  auto ex = int_attr(c, "exclude_outside", 0);
  auto ev = float_attr(c, "extrapolation_value");
  auto aa = int_attr(c, "antialias", 0);
  if (!a) return a.error();
  if (!ex) return ex.error();
  if (!ev) return ev.error();
  if (!aa) return aa.error();
  o.cubic_a = *a;
  o.exclude_outside = *ex != 0;
  o.extrapolation = *ev;
  o.antialias = *aa != 0;
  if (o.antialias && o.mode == Mode::kNearest) {
    return op_error(c, "antialias applies to the linear and cubic modes, not nearest");
  }
  return o;
}

// ---- output geometry ----

/// The float values of a scales/roi tensor (an empty or absent one: nullopt).
Expected<std::optional<std::vector<double>>> floats_input(const OpCall& c, size_t i,
                                                          const char* what) {
  const NpyArray* a = optional_input(c, i);
  if (!a || a->num_elements() == 0) return std::optional<std::vector<double>>{};
  if (!format::dtype_is_float(a->dtype) || a->dtype == DType::kFloat16) {
    return op_error(
        c, std::string(what) + " must be float32 or float64, not " + format::dtype_name(a->dtype));
  }
  if (a->shape.size() != 1) return op_error(c, std::string(what) + " must be a 1-d tensor");
  std::vector<double> v(static_cast<size_t>(a->num_elements()));
  for (size_t k = 0; k < v.size(); ++k) v[k] = number_at(*a, static_cast<int64_t>(k));
  return std::optional<std::vector<double>>{std::move(v)};
}

std::string list_text(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%g", i ? ", " : "", v[i]);
    s += buf;
  }
  return s + "]";
}

/// The axes scales/sizes/roi refer to: attribute `axes` (opset 18), else every dim.
Expected<std::vector<size_t>> resize_axes(const OpCall& c, size_t rank) {
  auto list = ints_attr(c, "axes");
  if (!list) return list.error();
  std::vector<size_t> axes;
  if (!*list) {
    axes.resize(rank);
    std::iota(axes.begin(), axes.end(), size_t{0});
    return axes;
  }
  for (int64_t a : **list) {
    auto ax = norm_axis(c, a, rank);
    if (!ax) return ax.error();
    if (std::find(axes.begin(), axes.end(), *ax) != axes.end()) {
      return op_error(c, "axis " + std::to_string(a) + " is repeated in axes");
    }
    axes.push_back(*ax);
  }
  return axes;
}

/// Every axis of the output from `scales` or `sizes` (indexed like `axes`) and the roi.
struct ResizeGeometry {
  std::vector<Axis> axes;
  Shape out_shape;
};

Expected<ResizeGeometry> geometry(const OpCall& c, const Shape& in, const std::vector<size_t>& axes,
                                  const std::optional<std::vector<double>>& scales,
                                  const std::optional<Shape>& sizes,
                                  const std::optional<std::vector<double>>& roi, bool crop) {
  ResizeGeometry g;
  g.axes.resize(in.size());
  for (size_t d = 0; d < in.size(); ++d) g.axes[d] = Axis{in[d], in[d], 1.0};
  const size_t n = axes.size();
  if (scales.has_value() == sizes.has_value()) {
    return op_error(c, scales ? "scales and sizes are both given" : "needs scales or sizes");
  }
  if (scales) {
    if (scales->size() != n) {
      return op_error(c, "scales has " + std::to_string(scales->size()) + " values for " +
                             std::to_string(n) + " axes");
    }
    for (size_t i = 0; i < n; ++i) {
      const double s = (*scales)[i];
      if (!(s > 0) || !std::isfinite(s)) {
        return op_error(c, "scales " + list_text(*scales) + " must be positive and finite");
      }
      Axis& a = g.axes[axes[i]];
      // float, as ONNX shape inference computes it
      const float out = std::floor(static_cast<float>(a.in) * static_cast<float>(s));
      if (!(out < 0x1p62f)) {
        return make_error(EFBIG,
                          c.op + ": scales " + list_text(*scales) + " give an output too large");
      }
      a.out = static_cast<int64_t>(out);
      a.scale = static_cast<double>(static_cast<float>(s));
    }
  } else {
    if (sizes->size() != n) {
      return op_error(c, "sizes has " + std::to_string(sizes->size()) + " values for " +
                             std::to_string(n) + " axes");
    }
    for (size_t i = 0; i < n; ++i) {
      if ((*sizes)[i] < 0)
        return op_error(c, "sizes " + shape_text(*sizes) + " has a negative value");
      g.axes[axes[i]].out = (*sizes)[i];
    }
    auto policy = string_attr(c, "keep_aspect_ratio_policy");
    if (!policy) return policy.error();
    if (*policy != "stretch" && *policy != "not_larger" && *policy != "not_smaller") {
      return op_error(c, "keep_aspect_ratio_policy '" + *policy + "' is not supported");
    }
    if (*policy == "stretch") {
      for (size_t d : axes) {
        Axis& a = g.axes[d];
        a.scale = a.in > 0 ? static_cast<double>(a.out) / static_cast<double>(a.in) : 1.0;
      }
    } else {
      double common = *policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
      for (size_t d : axes) {
        const Axis& a = g.axes[d];
        if (a.in == 0) continue;
        const double s = static_cast<double>(a.out) / static_cast<double>(a.in);
        common = *policy == "not_larger" ? std::min(common, s) : std::max(common, s);
      }
      for (size_t d : axes) {
        Axis& a = g.axes[d];
        const double out = std::floor(common * static_cast<double>(a.in) + 0.5);
        if (!(out < 0x1p62)) return make_error(EFBIG, c.op + ": sizes give an output too large");
        a.out = static_cast<int64_t>(out);
        a.scale = common;
      }
    }
  }
  if (crop) {
    if (!roi) return op_error(c, "tf_crop_and_resize needs roi");
    if (roi->size() != 2 * n) {
      return op_error(c, "roi has " + std::to_string(roi->size()) + " values for " +
                             std::to_string(n) + " axes (starts, then ends)");
    }
    for (size_t i = 0; i < n; ++i) {
      g.axes[axes[i]].roi_start = (*roi)[i];
      g.axes[axes[i]].roi_end = (*roi)[n + i];
    }
  }
  for (const Axis& a : g.axes) g.out_shape.push_back(a.out);
  return g;
}

// ---- taps ----

/// The source coordinate of output index x, nullopt when it is outside the crop.
std::optional<double> source_coordinate(const Options& o, const Axis& a, int64_t x) {
  const double in = static_cast<double>(a.in), xd = static_cast<double>(x);
  const double width = a.scale * in;
  switch (o.coord) {
    case Coord::kHalfPixel:
      return (xd + 0.5) / a.scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(a.out) / width;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (xd + 0.5) / a.scale - 0.5;
    }
    case Coord::kPytorchHalfPixel:
      return a.out > 1 ? (xd + 0.5) / a.scale - 0.5 : 0.0;
    case Coord::kAlignCorners:
      return width == 1 ? 0.0 : xd * (in - 1) / (width - 1);
    case Coord::kAsymmetric:
      return xd / a.scale;
    case Coord::kTfHalfPixelForNn:
      return (xd + 0.5) / a.scale;
    case Coord::kTfCropAndResize: {
      const double extent = a.roi_end - a.roi_start;
      double v = width == 1 ? extent * (in - 1) / 2 : xd * extent * (in - 1) / (width - 1);
      v += a.roi_start * (in - 1);
      if (!(v >= 0 && v <= in - 1)) return std::nullopt;
      return v;
    }
  }
  return 0.0;
}

double cubic(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

/// Taps per output index: 1 (nearest), 2 (linear), 4 (cubic), more with antialias.
int64_t tap_count(const Options& o, double scale) {
  if (o.mode == Mode::kNearest) return 1;
  const double reach = o.mode == Mode::kLinear ? 1.0 : 2.0;
  if (!o.antialias || scale >= 1) return 2 * static_cast<int64_t>(reach);
  const double start = std::floor(-reach / scale) + 1;  // the reference's i_start
  return 2 - 2 * static_cast<int64_t>(start);
}

/// The weights of the n neighbours from x_int - n/2 + 1 on, for the fraction `ratio` in (0, 1].
void kernel_weights(const Options& o, double ratio, double scale, int64_t n, double* w) {
  if (o.mode == Mode::kLinear && !o.antialias) {
    w[0] = 1 - ratio;
    w[1] = ratio;
    return;
  }
  if (o.mode == Mode::kCubic && !o.antialias) {
    // as the reference writes them (Keys' kernel at 1 + r, r, 1 - r, 2 - r)
    w[0] = cubic(1 + ratio, o.cubic_a);
    w[1] = cubic(ratio, o.cubic_a);
    w[2] = cubic(1 - ratio, o.cubic_a);
    w[3] = cubic(2 - ratio, o.cubic_a);
    return;
  }
  const double s = std::min(scale, 1.0);
  const int64_t first = 1 - n / 2;
  double sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    const double arg = s * (static_cast<double>(first + k) - ratio);
    w[k] =
        o.mode == Mode::kLinear ? std::clamp(1 - std::abs(arg), 0.0, 1.0) : cubic(arg, o.cubic_a);
    sum += w[k];
  }
  for (int64_t k = 0; k < n; ++k) w[k] /= sum;
}

int64_t nearest_index(const Options& o, const Axis& a, double xo) {
  const double fl = std::floor(xo);
  const double ratio = xo - fl;
  double pick = fl;
  switch (o.nearest) {
    case Nearest::kLegacy:
      pick = a.scale < 1 ? std::ceil(xo) : fl;
      break;
    case Nearest::kRoundPreferFloor:
      pick = ratio <= 0.5 ? fl : fl + 1;
      break;
    case Nearest::kRoundPreferCeil:
      pick = ratio < 0.5 ? fl : fl + 1;
      break;
    case Nearest::kFloor:
      break;
    case Nearest::kCeil:
      pick = ratio == 0 ? fl : fl + 1;
      break;
  }
  return std::clamp<int64_t>(static_cast<int64_t>(pick), 0, a.in - 1);
}

Taps build_taps(const Options& o, const Axis& a) {
  Taps t;
  t.n = tap_count(o, a.scale);
  const auto n = static_cast<size_t>(t.n);
  const auto out = static_cast<size_t>(a.out);
  t.index.assign(out * n, 0);
  t.weight.assign(out * n, 0.0);
  t.outside.assign(out, 0);
  // Coordinates far outside the input clamp to the same edge taps; bounding them keeps the
  // integer conversions defined.
  const double lo = -static_cast<double>(t.n) - 2, hi = static_cast<double>(a.in + t.n) + 2;
  for (size_t x = 0; x < out; ++x) {
    auto xo = source_coordinate(o, a, static_cast<int64_t>(x));
    if (!xo) {
      t.outside[x] = 1;
      continue;
    }
    const double v = std::clamp(*xo, lo, hi);
    int64_t* idx = &t.index[x * n];
    double* w = &t.weight[x * n];
    if (o.mode == Mode::kNearest) {
      idx[0] = nearest_index(o, a, v);
      w[0] = 1;
      continue;
    }
    // The fraction in (0, 1]: an integral coordinate is the right end of its left interval.
    double fl = std::floor(v);
    double ratio = v - fl;
    if (ratio == 0) {
      ratio = 1;
      fl -= 1;
    }
    const int64_t first = static_cast<int64_t>(fl) - t.n / 2 + 1;
    kernel_weights(o, ratio, a.scale, t.n, w);
    if (o.exclude_outside) {
      double sum = 0;
      for (size_t k = 0; k < n; ++k) {
        const int64_t i = first + static_cast<int64_t>(k);
        if (i < 0 || i >= a.in) w[k] = 0;
        sum += w[k];
      }
      if (sum != 0) {
        for (size_t k = 0; k < n; ++k) w[k] /= sum;
      }
    }
    for (size_t k = 0; k < n; ++k) {
      idx[k] = std::clamp<int64_t>(first + static_cast<int64_t>(k), 0, a.in - 1);
    }
  }
  return t;
}

/// Whether every output index takes exactly its own input element (the pass can be skipped).
bool is_identity(const Axis& a, const Taps& t) {
  if (a.in != a.out) return false;
  const auto n = static_cast<size_t>(t.n);
  for (size_t x = 0; x < static_cast<size_t>(a.out); ++x) {
    if (t.outside[x]) return false;
    double own = 0;
    for (size_t k = 0; k < n; ++k) {
      const double w = t.weight[x * n + k];
      if (t.index[x * n + k] == static_cast<int64_t>(x)) {
        own += w;
      } else if (w != 0) {
        return false;
      }
    }
    if (own != 1.0) return false;
  }
  return true;
}

// ---- interpolation ----

/// Nearest: one gather of element bytes (remap), the extrapolation value where a tap is
/// outside the crop.
Expected<NpyArray> resize_nearest(const OpCall& c, const NpyArray& x, const Options& o,
                                  const std::vector<Axis>& axes) {
  std::vector<Shape> maps(axes.size());
  for (size_t d = 0; d < axes.size(); ++d) {
    const Taps t = build_taps(o, axes[d]);
    maps[d].resize(static_cast<size_t>(axes[d].out));
    for (size_t i = 0; i < maps[d].size(); ++i) maps[d][i] = t.outside[i] ? -1 : t.index[i];
  }
  std::vector<std::byte> fill;
  if (o.coord == Coord::kTfCropAndResize && x.dtype != DType::kFloat16) {
    auto v = convert_to(c, NpyArray::of<double>({}, std::vector<double>{o.extrapolation}), x.dtype);
    if (!v) return v.error();
    fill = v->data;
  }
  return remap(c, x, x.shape, maps, fill);
}

/// One pass along `axis`: src [outer, in, inner] -> dst [outer, out, inner].
template <typename C>
Expected<void> interpolate_axis(const OpCall& c, const std::vector<C>& src, std::vector<C>& dst,
                                const Shape& shape, size_t axis, const Axis& a, const Taps& t,
                                C extrapolation) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < axis) outer *= shape[d];
    if (d > axis) inner *= shape[d];
  }
  dst.assign(static_cast<size_t>(outer * a.out * inner), C{0});
  const auto n = static_cast<size_t>(t.n);
  const auto in_n = static_cast<size_t>(inner);
  for (int64_t o = 0; o < outer; ++o) {
    if (cancelled()) return op_error(c, "cancelled");
    const C* s = src.data() + static_cast<size_t>(o * a.in * inner);
    C* row = dst.data() + static_cast<size_t>(o * a.out * inner);
    for (size_t x = 0; x < static_cast<size_t>(a.out); ++x) {
      C* d = row + x * in_n;
      if (t.outside[x]) {
        std::fill(d, d + in_n, extrapolation);
        continue;
      }
      for (size_t k = 0; k < n; ++k) {
        const C w = static_cast<C>(t.weight[x * n + k]);
        const C* p = s + static_cast<size_t>(t.index[x * n + k]) * in_n;
        for (size_t j = 0; j < in_n; ++j) d[j] += w * p[j];
      }
    }
  }
  return ok();
}

/// Linear and cubic: the passes in compute type C (float for float32, double otherwise).
template <typename C>
Expected<NpyArray> resize_separable(const OpCall& c, const NpyArray& x, const Options& o,
                                    const std::vector<Axis>& axes, const Shape& out_shape) {
  std::vector<C> cur(static_cast<size_t>(x.num_elements()));
  if constexpr (std::is_same_v<C, float>) {
    const auto v = x.view<float>();
    std::copy(v.begin(), v.end(), cur.begin());
  } else {
    for (size_t i = 0; i < cur.size(); ++i) cur[i] = number_at(x, static_cast<int64_t>(i));
  }
  // Shrinking axes first keeps every intermediate no larger than the input or the output.
  std::vector<size_t> order(axes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t p, size_t q) {
    return static_cast<double>(axes[p].out) * static_cast<double>(axes[q].in) <
           static_cast<double>(axes[q].out) * static_cast<double>(axes[p].in);
  });
  Shape shape = x.shape;
  std::vector<C> next;
  for (size_t d : order) {
    const Taps t = build_taps(o, axes[d]);
    if (is_identity(axes[d], t)) continue;
    NPU_TRY(
        interpolate_axis<C>(c, cur, next, shape, d, axes[d], t, static_cast<C>(o.extrapolation)));
    cur.swap(next);
    shape[d] = axes[d].out;
  }
  NpyArray y = NpyArray::of<C>(out_shape, cur);
  if (y.dtype == x.dtype) return y;
  return convert_to(c, y, x.dtype);
}

/// Work, output size, then the interpolation.
HostOutputs resize_core(const OpCall& c, const NpyArray& x, const Options& o,
                        const ResizeGeometry& g) {
  NPU_TRY(check_output(c, x.dtype, g.out_shape));
  if (count(g.out_shape) == 0) return single(NpyArray::zeros(x.dtype, g.out_shape));
  for (const Axis& a : g.axes) {
    if (a.in == 0) {
      return op_error(c, "cannot resize the empty input " + shape_text(x.shape) + " to " +
                             shape_text(g.out_shape));
    }
  }
  // Taps over all passes (each pass's output is at most the larger of input and output).
  int64_t work = 0;
  const int64_t largest = std::max(count(x.shape), count(g.out_shape));
  for (const Axis& a : g.axes) {
    int64_t pass = 0;
    if (__builtin_mul_overflow(largest, tap_count(o, a.scale), &pass) ||
        __builtin_add_overflow(work, pass, &work)) {
      work = -1;
      break;
    }
  }
  NPU_TRY(check_work(c, work, 1, "interpolation taps"));
  if (o.mode == Mode::kNearest) {
    auto y = resize_nearest(c, x, o, g.axes);
    if (!y) return y.error();
    return single(std::move(*y));
  }
  if (x.dtype == DType::kBool || x.dtype == DType::kFloat16) {
    return op_error(c, std::string("dtype ") + format::dtype_name(x.dtype) +
                           " is not supported by the linear and cubic modes");
  }
  auto y = x.dtype == DType::kFloat32 ? resize_separable<float>(c, x, o, g.axes, g.out_shape)
                                      : resize_separable<double>(c, x, o, g.axes, g.out_shape);
  if (!y) return y.error();
  return single(std::move(*y));
}

/// What a call interpolates: its options and every axis.
struct Plan {
  Options o;
  ResizeGeometry g;
};

Expected<Plan> resize_plan(const OpCall& c, const Shape& s) {
  auto o = resize_options(c);
  if (!o) return o.error();
  auto axes = resize_axes(c, s.size());
  if (!axes) return axes.error();
  // Opset 10: X, scales. From 11: X, roi, scales, sizes (an empty tensor counts as absent).
  const size_t scales_at = c.opset < 11 ? 1 : 2;
  auto scales = floats_input(c, scales_at, "scales");
  if (!scales) return scales.error();
  std::optional<Shape> sizes;
  if (const NpyArray* z = c.opset < 11 ? nullptr : optional_input(c, 3);
      z && z->num_elements() > 0) {
    if (z->shape.size() != 1) return op_error(c, "sizes must be a 1-d tensor");
    auto v = int_values(c, *z, "sizes");
    if (!v) return v.error();
    sizes = std::move(*v);
  }
  auto roi = c.opset < 11 ? Expected<std::optional<std::vector<double>>>{std::nullopt}
                          : floats_input(c, 1, "roi");
  if (!roi) return roi.error();
  auto g = geometry(c, s, *axes, *scales, sizes, *roi, o->coord == Coord::kTfCropAndResize);
  if (!g) return g.error();
  return Plan{*o, std::move(*g)};
}

Expected<Plan> upsample_plan(const OpCall& c, const Shape& s) {
  Options o;
  o.coord = Coord::kAsymmetric;
  o.nearest = Nearest::kLegacy;
  auto mode = mode_attr(c, true);
  if (!mode) return mode.error();
  o.mode = *mode;
  // Opset 7: the scales attribute; from 9: input 1.
  std::optional<std::vector<double>> scales;
  if (c.opset < 9) {
    if (!c.attrs.contains("scales")) return op_error(c, "missing attribute 'scales'");
    scales = c.attrs["scales"].get<std::vector<double>>();
  } else {
    if (c.attrs.contains("scales")) {
      return op_error(c, "attribute scales is an input from opset 9 on");
    }
    auto in = floats_input(c, 1, "scales");
    if (!in) return in.error();
    if (!*in) return op_error(c, "missing input 1");
    scales = std::move(*in);
  }
  for (double v : *scales) {
    if (!(v >= 1)) return op_error(c, "scales " + list_text(*scales) + " must be >= 1");
  }
  std::vector<size_t> axes(s.size());
  std::iota(axes.begin(), axes.end(), size_t{0});
  auto g = geometry(c, s, axes, scales, std::nullopt, std::nullopt, false);
  if (!g) return g.error();
  return Plan{o, std::move(*g)};
}

/// The plan of a Resize or an Upsample call (resize_taps() plans either).
Expected<Plan> plan_call(const OpCall& c, const Shape& s) {
  return c.op == "Upsample" ? upsample_plan(c, s) : resize_plan(c, s);
}

HostOutputs interpolate(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto p = plan_call(c, (*x)->shape);
  if (!p) return p.error();
  return resize_core(c, **x, p->o, p->g);
}

}  // namespace

HostOutputs resize(const OpCall& c) {
  return interpolate(c);
}

HostOutputs upsample(const OpCall& c) {
  return interpolate(c);
}

}  // namespace npu::ops::detail

namespace npu::ops {

std::vector<double> ResizeAxisTaps::matrix() const {
  std::vector<double> m(static_cast<size_t>(out * in), 0.0);
  const auto n = static_cast<size_t>(taps);
  for (size_t o = 0; o < static_cast<size_t>(out); ++o) {
    if (outside[o]) continue;
    for (size_t k = 0; k < n; ++k) {
      m[o * static_cast<size_t>(in) + static_cast<size_t>(index[o * n + k])] += weight[o * n + k];
    }
  }
  return m;
}

Expected<ResizeTaps> resize_taps(std::string_view op_type, std::string_view attributes,
                                 std::span<const format::NpyArray* const> inputs) {
  using namespace detail;
  if (op_type != "Resize" && op_type != "Upsample") {
    return make_error(EINVAL, std::string(op_type) + ": not a Resize or Upsample");
  }
  ResizeTaps out;
  auto done = with_call(op_type, attributes, inputs, [&](const OpCall& c) -> Expected<void> {
    auto x = input(c, 0);
    if (!x) return x.error();
    auto p = plan_call(c, (*x)->shape);
    if (!p) return p.error();
    // The taps are allocated per output index: bounded like an output of that many elements.
    for (const Axis& a : p->g.axes) {
      NPU_TRY(check_output(c, DType::kFloat64, {a.out, tap_count(p->o, a.scale)}));
      if (a.in == 0 && a.out > 0) return op_error(c, "cannot resize an empty axis");
    }
    out.mode = p->o.mode == Mode::kNearest  ? ResizeMode::kNearest
               : p->o.mode == Mode::kLinear ? ResizeMode::kLinear
                                            : ResizeMode::kCubic;
    out.extrapolation_value = p->o.extrapolation;
    for (const Axis& a : p->g.axes) {
      Taps t = build_taps(p->o, a);
      ResizeAxisTaps r;
      r.in = a.in;
      r.out = a.out;
      r.taps = t.n;
      r.identity = is_identity(a, t);
      r.index = std::move(t.index);
      r.weight = std::move(t.weight);
      r.outside = std::move(t.outside);
      out.axes.push_back(std::move(r));
    }
    return ok();
  });
  if (!done) return done.error();
  return out;
}

}  // namespace npu::ops
