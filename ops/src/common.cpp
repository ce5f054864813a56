// Shared helpers of the operator implementations (see common.h).
#include "common.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include "npu/ref/transpose.h"

namespace npu::ops::detail {

Error op_error(const OpCall& c, const std::string& what) {
  return make_error(EINVAL, c.op + ": " + what);
}

Expected<void> check_work(const OpCall& c, int64_t outputs, int64_t per_output, const char* what) {
  uint64_t work = 0;
  const bool overflow = outputs < 0 || per_output < 0 ||
                        __builtin_mul_overflow(static_cast<uint64_t>(outputs),
                                               static_cast<uint64_t>(per_output), &work);
  if (!overflow && work <= c.max_work) return ok();
  const std::string amount = overflow ? std::string("more than 2^63 ") + what
                                      : std::to_string(work) + " " + what + " (" +
                                            std::to_string(outputs) + " outputs × " +
                                            std::to_string(per_output) + ")";
  return make_error(
      EFBIG, c.op + ": " + amount + " exceed the host limit of " + std::to_string(c.max_work));
}

Expected<const NpyArray*> input(const OpCall& c, size_t i) {
  if (i >= c.inputs.size() || c.inputs[i] == nullptr) {
    return op_error(c, "missing input " + std::to_string(i));
  }
  return c.inputs[i];
}

const NpyArray* optional_input(const OpCall& c, size_t i) {
  return i < c.inputs.size() ? c.inputs[i] : nullptr;
}

Expected<void> need_dtype(const OpCall& c, const NpyArray& a, std::initializer_list<DType> ok,
                          const char* what) {
  if (std::find(ok.begin(), ok.end(), a.dtype) != ok.end()) return npu::ok();
  return op_error(c, std::string(what ? what : "") + (what ? " " : "") + "dtype " +
                         format::dtype_name(a.dtype) + " is not supported");
}

Expected<void> need_numeric(const OpCall& c, const NpyArray& a, bool int_ok, const char* what) {
  if (!int_ok) return need_dtype(c, a, {DType::kFloat32, DType::kFloat64}, what);
  return need_dtype(c, a,
                    {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kUint8, DType::kInt16,
                     DType::kUint16, DType::kInt32, DType::kUint32, DType::kInt64, DType::kUint64},
                    what);
}

Expected<void> need_scalar(const OpCall& c, const NpyArray& a, const char* what) {
  if (a.num_elements() == 1) return npu::ok();
  return op_error(c,
                  std::string(what) + " must have one element, got shape " + shape_text(a.shape));
}

Expected<void> need_same_dtype(const OpCall& c, const NpyArray& a, const NpyArray& b) {
  if (a.dtype == b.dtype) return npu::ok();
  return op_error(c, std::string("inputs have different dtypes ") + format::dtype_name(a.dtype) +
                         " and " + format::dtype_name(b.dtype));
}

Expected<int64_t> int_attr(const OpCall& c, const char* name, int64_t def) {
  if (!c.attrs.contains(name)) return def;
  return required_int_attr(c, name);
}

Expected<int64_t> required_int_attr(const OpCall& c, const char* name) {
  if (!c.attrs.contains(name)) return op_error(c, std::string("missing attribute '") + name + "'");
  const json& v = c.attrs[name];
  if (!v.is_number_integer())
    return op_error(c, std::string("attribute ") + name + " is not an int");
  return v.get<int64_t>();
}

Expected<float> float_attr(const OpCall& c, const char* name, float def) {
  if (!c.attrs.contains(name)) return def;
  const json& v = c.attrs[name];
  if (!v.is_number()) return op_error(c, std::string("attribute ") + name + ": not a number");
  return v.get<float>();
}

Expected<std::string> string_attr(const OpCall& c, const char* name, const char* def) {
  if (!c.attrs.contains(name)) return std::string(def);
  const json& v = c.attrs[name];
  if (!v.is_string()) return op_error(c, std::string("attribute ") + name + " is not a string");
  return v.get<std::string>();
}

Expected<float> float_attr(const OpCall& c, const char* name) {
  const AttrSchema* a = c.schema->attribute(name);
  return float_attr(c, name, a && a->default_value ? std::stof(*a->default_value) : 0.0f);
}

Expected<std::string> string_attr(const OpCall& c, const char* name) {
  const AttrSchema* a = c.schema->attribute(name);
  return string_attr(c, name, a && a->default_value ? a->default_value->c_str() : "");
}

Expected<std::optional<std::vector<int64_t>>> ints_attr(const OpCall& c, const char* name) {
  if (!c.attrs.contains(name)) return std::optional<std::vector<int64_t>>{};
  const json& v = c.attrs[name];
  const auto not_ints = [&] {
    return op_error(c, std::string("attribute ") + name + " is not a list of ints");
  };
  if (!v.is_array()) return not_ints();
  std::vector<int64_t> out;
  for (const json& e : v) {
    if (!e.is_number_integer()) return not_ints();
    out.push_back(e.get<int64_t>());
  }
  return std::optional<std::vector<int64_t>>{std::move(out)};
}

Expected<size_t> norm_axis(const OpCall& c, int64_t axis, size_t rank, bool inclusive) {
  const auto r = static_cast<int64_t>(rank) + (inclusive ? 1 : 0);
  const int64_t a = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
  if (a < 0 || a >= r) {
    return op_error(
        c, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  }
  return static_cast<size_t>(a);
}

Expected<void> check_output(const OpCall& c, DType t, const Shape& shape) {
  uint64_t bytes = format::dtype_size(t);
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      return op_error(c, "output shape " + shape_text(shape) + " has a negative dimension");
    empty = empty || d == 0;
  }
  for (int64_t d : shape) {
    if (empty) break;
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) ||
        bytes > c.max_output_bytes) {
      return make_error(EFBIG, c.op + ": output shape " + shape_text(shape) + " is too large");
    }
  }
  return npu::ok();
}

