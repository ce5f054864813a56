// Post-training int8 quantization (npu/compiler/quantize.h): calibration outputs, ranges, and
// the rewrite of float Conv/Gemm/MatMul into QLinearConv/QLinearMatMul with QuantizeLinear /
// DequantizeLinear at the float boundaries.
#include "npu/compiler/quantize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <span>

#include "npu/ops/registry.h"

namespace npu::compiler {

namespace {

constexpr int32_t kQMin = -128, kQMax = 127;
constexpr float kWeightMax = 127.0f;  // symmetric weights use [-127, 127]

bool is_float_tensor(const Graph& g, ValueId v) {
  if (v < 0) return false;
  const Value& val = g.value(v);
  return !val.is_constant() && val.dtype == DType::kFloat32 && val.static_dims().has_value();
}

const NpyArray* float_constant(const Graph& g, ValueId v) {
  const NpyArray* t = g.constant(v);
  return t && t->dtype == DType::kFloat32 ? t : nullptr;
}

/// The clamp a fused activation applies, or nullopt if the output range cannot express it
/// (anything but none, Relu, or a Clip whose bounds include 0).
std::optional<TensorRange> activation_bounds(const Node& n) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  if (!n.activation) return TensorRange{-inf, inf};
  const FusedActivation& a = *n.activation;
  if (a.op_type == "Relu") return TensorRange{0.0f, inf};
  if (a.op_type == "Clip" && a.alpha <= 0.0f && a.beta >= 0.0f) return TensorRange{a.alpha, a.beta};
  return std::nullopt;
}

/// Output columns / channels of a quantizable compute node, or 0 if it is not one.
int64_t quantizable_channels(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.outputs.empty() || !is_float_tensor(g, n.input(0)) ||
      !is_float_tensor(g, n.outputs[0]) || !activation_bounds(n)) {
    return 0;
  }
  for (size_t o = 1; o < n.outputs.size(); ++o) {
    if (n.outputs[o] >= 0) return 0;
  }
  const auto xd = *g.value(n.input(0)).static_dims();
  const NpyArray* w = float_constant(g, n.input(1));
  if (!w) return 0;
  auto bias_ok = [&](size_t slot, int64_t channels) {
    if (n.input(slot) < 0) return true;
    const NpyArray* b = float_constant(g, n.input(slot));
    if (!b) return false;
    const int64_t count = b->num_elements();
    // A per-channel vector ([C], [1,C]) or a scalar broadcast to every channel.
    if (count == 1) return true;
    return count == channels && b->shape.back() == channels;
  };
  if (n.op_type == "Conv") {
    if (n.inputs.size() > 3 || (xd.size() != 3 && xd.size() != 4)) return 0;
    if (w->shape.size() != xd.size()) return 0;
    return bias_ok(2, w->shape[0]) ? w->shape[0] : 0;
  }
  if (n.op_type == "Gemm") {
    if (n.inputs.size() > 3 || xd.size() != 2 || w->shape.size() != 2) return 0;
    if (n.attr_int("transA", 0) != 0 || n.attr_float("alpha", 1.0f) != 1.0f) return 0;
    if (n.input(2) >= 0 && n.attr_float("beta", 1.0f) != 1.0f) return 0;
    const int64_t cols = n.attr_int("transB", 0) != 0 ? w->shape[0] : w->shape[1];
    return bias_ok(2, cols) ? cols : 0;
  }
  if (n.op_type == "MatMul") {
    // The third input is the IR's per-column bias (fuse-bias).
    if (n.inputs.size() > 3 || xd.size() < 2 || w->shape.size() != 2) return 0;
    return bias_ok(2, w->shape[1]) ? w->shape[1] : 0;
  }
  return 0;
}

