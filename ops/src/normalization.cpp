// Host ops of the normalization layers that compute their statistics from the input
// (npu/ops/operators.def): LayerNormalization (opset 17), InstanceNormalization (1, 6) and
// GroupNormalization (18: scale and bias per group; 21: per channel). BatchNormalization, whose
// statistics are parameters, is in nn.cpp.
//
// Each one normalizes contiguous runs of the input — a LayerNormalization row (the dims from
// `axis` on), an instance's channel, an instance's group of channels — to zero mean and unit
// variance (population variance, two passes in double), then scales and shifts:
// y = (x - mean) * inv_std * scale + bias with inv_std = 1 / sqrt(var + epsilon). Where ONNX
// computes that first stage in the stash type (stash_type 1: float32, the only one supported),
// mean and inv_std are rounded to float32 before they are used, as ONNX's reference does.
#include <algorithm>
#include <cmath>
#include <string>

#include "attributes.h"
#include "broadcasting.h"
#include "dtype_dispatch.h"
#include "operands.h"
#include "work_limits.h"
#include "work_poll.h"

namespace npu::ops::detail {
namespace {

/// Error unless parameter `a` (named `name` as in ONNX's schema) has x's element type.
Expected<void> like_x(const OpCall& c, const NpyArray& a, const NpyArray& x, const char* name) {
  if (a.dtype == x.dtype) return ok();
  return op_error(c, std::string(name) + " is " + format::dtype_name(a.dtype) + " but X is " +
                         format::dtype_name(x.dtype));
}

/// Error unless `a` is the 1-d tensor [n] (`what` says what n counts: "4 channels").
Expected<void> need_vector(const OpCall& c, const NpyArray& a, int64_t n, const char* name,
                           const std::string& what) {
  if (a.shape == Shape{n}) return ok();
  return op_error(c, std::string(name) + " shape " + shape_text(a.shape) + " does not match " +
                         what + " (expected [" + std::to_string(n) + "])");
}

/// The stash_type attribute (the first stage's precision): only 1, float32, is supported.
Expected<void> check_stash_type(const OpCall& c) {
  auto stash = int_attr(c, "stash_type", 1);
  if (!stash) return stash.error();
  if (*stash != 1) {
    return op_error(c, "attribute stash_type " + std::to_string(*stash) +
                           " is not supported (only 1, float32)");
  }
  return ok();
}

/// Mean and 1 / sqrt(var + eps) of each run of `len` elements of x (population variance),
/// accumulated in double; `to_float` rounds both to float32 (the stash type). A run of no
/// elements has NaN statistics (0 / 0, as ONNX's reference). False when cancelled.
template <typename T>
bool run_stats(std::span<const T> x, int64_t len, double eps, bool to_float,
               std::vector<double>& mean, std::vector<double>& inv_std) {
  const size_t runs = len == 0 ? mean.size() : x.size() / static_cast<size_t>(len);
  mean.assign(runs, 0.0);
  inv_std.assign(runs, 0.0);
  WorkPoll poll;
  const auto n = static_cast<double>(len);
  for (size_t r = 0; r < runs; ++r) {
    if (poll.stop(2 * len + 1)) return false;
    const T* v = x.data() + r * static_cast<size_t>(len);
    double sum = 0.0;
    for (int64_t i = 0; i < len; ++i) sum += static_cast<double>(v[i]);
    double m = sum / n;
    double sq = 0.0;
    for (int64_t i = 0; i < len; ++i) {
      const double d = static_cast<double>(v[i]) - m;
      sq += d * d;
    }
    double is = 1.0 / std::sqrt(sq / n + eps);
    if (to_float) {
      m = static_cast<float>(m);
      is = static_cast<float>(is);
    }
    mean[r] = m;
    inv_std[r] = is;
  }
  return true;
}

/// y[i] = (x[i] - mean[run]) * inv_std[run] * scale[s(i)] + bias[b(i)] for the runs of `len`
/// elements; `param(i)` gives the scale and bias element indices of element i (bias may be
/// empty: 0). False when cancelled.
template <typename T, typename Param>
bool apply(std::span<const T> x, std::span<T> y, int64_t len, const std::vector<double>& mean,
           const std::vector<double>& inv_std, std::span<const T> scale, std::span<const T> bias,
           Param param) {
  WorkPoll poll;
  for (size_t i = 0; i < x.size(); ++i) {
    if (poll.stop(1)) return false;
    const size_t r = i / static_cast<size_t>(len);
    const auto [si, bi] = param(i);
    const double b = bias.empty() ? 0.0 : static_cast<double>(bias[bi]);
    y[i] = static_cast<T>(
        (static_cast<double>(x[i]) - mean[r]) * inv_std[r] * static_cast<double>(scale[si]) + b);
  }
  return true;
}

HostOutputs cancelled_error(const OpCall& c) {
  return make_error(ETIMEDOUT, c.op + ": stopped: the time limit passed");
}

/// InstanceNormalization and GroupNormalization: X [N, C, spatial...] in runs of
/// `channels_per_run` channels; scale and bias indexed per channel (`per_channel`) or per run
/// within the instance.
HostOutputs channel_runs(const OpCall& c, const NpyArray& x, const NpyArray& scale,
                         const NpyArray* bias, int64_t channels_per_run, bool per_channel,
                         bool to_float) {
  const Shape& s = x.shape;
  if (count(s) == 0) return single(NpyArray::zeros(x.dtype, s));  // (C = 0: no runs at all)
  const int64_t channels = s[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < s.size(); ++d) spatial *= s[d];
  const int64_t len = channels_per_run * spatial;
  const int64_t runs_per_instance = channels / channels_per_run;
  auto eps = float_attr(c, "epsilon");
  if (!eps) return eps.error();
  NPU_TRY(check_work(c, count(s), 3, "element operations"));
  auto y = alloc_output(c, x.dtype, s);
  if (!y) return y.error();
  return dispatch(c, x, [&]<typename T>(T) -> HostOutputs {
    if constexpr (std::is_floating_point_v<T>) {
      std::vector<double> mean(static_cast<size_t>(s[0] * runs_per_instance)), inv_std;
      if (!run_stats<T>(x.view<T>(), len, *eps, to_float, mean, inv_std)) {
        return cancelled_error(c);
      }
      const auto param = [&](size_t i) {
        const auto e = static_cast<int64_t>(i);
        const int64_t k = per_channel ? (e / spatial) % channels : (e / len) % runs_per_instance;
        return std::pair{static_cast<size_t>(k), static_cast<size_t>(k)};
      };
      const std::span<const T> b = bias ? bias->view<T>() : std::span<const T>{};
      if (!apply<T>(x.view<T>(), y->view<T>(), len, mean, inv_std, scale.view<T>(), b, param)) {
        return cancelled_error(c);
      }
      return single(std::move(*y));
    } else {
      return op_error(c, std::string("dtype ") + format::dtype_name(x.dtype) + " is not supported");
    }
  });
}

/// Checks X (rank >= 2, [N, C, ...]) and returns its parameters, inputs 1 and 2, of X's dtype.
Expected<std::pair<const NpyArray*, const NpyArray*>> nc_input(const OpCall& c,
                                                               const char* scale_name,
                                                               const char* bias_name) {
  auto x = input(c, 0);
  if (!x) return x.error();
  if ((*x)->shape.size() < 2) {
    return op_error(c, "X must have rank >= 2 ([N, C, ...]), got " + shape_text((*x)->shape));
  }
  auto scale = input(c, 1);
  if (!scale) return scale.error();
  auto bias = input(c, 2);
  if (!bias) return bias.error();
  NPU_TRY(like_x(c, **scale, **x, scale_name));
  NPU_TRY(like_x(c, **bias, **x, bias_name));
  return std::pair{*scale, *bias};
}

}  // namespace

/// Y = (X - mean) * inv_std * Scale + B over the dims from `axis` on; Scale and the optional
/// B broadcast to X's shape (NumPy's rule, unidirectionally). Outputs 1 and 2 (optional) are
/// Mean and InvStdDev, float32 (the stash type), of shape X.shape[:axis] + [1, ...].
HostOutputs layer_norm(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  auto scale = input(c, 1);
  if (!scale) return scale.error();
  const NpyArray* bias = optional_input(c, 2);
  if (c.num_outputs < 1 || c.num_outputs > 3) {
    return op_error(c, "has 1 to 3 outputs (Y, Mean, InvStdDev), " + std::to_string(c.num_outputs) +
                           " requested");
  }
  NPU_TRY(like_x(c, **scale, **x, "Scale"));
  if (bias) NPU_TRY(like_x(c, *bias, **x, "B"));
  NPU_TRY(check_stash_type(c));
  const Shape& s = (*x)->shape;
  auto axis_attr = int_attr(c, "axis", -1);
  if (!axis_attr) return axis_attr.error();
  auto axis = norm_axis(c, *axis_attr, s.size());
  if (!axis) return axis.error();
  auto eps = float_attr(c, "epsilon");
  if (!eps) return eps.error();
  for (const auto& [p, name] : {std::pair{*scale, "Scale"}, std::pair{bias, "B"}}) {
    if (!p) continue;
    auto b = broadcast(c, s, p->shape);
    if (!b) return b.error();
    if (*b != s) {
      return op_error(c, std::string(name) + " shape " + shape_text(p->shape) +
                             " does not broadcast to X's shape " + shape_text(s));
    }
  }
  Shape stat_shape = s;
  int64_t len = 1;
  for (size_t d = *axis; d < s.size(); ++d) {
    len *= s[d];
    stat_shape[d] = 1;
  }
  NPU_TRY(check_work(c, count(s), 3, "element operations"));
  auto y = alloc_output(c, (*x)->dtype, s);
  if (!y) return y.error();
  std::vector<NpyArray> outs;
  for (size_t k = 1; k < c.num_outputs; ++k) {
    auto stat = alloc_output(c, DType::kFloat32, stat_shape);
    if (!stat) return stat.error();
    outs.push_back(std::move(*stat));
  }
  const auto scale_strides = broadcast_strides((*scale)->shape, s);
  const auto bias_strides = bias ? broadcast_strides(bias->shape, s) : scale_strides;
  return dispatch(c, **x, [&]<typename T>(T) -> HostOutputs {
    if constexpr (std::is_floating_point_v<T>) {
      std::vector<double> mean(static_cast<size_t>(count(stat_shape))), inv_std;
      if (!run_stats<T>((*x)->view<T>(), len, *eps, /*to_float=*/true, mean, inv_std)) {
        return cancelled_error(c);
      }
      const auto yv = y->view<T>();
      const auto xv = (*x)->view<T>();
      const auto sv = (*scale)->view<T>();
      const auto bv = bias ? bias->view<T>() : std::span<const T>{};
      WorkPoll poll;
      bool stopped = false;
      for_each_broadcast(s, scale_strides, bias_strides, [&](int64_t i, int64_t si, int64_t bi) {
        if (stopped || (stopped = poll.stop(1))) return;
        const size_t r = static_cast<size_t>(i / len);
        const double b = bv.empty() ? 0.0 : static_cast<double>(bv[static_cast<size_t>(bi)]);
        yv[static_cast<size_t>(i)] =
            static_cast<T>((static_cast<double>(xv[static_cast<size_t>(i)]) - mean[r]) *
                               inv_std[r] * static_cast<double>(sv[static_cast<size_t>(si)]) +
                           b);
      });
      if (stopped) return cancelled_error(c);
      for (size_t k = 0; k < outs.size(); ++k) {
        const std::vector<double>& v = k == 0 ? mean : inv_std;
        std::transform(v.begin(), v.end(), outs[k].view<float>().begin(),
                       [](double d) { return static_cast<float>(d); });
      }
      outs.insert(outs.begin(), std::move(*y));
      return outs;
    } else {
      return op_error(
          c, std::string("dtype ") + format::dtype_name((*x)->dtype) + " is not supported");
    }
  });
}

/// Y = (X - mean) * inv_std * scale[c] + B[c], the statistics of each instance's channel over
/// the spatial dims; scale and B are [C].
HostOutputs instance_norm(const OpCall& c) {
  auto params = nc_input(c, "scale", "B");
  if (!params) return params.error();
  const NpyArray& x = *c.inputs[0];
  const int64_t channels = x.shape[1];
  const std::string what = std::to_string(channels) + " channels";
  NPU_TRY(need_vector(c, *params->first, channels, "scale", what));
  NPU_TRY(need_vector(c, *params->second, channels, "B", what));
  return channel_runs(c, x, *params->first, params->second, 1, /*per_channel=*/true,
                      /*to_float=*/false);
}

/// The statistics of each instance's group of C / num_groups channels; scale and bias are
/// [num_groups] at opset 18, [C] from opset 21 (stash_type: the first stage's precision).
HostOutputs group_norm(const OpCall& c) {
  auto params = nc_input(c, "scale", "bias");
  if (!params) return params.error();
  const NpyArray& x = *c.inputs[0];
  const int64_t channels = x.shape[1];
  auto groups = required_int_attr(c, "num_groups");
  if (!groups) return groups.error();
  if (*groups < 1 || channels % *groups != 0) {
    return op_error(c, "attribute num_groups " + std::to_string(*groups) + " does not divide " +
                           std::to_string(channels) + " channels");
  }
  if (c.opset < 21 && c.attrs.contains("stash_type")) {
    return op_error(
        c, "attribute stash_type needs opset 21 (this is opset " + std::to_string(c.opset) + ")");
  }
  NPU_TRY(check_stash_type(c));
  const bool per_channel = c.opset >= 21;
  const int64_t n = per_channel ? channels : *groups;
  const std::string what =
      per_channel ? std::to_string(channels) + " channels (opset 21)"
                  : std::to_string(*groups) + " groups (opset 18; per channel from 21)";
  NPU_TRY(need_vector(c, *params->first, n, "scale", what));
  NPU_TRY(need_vector(c, *params->second, n, "bias", what));
  return channel_runs(c, x, *params->first, params->second, channels / *groups, per_channel,
                      /*to_float=*/per_channel);
}

}  // namespace npu::ops::detail