Expected<NpyArray> alloc_output(const OpCall& c, DType t, Shape shape) {
  NPU_TRY(check_output(c, t, shape));
  return NpyArray::zeros(t, std::move(shape));
}

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

// ---- layout ----

namespace {
template <typename T>
Expected<void> transpose_as(const ref::Dims4& dims, const std::array<uint8_t, 4>& perm,
                            const NpyArray& in, NpyArray& out) {
  const size_t n = in.data.size() / sizeof(T);
  return ref::transpose4<T>(dims, perm,
                            std::span<const T>(reinterpret_cast<const T*>(in.data.data()), n),
                            std::span<T>(reinterpret_cast<T*>(out.data.data()), n));
}

/// permute() beyond rank 4 (the reference transpose's): one element copy per output index.
NpyArray permute_any_rank(const NpyArray& x, const std::vector<int64_t>& perm) {
  const size_t rank = perm.size();
  const size_t es = format::dtype_size(x.dtype);
  Shape out_shape(rank);
  std::vector<int64_t> in_strides(rank), src_strides(rank);
  int64_t acc = 1;
  for (size_t d = rank; d-- > 0;) {
    in_strides[d] = acc;
    acc *= x.shape[d];
  }
  for (size_t d = 0; d < rank; ++d) {
    out_shape[d] = x.shape[static_cast<size_t>(perm[d])];
    src_strides[d] = in_strides[static_cast<size_t>(perm[d])];
  }
  NpyArray out = NpyArray::zeros(x.dtype, out_shape);
  for_each_broadcast(out_shape, src_strides, src_strides, [&](int64_t o, int64_t i, int64_t) {
    std::memcpy(out.data.data() + static_cast<size_t>(o) * es,
                x.data.data() + static_cast<size_t>(i) * es, es);
  });
  return out;
}

}  // namespace

Expected<NpyArray> permute(const OpCall& c, const NpyArray& x, const std::vector<int64_t>& perm) {
  const Shape& s = x.shape;
  const size_t rank = s.size();
  if (perm.size() != rank) {
    return op_error(
        c, "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
      return op_error(c, "perm is not a permutation");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  if (rank > 4) return permute_any_rank(x, perm);
  // Pad to 4-d with leading 1s and run the reference 4-d transpose.
  const size_t pad = 4 - rank;
  ref::Dims4 dims{1, 1, 1, 1};
  std::array<uint8_t, 4> p4{0, 1, 2, 3};
  for (size_t i = 0; i < rank; ++i) {
    if (s[i] > std::numeric_limits<uint32_t>::max()) return op_error(c, "dimension too large");
    dims[pad + i] = static_cast<uint32_t>(s[i]);
    p4[pad + i] = static_cast<uint8_t>(pad + static_cast<size_t>(perm[i]));
  }
  Shape out_shape(rank);
  for (size_t i = 0; i < rank; ++i) out_shape[i] = s[static_cast<size_t>(perm[i])];
  NpyArray out = NpyArray::zeros(x.dtype, out_shape);
  if (count(s) == 0) return out;
  Expected<void> r = ok();
  switch (format::dtype_size(x.dtype)) {
    case 1:
      r = transpose_as<uint8_t>(dims, p4, x, out);
      break;
    case 2:
      r = transpose_as<uint16_t>(dims, p4, x, out);
      break;
    case 4:
      r = transpose_as<uint32_t>(dims, p4, x, out);
      break;
    default:
      r = transpose_as<uint64_t>(dims, p4, x, out);
      break;
  }
  if (!r) return op_error(c, r.error().message);
  return out;
}

// ---- matmul ----

Expected<MatmulGeometry> matmul_geometry(const OpCall& c, const Shape& a_shape,
                                         const Shape& b_shape) {
  Shape sa = a_shape, sb = b_shape;
  if (sa.empty() || sb.empty()) return op_error(c, "inputs must have rank >= 1");
  const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  MatmulGeometry g;
  g.m = sa[sa.size() - 2];
  g.k = sa.back();
  g.n = sb.back();
  if (sb[sb.size() - 2] != g.k) {
    return op_error(c, "shapes " + shape_text(a_shape) + " and " + shape_text(b_shape) +
                           " do not match (inner dims " + std::to_string(g.k) + " and " +
                           std::to_string(sb[sb.size() - 2]) + ")");
  }
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  auto batch = broadcast(c, ba, bb);
  if (!batch) return batch.error();
  g.batch = *batch;
  g.a_strides = broadcast_strides(ba, g.batch);
  g.b_strides = broadcast_strides(bb, g.batch);
  g.out_shape = g.batch;
  if (!a_vec) g.out_shape.push_back(g.m);
  if (!b_vec) g.out_shape.push_back(g.n);
  for (int64_t d : {g.m, g.k, g.n}) {
    if (d > std::numeric_limits<uint32_t>::max()) return op_error(c, "dimension too large");
  }
  NPU_TRY(check_work(c, count(g.out_shape), g.k, "multiply-accumulates"));
  return g;
}

// ---- convolution and pooling geometry ----

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