/// Ops whose int8 result is exactly the quantized float result with the input's parameters
/// (operators.def's Int8 column: they only select, move or reorder elements), when their other
/// outputs (MaxPool's indices) are unused.
bool exact_on_int8(const Graph& g, const Node& n) {
  if (!n.domain.empty() || n.outputs.empty() || !is_float_tensor(g, n.input(0)) ||
      !is_float_tensor(g, n.outputs[0])) {
    return false;
  }
  const ops::OpSchema* op = ops::find(n.op_type);
  if (op == nullptr || op->int8 != ops::Int8Rule::kThrough) return false;
  return std::all_of(n.outputs.begin() + 1, n.outputs.end(), [](ValueId v) { return v < 0; });
}

NpyArray scalar_f32(float v) {
  return NpyArray::of<float>({}, std::span<const float>(&v, 1));
}

NpyArray scalar_i8(int32_t v) {
  const int64_t x = v;
  return format::from_ints(DType::kInt8, {}, std::span<const int64_t>(&x, 1));
}

/// Symmetric per-channel int8 weights. `w` is [rows, cols] row-major viewed as a matrix whose
/// channel is the row (channel_axis 0) or the column (channel_axis 1); the result is laid out
/// as `out_dims`, element (r, c) at r * cols + c, or transposed (c * rows + r) when
/// `transpose` is set.
struct QuantWeights {
  NpyArray data;
  std::vector<float> scales;
};

QuantWeights quantize_weights(const NpyArray& w, int64_t rows, int64_t cols, int channel_axis,
                              bool transpose, std::vector<int64_t> out_dims) {
  const std::vector<float> f = format::to_floats(w);
  const int64_t channels = channel_axis == 0 ? rows : cols;
  std::vector<float> amax(static_cast<size_t>(channels), 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      float& m = amax[static_cast<size_t>(channel_axis == 0 ? r : c)];
      m = std::max(m, std::fabs(f[static_cast<size_t>(r * cols + c)]));
    }
  }
  QuantWeights q;
  q.scales.resize(amax.size());
  for (size_t c = 0; c < amax.size(); ++c) {
    q.scales[c] = amax[c] > 0.0f && std::isfinite(amax[c]) ? amax[c] / kWeightMax : 1.0f;
  }
  q.data = NpyArray::zeros(DType::kInt8, std::move(out_dims));
  const std::span<int8_t> out = q.data.view<int8_t>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float s = q.scales[static_cast<size_t>(channel_axis == 0 ? r : c)];
      const float v = std::nearbyint(f[static_cast<size_t>(r * cols + c)] / s);
      const auto qv = static_cast<int8_t>(std::clamp(v, -kWeightMax, kWeightMax));
      out[static_cast<size_t>(transpose ? c * rows + r : r * cols + c)] = qv;
    }
  }
  return q;
}

/// int32 bias per channel: round(b / (x_scale * w_scale[c])), saturated.
NpyArray quantize_bias(const NpyArray* b, float x_scale, const std::vector<float>& w_scales) {
  const auto channels = static_cast<int64_t>(w_scales.size());
  NpyArray q = NpyArray::zeros(DType::kInt32, {channels});
  if (!b) return q;
  const std::vector<float> f = format::to_floats(*b);
  for (int64_t c = 0; c < channels; ++c) {
    const double real = f.size() == 1 ? f[0] : f[static_cast<size_t>(c)];
    const double v = std::nearbyint(real / (double(x_scale) * double(w_scales[size_t(c)])));
    const double lim = std::numeric_limits<int32_t>::max();
    format::set_int(q, c, static_cast<int64_t>(std::clamp(v, -lim, lim)));
  }
  return q;
}

/// The rewrite of one graph (see quantize_int8).
class Rewriter {
 public:
  Rewriter(Graph& g, const Ranges& ranges) : g_(g), ranges_(ranges) {}

