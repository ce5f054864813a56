// ConvTranspose (opset 1-18; npu/ops/operators.def): the transposed (fractionally strided)
// convolution of X [N, C, D1..Dn] with W [C, M / group, k1..kn] and an optional bias B [M],
// any number n >= 1 of spatial dims, float32 or float64, computed on the host.
//
// Semantics (ONNX): every input element x[n][c][i] scatters x * w[c][m][k] to the output
// position o = i * stride + k * dilation - pad_begin of each output channel m of c's group;
// positions outside [0, out) are dropped, output positions nothing reaches hold the bias. The
// "full" output size is stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1, and
// the output is that minus the pads (NOTSET), the full size (VALID), in * stride (SAME_UPPER /
// SAME_LOWER) or the `output_shape` attribute, which overrides pads. In the last two the pads
// come from total = full - out: SAME_UPPER gives the begin floor(total / 2) (the odd one at
// the end), the others begin = total - floor(total / 2). A negative total (an output larger
// than the full one) pads with zeros, as ONNX's reference does (floor division throughout).
// output_padding must be below the stride or the dilation of its dim.
//
// Computed as a gather: per spatial dim, the (input index, kernel index) taps that reach each
// output coordinate are listed once; an output element sums over the product of its dims'
// taps and the group's input channels, accumulating in double. Work: outputs x input channels
// per group x kernel size, checked against the call's max_work before the output is allocated;
// the loop polls the deadline.
#include <algorithm>
#include <cerrno>
#include <string>
#include <type_traits>
#include <vector>

#include "attributes.h"
#include "dtype_dispatch.h"
#include "operands.h"
#include "window_geometry.h"
#include "work_limits.h"
#include "work_poll.h"

