// Convolution and pooling kernels: layouts (Transposes to NCHW/OIHW and back), Relax's padding
// forms, and the inference of missing window attributes from the recorded shapes: the Relax
// defaults when they give the recorded output, otherwise the one natural assignment per
// spatial axis that does (docs/tvm.md, "Attribute inference").
#include <algorithm>

#include "npu/format/shape.h"
#include "tvm/tvm_kernels.h"

namespace npu::compiler::tvm {

namespace {

/// The largest stride, padding or (searched) pool size inference considers: beyond it nothing
/// is "natural", and the search stays small on any input.
constexpr int64_t kMaxSearch = 256;
/// Window attributes (strides, padding, dilation, pool size) beyond this are refused.
constexpr int64_t kMaxWindow = int64_t{1} << 20;

/// One spatial axis of a sliding window.
struct Axis {
  int64_t kernel = 1, stride = 1, pad_begin = 0, pad_end = 0, dilation = 1;
  bool operator==(const Axis&) const = default;
};

/// Output size along an axis as ONNX computes it (-1: the window does not fit). With ceil_mode
/// a window may not start in the end padding.
int64_t out_size(int64_t in, const Axis& a, bool ceil) {
  const int64_t span = in + a.pad_begin + a.pad_end - (a.dilation * (a.kernel - 1) + 1);
  if (span < 0 || a.stride < 1) return -1;
  int64_t o = (ceil ? (span + a.stride - 1) / a.stride : span / a.stride) + 1;
  if (ceil && (o - 1) * a.stride >= in + a.pad_begin) --o;
  return o;
}

/// The window attributes of a kernel: each either recorded or missing (then the default is
/// tried first, then inference).
struct WindowSpec {
  size_t rank = 2;
  std::vector<int64_t> in, out;  // spatial dims of the input and the recorded output (-1 unknown)
  std::optional<std::vector<int64_t>> kernel, strides, pads, dilations;  // recorded
  std::vector<int64_t> default_kernel, default_strides, default_pads, default_dilations;
  bool ceil = false;
};

/// Relax's padding forms for `rank` spatial dims: one value, one per axis (both sides) or
/// begins then ends; the result is ONNX's pads (begins, then ends).
Expected<std::vector<int64_t>> expand_padding(std::vector<int64_t> p, size_t rank,
                                              const KernelCall& c) {
  if (p.size() == 1) p.assign(2 * rank, p[0]);
  if (p.size() == rank) p.insert(p.end(), p.begin(), p.end());
  if (p.size() != 2 * rank) {
    return c.fail("attribute 'padding' has " + std::to_string(p.size()) + " values for " +
                  std::to_string(rank) + " spatial axes");
  }
  for (int64_t v : p) {
    if (v < 0 || v > kMaxWindow) {
      return c.fail("attribute 'padding' has " + std::to_string(v) + " (must be 0.." +
                    std::to_string(kMaxWindow) + ")");
    }
  }
  return p;
}

std::vector<Axis> axes_of(const WindowSpec& w, const std::vector<int64_t>& kernel,
                          const std::vector<int64_t>& strides, const std::vector<int64_t>& pads,
                          const std::vector<int64_t>& dilations) {
  std::vector<Axis> axes(w.rank);
  for (size_t a = 0; a < w.rank; ++a) {
    axes[a] = {kernel[a], strides[a], pads[a], pads[a + w.rank], dilations[a]};
  }
  return axes;
}

bool fits(const WindowSpec& w, const std::vector<Axis>& axes) {
  for (size_t a = 0; a < w.rank; ++a) {
    if (out_size(w.in[a], axes[a], w.ceil) < 0) return false;
    if (w.out[a] >= 0 && out_size(w.in[a], axes[a], w.ceil) != w.out[a]) return false;
  }
  return true;
}

/// The assignments of the missing attributes that give axis `a`'s recorded size: strides in
/// 1..max(kernel, 2), symmetric padding in 0..(window-1)/2, a missing pool size up to the
/// input; pool size and stride missing together are taken equal, k with input = k x output
/// (a k x k pool with stride k).
std::vector<Axis> candidates(const WindowSpec& w, size_t a, const Axis& base) {
  std::vector<Axis> fit;
  if (w.out[a] < 1) return fit;
  const bool tie = !w.kernel && !w.strides;
  int64_t kmin = base.kernel, kmax = base.kernel;
  if (tie) {  // the input is the output times k
    if (w.in[a] % w.out[a] != 0) return fit;
    kmin = kmax = w.in[a] / w.out[a];
  } else if (!w.kernel) {
    kmin = 1, kmax = std::min(w.in[a], kMaxSearch);
  }
  for (int64_t k = kmin; k <= kmax; ++k) {
    const int64_t smin = w.strides ? base.stride : (tie ? k : 1);
    const int64_t smax =
        w.strides ? base.stride : (tie ? k : std::min(std::max<int64_t>(k, 2), kMaxSearch));
    const int64_t window = base.dilation * (k - 1) + 1;
    const int64_t pmax = w.pads || !w.kernel ? 0 : std::min((window - 1) / 2, kMaxSearch);
    for (int64_t s = smin; s <= smax; ++s) {
      for (int64_t p = 0; p <= pmax; ++p) {
        Axis x{k, s, w.pads ? base.pad_begin : p, w.pads ? base.pad_end : p, base.dilation};
        if (out_size(w.in[a], x, w.ceil) == w.out[a] &&
            std::find(fit.begin(), fit.end(), x) == fit.end()) {
          fit.push_back(x);
        }
      }
    }
  }
  return fit;
}

/// Resolves the window: recorded values, else the defaults if they give the recorded output,
/// else the unique assignment per axis.
Expected<std::vector<Axis>> resolve(const WindowSpec& w, const KernelCall& c,
                                    const std::vector<std::string>& missing_names) {
  const auto base =
      axes_of(w, w.kernel.value_or(w.default_kernel), w.strides.value_or(w.default_strides),
              w.pads.value_or(w.default_pads), w.dilations.value_or(w.default_dilations));
  if (fits(w, base)) return base;
  std::string names;
  for (const auto& n : missing_names) names += (names.empty() ? "'" : ", '") + n + "'";
  const std::string shapes =
      "(input " + format::shape_text(w.in) + ", output " + format::shape_text(w.out) + ")";
  if (missing_names.empty()) {
    return c.fail("the attributes do not give the recorded output shape " + shapes);
  }
  std::vector<Axis> axes;
  for (size_t a = 0; a < w.rank; ++a) {
    const auto fit = candidates(w, a, base[a]);
    if (fit.size() != 1) {
      return c.fail("attribute" + std::string(missing_names.size() > 1 ? "s " : " ") + names +
                    (missing_names.size() > 1 ? " are" : " is") +
                    " missing and the shapes do not determine " +
                    (missing_names.size() > 1 ? "them " : "it ") + shapes + ": " +
                    (fit.empty() ? "no natural assignment fits"
                                 : std::to_string(fit.size()) + " assignments fit") +
                    " spatial axis " + std::to_string(a));
    }
    axes.push_back(fit[0]);
  }
  return axes;
}

/// The recorded value of a window attribute, expanded to the spatial rank.
Expected<std::optional<std::vector<int64_t>>> recorded(const KernelCall& c, const char* name,
                                                       size_t rank, bool is_padding) {
  if (!c.attrs.given(name)) return std::optional<std::vector<int64_t>>{};
  std::vector<int64_t> v = c.attrs.ints(name, rank);
  if (is_padding) {
    auto p = expand_padding(std::move(v), rank, c);
    if (!p) return p.error();
    return std::optional(std::move(*p));
  }
  if (v.size() == 1) v.assign(rank, v[0]);
  if (v.size() != rank) {
    return c.fail("attribute '" + std::string(name) + "' has " + std::to_string(v.size()) +
                  " values for " + std::to_string(rank) + " spatial axes");
  }
  for (int64_t x : v) {
    if (x < 1 || x > kMaxWindow) {
      return c.fail("attribute '" + std::string(name) + "' has " + std::to_string(x) +
                    " (must be 1.." + std::to_string(kMaxWindow) + ")");
    }
  }
  return std::optional(std::move(v));
}

/// Fills the recorded and default window attributes of `w` (kernel only for pools).
Expected<std::vector<std::string>> read_window(const KernelCall& c, WindowSpec& w, bool pool) {
  std::vector<std::string> missing;
  struct Field {
    const char* name;
    std::optional<std::vector<int64_t>>* value;
    std::vector<int64_t>* fallback;
    bool padding;
  };
  std::vector<Field> fields = {{"strides", &w.strides, &w.default_strides, false},
                               {"padding", &w.pads, &w.default_pads, true},
                               {"dilation", &w.dilations, &w.default_dilations, false}};
  if (pool) fields.insert(fields.begin(), {"pool_size", &w.kernel, &w.default_kernel, false});
  for (const Field& f : fields) {
    auto v = recorded(c, f.name, w.rank, f.padding);
    if (!v) return v.error();
    *f.value = std::move(*v);
    auto def = c.attrs.ints(f.name, f.padding ? 2 * w.rank : w.rank);
    if (f.padding) {
      auto p = expand_padding(def, w.rank, c);
      if (!p) return p.error();
      def = std::move(*p);
    }
    *f.fallback = std::move(def);
    if (!*f.value && std::string(f.name) != "dilation") missing.push_back(f.name);
  }
  return missing;
}

/// The ONNX window attributes of resolved axes.
void window_attrs(std::map<std::string, AttrValue>& attrs, std::string_view op,
                  const std::vector<Axis>& axes) {
  std::vector<int64_t> k, s, p, d;
  for (const Axis& a : axes) k.push_back(a.kernel), s.push_back(a.stride), d.push_back(a.dilation);
  for (const Axis& a : axes) p.push_back(a.pad_begin);
  for (const Axis& a : axes) p.push_back(a.pad_end);
  attrs["kernel_shape"] = k;
  Builder::set(attrs, op, "strides", s);
  Builder::set(attrs, op, "padding", p);
  if (std::any_of(d.begin(), d.end(), [](int64_t x) { return x != 1; })) {
    Builder::set(attrs, op, "dilation", d);
  }
}

/// The spatial rank of a Conv1D/Conv2D/Pool2D kernel and its canonical layouts.
struct Layouts {
  std::string data, kernel;  // "NCHW", "OIHW" (1-D: "NCW", "OIW")
};
Layouts canonical(size_t rank) {
  return rank == 1 ? Layouts{"NCW", "OIW"} : Layouts{"NCHW", "OIHW"};
}

/// Checks the recorded dtypes of a float window op.
Expected<void> check_dtypes(const KernelCall& c) {
  const std::string& t = c.in_dtype(0);
  const std::string out_dtype = c.attrs.s("out_dtype");
  if (!out_dtype.empty() && out_dtype != t) {
    return c.fail("out_dtype " + out_dtype + " differs from the input's " + t +
                  " (mixed-precision kernels are not supported)");
  }
  return ok();
}

}  // namespace

Expected<std::vector<ValueId>> conv(Builder& b, const KernelCall& c) {
  NPU_TRY(check_dtypes(c));
  const std::string data_layout = c.attrs.s("data_layout");
  const size_t rank = data_layout.size() - 2;
  const Layouts canon = canonical(rank);
  auto px = layout_perm(data_layout, canon.data, "data_layout");
  if (!px) return c.fail(px.error().message);
  auto pw = layout_perm(c.attrs.s("kernel_layout"), canon.kernel, "kernel_layout");
  if (!pw) return c.fail(pw.error().message);
  const std::string out_layout =
      c.attrs.s("out_layout").empty() ? data_layout : c.attrs.s("out_layout");
  auto py = layout_perm(out_layout, canon.data, "out_layout");
  if (!py) return c.fail(py.error().message);
  const auto x = permute(c.in[0].dims, *px), w = permute(c.in[1].dims, *pw);
  const auto y = permute(c.out[0].dims, *py);
  if (c.in[0].dims.size() != rank + 2 || c.in[1].dims.size() != rank + 2 ||
      c.out[0].dims.size() != rank + 2) {
    return c.fail("input " + format::shape_text(c.in[0].dims) + " and weight " +
                  format::shape_text(c.in[1].dims) + " do not fit layouts " + data_layout + "/" +
                  c.attrs.s("kernel_layout"));
  }
  int64_t groups = c.attrs.i("groups");
  if (!c.attrs.given("groups")) {  // input channels = groups x the weight's input channels
    if (x[1] < 1 || w[1] < 1 || x[1] % w[1] != 0) {
      return c.fail("attribute 'groups' is missing and the shapes do not determine it (input " +
                    format::shape_text(x) + ", weight " + format::shape_text(w) + ")");
    }
    groups = x[1] / w[1];
  }
  if (groups < 1 || x[1] != groups * w[1] || w[0] % groups != 0 || (y[1] >= 0 && y[1] != w[0])) {
    return c.fail("input " + format::shape_text(x) + ", weight " + format::shape_text(w) +
                  " and output " + format::shape_text(y) + " do not fit a convolution with " +
                  std::to_string(groups) + " groups");
  }
  WindowSpec ws;
  ws.rank = rank;
  ws.in.assign(x.begin() + 2, x.end());
  ws.out.assign(y.begin() + 2, y.end());
  ws.kernel = std::vector<int64_t>(w.begin() + 2, w.end());
  auto missing = read_window(c, ws, /*pool=*/false);
  if (!missing) return missing.error();
  auto axes = resolve(ws, c, *missing);
  if (!axes) return axes.error();
  std::map<std::string, AttrValue> attrs;
  window_attrs(attrs, "Conv", *axes);
  Builder::set(attrs, "Conv", "groups", groups);
  const ValueId xi = b.transpose(c.inputs[0], *px), wi = b.transpose(c.inputs[1], *pw);
  ValueId out = b.node("Conv", {xi, wi}, std::move(attrs));
  if (!c.row.info.activation.empty()) out = b.node(c.row.info.activation, {out});
  return std::vector<ValueId>{b.transpose(out, inverse_perm(*py))};
}

Expected<std::vector<ValueId>> pool(Builder& b, const KernelCall& c) {
  const std::string layout = c.attrs.s("layout");
  const size_t rank = layout.size() - 2;
  const Layouts canon = canonical(rank);
  auto px = layout_perm(layout, canon.data, "layout");
  if (!px) return c.fail(px.error().message);
  const std::string out_layout = c.attrs.s("out_layout").empty() ? layout : c.attrs.s("out_layout");
  auto py = layout_perm(out_layout, canon.data, "out_layout");
  if (!py) return c.fail(py.error().message);
  const auto x = permute(c.in[0].dims, *px), y = permute(c.out[0].dims, *py);
  if (c.in[0].dims.size() != rank + 2 || c.out[0].dims.size() != rank + 2 || y[0] != x[0] ||
      y[1] != x[1]) {
    return c.fail("input " + format::shape_text(c.in[0].dims) + " and output " +
                  format::shape_text(c.out[0].dims) + " do not fit a " + layout + " pool");
  }
  const std::string op(c.row.info.op);
  WindowSpec ws;
  ws.rank = rank;
  ws.in.assign(x.begin() + 2, x.end());
  ws.out.assign(y.begin() + 2, y.end());
  ws.ceil = c.attrs.i("ceil_mode") != 0;
  auto missing = read_window(c, ws, /*pool=*/true);
  if (!missing) return missing.error();
  auto axes = resolve(ws, c, *missing);
  if (!axes) return axes.error();
  std::map<std::string, AttrValue> attrs;
  if (op == "AveragePool" &&
      std::any_of(axes->begin(), axes->end(), [](const Axis& a) { return a.dilation != 1; })) {
    return c.fail("dilated average pooling is not supported");
  }
  window_attrs(attrs, op, *axes);
  Builder::set(attrs, op, "ceil_mode", c.attrs.i("ceil_mode"));
  Builder::set(attrs, op, "count_include_pad", c.attrs.i("count_include_pad"));
  const ValueId out = b.node(op, {b.transpose(c.inputs[0], *px)}, std::move(attrs));
  return std::vector<ValueId>{b.transpose(out, inverse_perm(*py))};
}

}  // namespace npu::compiler::tvm