  Expected<void> run() {
    for (const Node& n : g_.nodes) node_names_.insert(n.name);
    const size_t nv = g_.num_values();
    int8_.assign(nv, kNoValue);
    plan(nv);
    std::vector<Node> old = std::move(g_.nodes);
    g_.nodes.clear();
    for (size_t i = 0; i < old.size(); ++i) {
      Node& n = old[i];
      if (kind_[i] == Kind::kFloat) {
        g_.nodes.push_back(std::move(n));
        continue;
      }
      const ValueId y = n.outputs[0];
      if (kind_[i] == Kind::kCompute) {
        if (auto r = rewrite_compute(n); !r) return r;
      } else {
        Node q = n;
        q.inputs[0] = int8_[static_cast<size_t>(n.input(0))];
        q.outputs = {new_int8_value(y, g_.value(q.inputs[0]).quant.value())};
        q.placement = {};
        g_.nodes.push_back(std::move(q));
      }
      if (float_needed_[static_cast<size_t>(y)]) dequantize(y, n.name);
    }
    return g_.verify();
  }

 private:
  enum class Kind : uint8_t { kFloat, kCompute, kExact };

  const TensorRange* range(ValueId v) const {
    auto it = ranges_.find(g_.value(v).name);
    return it == ranges_.end() ? nullptr : &it->second;
  }