namespace npu::ops::detail {

namespace {

/// One spatial dim's geometry.
struct Dim {
  int64_t in = 0, kernel = 0, stride = 1, dilation = 1, pad_begin = 0, out = 0;
};

/// The geometry of every spatial dim from the attributes (errors name the attribute).
Expected<std::vector<Dim>> transpose_geometry(const OpCall& c, const Shape& xs, const Shape& ws) {
  const size_t rank = xs.size() - 2;
  auto attrs = spatial_attrs(c, rank, Shape(ws.begin() + 2, ws.end()));
  if (!attrs) return attrs.error();
  auto mode = auto_pad_attr(c);
  if (!mode) return mode.error();
  auto out_pad = ints_attr(c, "output_padding");
  if (!out_pad) return out_pad.error();
  const std::vector<int64_t> adj = *out_pad ? **out_pad : std::vector<int64_t>(rank, 0);
  if (adj.size() != rank) {
    return op_error(c, "attribute output_padding has " + std::to_string(adj.size()) +
                           " values, expected " + std::to_string(rank));
  }
  auto out_shape = ints_attr(c, "output_shape");
  if (!out_shape) return out_shape.error();
  std::vector<int64_t> wanted;
  if (*out_shape) {
    wanted = **out_shape;
    // Some exporters give the whole shape [N, M, D1..Dn]: its spatial part counts.
    if (wanted.size() == rank + 2) wanted.erase(wanted.begin(), wanted.begin() + 2);
    if (wanted.size() != rank) {
      return op_error(c, "attribute output_shape has " + std::to_string((*out_shape)->size()) +
                             " values, expected " + std::to_string(rank));
    }
  }
  std::vector<Dim> dims(rank);
  for (size_t d = 0; d < rank; ++d) {
    Dim& g = dims[d];
    g.in = xs[2 + d];
    g.kernel = attrs->kernel[d];
    g.stride = attrs->strides[d];
    g.dilation = attrs->dilations[d];
    const std::string where = "spatial dim " + std::to_string(d) + ": ";
    if (adj[d] < 0 || adj[d] >= std::max(g.stride, g.dilation)) {
      return op_error(c, where + "output_padding " + std::to_string(adj[d]) +
                             " must be >= 0 and less than the stride or the dilation");
    }
    if (!wanted.empty() && wanted[d] < 0) {
      return op_error(c,
                      where + "output_shape value " + std::to_string(wanted[d]) + " is negative");
    }
    const PadResult p = resolve_transpose_pads(
        *mode, g.in, g.kernel, g.stride, g.dilation, adj[d], attrs->pads[d], attrs->pads[rank + d],
        wanted.empty() ? std::nullopt : std::optional<int64_t>(wanted[d]));
    if (p.overflow) {
      return op_error(c, where +
                             "input size, kernel_shape, strides, dilations, pads and "
                             "output_shape overflow the int64 range");
    }
    if (p.out < 0) {
      return op_error(c, where + "pads " + std::to_string(p.begin) + "+" + std::to_string(p.end) +
                             " exceed the output size " + std::to_string(p.out + p.begin + p.end));
    }
    g.pad_begin = p.begin;
    g.out = p.out;
  }
  return dims;
}

/// A tap: the input index along a dim that reaches an output coordinate, and its kernel index.
struct Tap {
  int64_t in = 0, k = 0;
};

/// Per output coordinate of `g`, the taps that reach it: o + pad_begin = i * stride + k * dilation.
std::vector<std::vector<Tap>> dim_taps(const Dim& g) {
  std::vector<std::vector<Tap>> taps(static_cast<size_t>(g.out));
  for (int64_t o = 0; o < g.out; ++o) {
    for (int64_t k = 0; k < g.kernel; ++k) {
      const int64_t t = o + g.pad_begin - k * g.dilation;
      if (t < 0 || t % g.stride != 0) continue;
      const int64_t i = t / g.stride;
      if (i < g.in) taps[static_cast<size_t>(o)].push_back({i, k});
    }
  }
  return taps;
}

template <typename T>
HostOutputs compute(const OpCall& c, const NpyArray& x, const NpyArray& w, const NpyArray* bias,
                    int64_t group, const std::vector<Dim>& dims, NpyArray y) {
  const Shape& xs = x.shape;
  const Shape& ws = w.shape;
  const size_t rank = dims.size();
  const int64_t out_c = y.shape[1], in_c = xs[1];
  const int64_t ocg = ws[1], icg = in_c / group;
  Shape in_sp(xs.begin() + 2, xs.end()), k_sp(ws.begin() + 2, ws.end());
  const int64_t in_size = count(in_sp), k_size = count(k_sp);
  int64_t out_size = 1;
  for (const Dim& g : dims) out_size *= g.out;
  std::vector<std::vector<std::vector<Tap>>> taps;
  taps.reserve(rank);
  for (const Dim& g : dims) taps.push_back(dim_taps(g));
  const auto xv = x.view<T>();
  const auto wv = w.view<T>();
  auto yv = y.view<T>();
  std::vector<int64_t> o(rank, 0);
  std::vector<size_t> t(rank, 0);
  WorkPoll poll;
  for (int64_t op = 0; op < out_size; ++op) {
    // The taps of this output position, one list per dim (an empty one: nothing reaches it).
    bool any = true;
    for (size_t d = 0; d < rank; ++d) any = any && !taps[d][static_cast<size_t>(o[d])].empty();
    int64_t per_channel = 0;
    if (any) {
      per_channel = 1;
      for (size_t d = 0; d < rank; ++d)
        per_channel *= static_cast<int64_t>(taps[d][static_cast<size_t>(o[d])].size());
    }
    if (poll.stop(xs[0] * out_c * (1 + per_channel * icg))) {
      return make_error(ETIMEDOUT, c.op + ": stopped: the time limit passed");
    }
    for (int64_t n = 0; n < xs[0]; ++n) {
      for (int64_t m = 0; m < out_c; ++m) {
        const int64_t g = m / ocg, mo = m % ocg;
        double acc = bias ? static_cast<double>(bias->view<T>()[static_cast<size_t>(m)]) : 0.0;
        if (any) {
          std::fill(t.begin(), t.end(), 0);
          for (int64_t p = 0; p < per_channel; ++p) {
            int64_t ip = 0, kp = 0;
            for (size_t d = 0; d < rank; ++d) {
              const Tap& tap = taps[d][static_cast<size_t>(o[d])][t[d]];
              ip = ip * in_sp[d] + tap.in;
              kp = kp * k_sp[d] + tap.k;
            }
            const T* xp = xv.data() + (n * in_c + g * icg) * in_size + ip;
            const T* wp = wv.data() + ((g * icg) * ocg + mo) * k_size + kp;
            for (int64_t ic = 0; ic < icg; ++ic) {
              acc += static_cast<double>(xp[ic * in_size]) *
                     static_cast<double>(wp[ic * ocg * k_size]);
            }
            for (size_t d = rank; d-- > 0;) {
              if (++t[d] < taps[d][static_cast<size_t>(o[d])].size()) break;
              t[d] = 0;
            }
          }
        }
        yv[static_cast<size_t>((n * out_c + m) * out_size + op)] = static_cast<T>(acc);
      }
    }
    for (size_t d = rank; d-- > 0;) {
      if (++o[d] < dims[d].out) break;
      o[d] = 0;
    }
  }
  return single(std::move(y));
}

}  // namespace

HostOutputs conv_transpose(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto w = input(c, 1);
  if (!w) return w.error();
  const NpyArray* bias = optional_input(c, 2);
  NPU_TRY(need_same_dtype(c, **x, **w));
  if (bias) NPU_TRY(need_same_dtype(c, **x, *bias));
  const Shape& xs = (*x)->shape;
  const Shape& ws = (*w)->shape;
  if (xs.size() < 3) return op_error(c, "input must have rank >= 3, got " + shape_text(xs));
  auto group = int_attr(c, "group", 1);
  if (!group) return group.error();
  if (*group < 1) return op_error(c, "attribute group must be >= 1");
  if (ws.size() != xs.size() || ws[0] != xs[1] || ws[1] < 1 || xs[1] % *group != 0) {
    return op_error(c, "weights " + shape_text(ws) + " do not match input " + shape_text(xs) +
                           " with group " + std::to_string(*group) +
                           " (expected [C, M / group, kernel...] with C divisible by group)");
  }
  const int64_t out_c = ws[1] * *group;
  if (bias && (bias->shape.size() != 1 || bias->shape[0] != out_c)) {
    return op_error(c, "bias shape " + shape_text(bias->shape) + " does not match " +
                           std::to_string(out_c) + " output channels");
  }
  auto dims = transpose_geometry(c, xs, ws);
  if (!dims) return dims.error();
  Shape out_shape = {xs[0], out_c};
  for (const Dim& g : *dims) out_shape.push_back(g.out);
  int64_t k_size = 1;
  for (size_t d = 2; d < ws.size(); ++d) k_size *= ws[d];
  NPU_TRY(check_output(c, (*x)->dtype, out_shape));
  NPU_TRY(check_work(c, count(out_shape), k_size * (xs[1] / *group), "multiply-accumulates"));
  auto y = alloc_output(c, (*x)->dtype, out_shape);
  if (!y) return y.error();
  return dispatch(c, **x, [&]<typename T>(T) -> HostOutputs {
    if constexpr (std::is_floating_point_v<T>) {
      return compute<T>(c, **x, **w, bias, *group, *dims, std::move(*y));
    } else {
      return op_error(c, "integer inputs are not supported");
    }
  });
}

}  // namespace npu::ops::detail