  // Which nodes become int8, and which float tensors are still read as float afterwards.
  void plan(size_t nv) {
    std::vector<bool> has_int8(nv, false);
    kind_.assign(g_.nodes.size(), Kind::kFloat);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (quantizable_channels(g_, n) > 0) {
        const ValueId x = n.input(0), y = n.outputs[0];
        if (!range(y) || (!has_int8[static_cast<size_t>(x)] && !range(x))) continue;
        kind_[i] = Kind::kCompute;
        has_int8[static_cast<size_t>(y)] = true;
      } else if (exact_on_int8(g_, n) && has_int8[static_cast<size_t>(n.input(0))]) {
        kind_[i] = Kind::kExact;
        has_int8[static_cast<size_t>(n.outputs[0])] = true;
      }
    }
    float_needed_.assign(nv, false);
    for (ValueId o : g_.outputs) float_needed_[static_cast<size_t>(o)] = true;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      for (size_t k = kind_[i] == Kind::kFloat ? 0 : 1; k < n.inputs.size(); ++k) {
        if (n.inputs[k] >= 0) float_needed_[static_cast<size_t>(n.inputs[k])] = true;
      }
    }
  }

  ValueId new_int8_value(ValueId like, const QuantInfo& q) {
    Value v;
    v.name = g_.unique_name(g_.value(like).name + "_q");
    v.dtype = DType::kInt8;
    v.shape = g_.value(like).shape;
    v.quant = q;
    const ValueId id = g_.add_value(std::move(v));
    int8_.resize(g_.num_values(), kNoValue);
    int8_[static_cast<size_t>(like)] = id;
    return id;
  }

  static QuantInfo per_tensor(QuantParams p) {
    QuantInfo q;
    q.scales = {p.scale};
    q.zero_points = {p.zero_point};
    return q;
  }

  /// The int8 version of float tensor x (a QuantizeLinear from its range the first time).
  ValueId int8_of(ValueId x, const std::string& reader) {
    if (ValueId q = int8_[static_cast<size_t>(x)]; q >= 0) return q;
    const QuantParams p = activation_qparams(*range(x));
    const std::string xname = g_.value(x).name;
    Node n;
    n.name = node_name(reader + "_quantize_input");
    n.op_type = "QuantizeLinear";
    n.opset = opset();
    n.inputs = {x, g_.add_constant(xname + "_scale", scalar_f32(p.scale)),
                g_.add_constant(xname + "_zero_point", scalar_i8(p.zero_point))};
    n.outputs = {new_int8_value(x, per_tensor(p))};
    g_.nodes.push_back(std::move(n));
    return g_.nodes.back().outputs[0];
  }

  /// DequantizeLinear of y's int8 version into y itself (its float readers, graph outputs).
  void dequantize(ValueId y, const std::string& producer) {
    const ValueId q = int8_[static_cast<size_t>(y)];
    const QuantInfo qi = g_.value(q).quant.value();
    const std::string yname = g_.value(y).name;
    Node n;
    n.name = node_name(producer + "_dequantize");
    n.op_type = "DequantizeLinear";
    n.opset = opset();
    n.inputs = {
        q, g_.add_constant(yname + "_scale", scalar_f32(qi.scales[0])),
        g_.add_constant(yname + "_zero_point", scalar_i8(static_cast<int32_t>(qi.zero_points[0])))};
    n.outputs = {y};
    g_.nodes.push_back(std::move(n));
  }

  /// `hint`, made unique among the graph's node names.
  std::string node_name(const std::string& hint) {
    std::string name = hint;
    for (size_t i = 1; node_names_.count(name); ++i) name = hint + "_" + std::to_string(i);
    node_names_.insert(name);
    return name;
  }

  int64_t opset() const {
    auto it = g_.opsets.find("");
    return it == g_.opsets.end() ? 13 : it->second;
  }

  Expected<void> rewrite_compute(const Node& n) {
    const ValueId x = n.input(0), y = n.outputs[0];
    const ValueId xq = int8_of(x, n.name);
    const QuantInfo& xi = g_.value(xq).quant.value();
    const float x_scale = xi.scales[0];
    const int32_t x_zp = static_cast<int32_t>(xi.zero_points[0]);
    // The output range: calibrated, clamped by the fused activation (which the int8
    // saturation then applies).
    TensorRange yr = *range(y);
    const TensorRange bounds = *activation_bounds(n);
    yr.min = std::max(yr.min, bounds.min);
    yr.max = std::min(yr.max, bounds.max);
    if (yr.max < yr.min) yr.max = yr.min;
    const QuantParams yp = activation_qparams(yr);

    const NpyArray& w = *g_.constant(n.input(1));
    const bool conv = n.op_type == "Conv";
    QuantWeights qw;
    if (conv) {
      const int64_t rows = w.shape[0];
      qw = quantize_weights(w, rows, w.num_elements() / rows, 0, false, w.shape);
    } else {
      const bool tb = n.op_type == "Gemm" && n.attr_int("transB", 0) != 0;
      const int64_t rows = w.shape[0], cols = w.shape[1];
      // QLinearMatMul's b is [K, N] with one scale per column N.
      qw = tb ? quantize_weights(w, rows, cols, 0, true, {cols, rows})
              : quantize_weights(w, rows, cols, 1, false, {rows, cols});
    }
    const auto channels = static_cast<int64_t>(qw.scales.size());
    const std::string& base = n.name;
    NpyArray bias = quantize_bias(float_constant(g_, n.input(2)), x_scale, qw.scales);

    Node q;
    q.name = n.name;
    q.op_type = conv ? "QLinearConv" : "QLinearMatMul";
    q.opset = n.opset;
    if (conv) q.attrs = n.attrs;
    const ValueId wq = g_.add_constant(base + "_weight_q", std::move(qw.data));
    QuantInfo wi;
    wi.scales = qw.scales;
    wi.zero_points.assign(qw.scales.size(), 0);
    wi.axis = conv ? 0 : 1;
    g_.value(wq).quant = wi;
    q.inputs = {xq,
                g_.add_constant(base + "_x_scale", scalar_f32(x_scale)),
                g_.add_constant(base + "_x_zero_point", scalar_i8(x_zp)),
                wq,
                g_.add_constant(base + "_w_scale", NpyArray::of<float>({channels}, qw.scales)),
                g_.add_constant(base + "_w_zero_point", NpyArray::zeros(DType::kInt8, {channels})),
                g_.add_constant(base + "_y_scale", scalar_f32(yp.scale)),
                g_.add_constant(base + "_y_zero_point", scalar_i8(yp.zero_point))};
    // QLinearConv's B; for QLinearMatMul the IR's 9th input (a per-column int32 bias).
    if (n.input(2) >= 0) q.inputs.push_back(g_.add_constant(base + "_bias_q", std::move(bias)));
    q.outputs = {new_int8_value(y, per_tensor(yp))};
    g_.nodes.push_back(std::move(q));
    return ok();
  }

  Graph& g_;
  const Ranges& ranges_;
  std::vector<Kind> kind_;
  std::vector<bool> float_needed_;
  std::vector<ValueId> int8_;  // float value -> its int8 version
  std::set<std::string> node_names_;
};

}  // namespace

QuantParams activation_qparams(TensorRange r) {
  const float lo = std::min(r.min, 0.0f), hi = std::max(r.max, 0.0f);
  QuantParams p;
  if (!(hi > lo) || !std::isfinite(hi - lo)) {
    // An empty or unrepresentable range: scale 1, zero point clamped in double (no overflow).
    p.scale = 1.0f;
    const double zp = std::isfinite(lo) ? std::round(-128.0 - double(lo)) : double(kQMin);
    p.zero_point = static_cast<int32_t>(std::clamp(zp, double(kQMin), double(kQMax)));
    return p;
  }
  p.scale = (hi - lo) / 255.0f;
  const float zp = std::round(-128.0f - lo / p.scale);
  p.zero_point = static_cast<int32_t>(std::clamp(zp, float(kQMin), float(kQMax)));
  return p;
}

Graph calibration_graph(const Graph& g) {
  Graph c = g;
  std::vector<ValueId> wanted;
  for (const Node& n : g.nodes) {
    if (!n.domain.empty() || n.outputs.empty()) continue;
    if (n.op_type != "Conv" && n.op_type != "Gemm" && n.op_type != "MatMul") continue;
    for (ValueId v : {n.input(0), n.outputs[0]}) {
      if (!is_float_tensor(c, v) || c.is_graph_output(v)) continue;
      if (std::find(wanted.begin(), wanted.end(), v) == wanted.end()) wanted.push_back(v);
    }
  }
  std::vector<Node> copies;
  for (ValueId v : wanted) {
    if (!c.is_graph_input(v)) {
      c.outputs.push_back(v);
      continue;
    }
    Value copy = c.value(v);
    copy.name = c.unique_name(copy.name + "/calibration");
    Node n;
    n.name = copy.name;
    n.op_type = "Identity";
    n.opset = g.opsets.count("") ? g.opsets.at("") : 13;
    n.inputs = {v};
    n.outputs = {c.add_value(std::move(copy))};
    c.outputs.push_back(n.outputs[0]);
    copies.push_back(std::move(n));
  }
  c.nodes.insert(c.nodes.begin(), copies.begin(), copies.end());
  return c;
}

Ranges calibration_ranges(const Graph& calibration,
                          const std::map<std::string, format::NpyArray>& outputs) {
  Ranges ranges = ranges_of(outputs);
  for (const Node& n : calibration.nodes) {
    if (n.op_type != "Identity" || n.outputs.empty() || !calibration.is_graph_input(n.input(0)))
      continue;
    auto it = ranges.find(calibration.value(n.outputs[0]).name);
    if (it == ranges.end()) continue;
    const TensorRange r = it->second;
    ranges.erase(it);
    ranges[calibration.value(n.input(0)).name] = r;
  }
  return ranges;
}

Ranges ranges_of(const std::map<std::string, format::NpyArray>& tensors) {
  Ranges ranges;
  for (const auto& [name, a] : tensors) {
    if (!a.holds<float>()) continue;
    bool any = false;
    TensorRange r{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
    for (float v : a.view<float>()) {
      if (!std::isfinite(v)) continue;
      r.min = std::min(r.min, v);
      r.max = std::max(r.max, v);
      any = true;
    }
    if (any) ranges[name] = r;
  }
  return ranges;
}

Expected<void> quantize_int8(Graph& g, const Ranges& ranges) {
  Rewriter r(g, ranges);
  if (auto e = r.run(); !e)
    return make_error(e.error().code, "quantize-int8: " + e.error().message);
  return ok();
}

}  // namespace npu::compiler
