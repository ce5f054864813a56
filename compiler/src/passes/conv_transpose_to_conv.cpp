// conv-transpose-to-conv: a ConvTranspose is an ordinary convolution over its input with
// stride - 1 zeros inserted between neighbouring elements, so the device's CONV2D runs it.
// With z the zero-inserted input (z[i * s] = x[i], length in * s), y[o] = sum over k of
// z[o + pad_begin - k * d] * W[c][m][k]; substituting k' = K - 1 - k gives a stride-1 Conv
// over z padded by d * (K - 1) - pad_begin at the start and d * (K - 1) + output_padding -
// pad_end - (s - 1) at the end, whose weights W'[m][c][k'] = W[c][m][K - 1 - k'] are flipped
// along every spatial dim with the in/out channels swapped within each group (W [C, M / group,
// k...] -> W' [M, C / group, k...]). The pads come from npu::ops::resolve_transpose_pads, the
// rule the host implementation uses, so auto_pad, output_shape and output_padding mean the
// same on both sides.
//
// The zeros are inserted by data movement the device runs: per strided spatial axis a, a
// Reshape to [outer, in_a, 1, inner], a constant Pad of s - 1 at the end of axis 2 and a
// Reshape back with in_a * s (all rank 4). Nodes whose equivalent Conv would need negative
// pads (or whose shapes are not static, or of rank other than 1-D/2-D) stay on the host, and
// the support check reports conv_transpose_host_reason(). Runs before fold-batchnorm,
// fuse-bias and fuse-activation so that the Conv it makes takes part in them.
#include "conv_transpose_to_conv.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "npu/compiler/pass.h"
#include "npu/ops/spatial.h"

namespace npu::compiler {

namespace {

/// The Conv's pads [begins..., ends...] for a rewritable node, or the reason it is not.
struct Rewrite {
  std::string reason;
  std::vector<int64_t> pads;
};

Rewrite plan(const Graph& g, const Node& n) {
  Rewrite r;
  const ValueId x = n.input(0), w = n.input(1);
  if (!n.domain.empty() || x < 0 || w < 0 || n.outputs.empty() || n.outputs[0] < 0) {
    r.reason = "missing operand";
    return r;
  }
  const Value& xv = g.value(x);
  if (xv.dtype != DType::kFloat32) {
    r.reason = "input is not float32";
    return r;
  }
  if (!xv.shape || (xv.shape->size() != 3 && xv.shape->size() != 4)) {
    r.reason = "only 1-D and 2-D ConvTranspose run on the device";
    return r;
  }
  const NpyArray* wc = g.constant(w);
  if (!wc || wc->dtype != DType::kFloat32) {
    r.reason = "weights are not constant float32";
    return r;
  }
  if (n.input(2) >= 0 && !g.constant(n.input(2))) {
    r.reason = "bias is not constant";
    return r;
  }
  const size_t rank = xv.shape->size() - 2;
  const int64_t group = n.attr_int("group", 1);
  if (wc->shape.size() != rank + 2 || group < 1 || wc->shape[0] % group != 0) {
    r.reason = "weights do not match the input";  // the host op reports the details
    return r;
  }
  const std::vector<int64_t> strides = n.attr_ints("strides", std::vector<int64_t>(rank, 1));
  if (std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s != 1; }) &&
      !xv.static_dims()) {
    r.reason = "strides " + format::shape_text(strides) +
               " on an input of dynamic shape (inserting " + "the zeros needs static dims)";
    return r;
  }
  const std::vector<int64_t> dil = n.attr_ints("dilations", std::vector<int64_t>(rank, 1));
  const std::vector<int64_t> pads = n.attr_ints("pads", std::vector<int64_t>(2 * rank, 0));
  const std::vector<int64_t> adj = n.attr_ints("output_padding", std::vector<int64_t>(rank, 0));
  const std::vector<int64_t> out_shape = n.attr_ints("output_shape");
  const std::optional<ops::AutoPad> mode = ops::parse_auto_pad(n.attr_string("auto_pad"));
  if (strides.size() != rank || dil.size() != rank || pads.size() != 2 * rank ||
      adj.size() != rank || !mode ||
      (!out_shape.empty() && out_shape.size() != rank && out_shape.size() != rank + 2)) {
    r.reason = "attributes do not match the input rank";
    return r;
  }
  r.pads.assign(2 * rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    const Dim& in = (*xv.shape)[2 + d];
    if (!in.is_static()) {
      r.reason = "spatial dims are not static";
      return r;
    }
    const int64_t k = wc->shape[2 + d];
    const std::optional<int64_t> size =
        out_shape.empty() ? std::nullopt
                          : std::optional<int64_t>(out_shape[out_shape.size() - rank + d]);
    if (strides[d] < 1 || dil[d] < 1 || k < 1) {
      r.reason = "attributes out of range";
      return r;
    }
    const ops::PadResult p = ops::resolve_transpose_pads(*mode, in.value, k, strides[d], dil[d],
                                                         adj[d], pads[d], pads[rank + d], size);
    if (p.overflow || p.out < 1) {
      r.reason = "attributes out of range";
      return r;
    }
    const int64_t reach = dil[d] * (k - 1);
    r.pads[d] = reach - p.begin;
    r.pads[rank + d] = reach + adj[d] - p.end - (strides[d] - 1);
    if (r.pads[d] < 0 || r.pads[rank + d] < 0) {
      r.reason = "pads " + format::shape_text(pads) +
                 " larger than the kernel's reach (the equivalent Conv would need negative pads)";
      return r;
    }
  }
  return r;
}

/// W [C, M / group, k...] -> W' [M, C / group, k...], flipped along every spatial dim.
NpyArray conv_weights(const NpyArray& w, int64_t group) {
  const int64_t in_c = w.shape[0], ocg = w.shape[1], icg = in_c / group;
  std::vector<int64_t> shape = {ocg * group, icg};
  shape.insert(shape.end(), w.shape.begin() + 2, w.shape.end());
  const int64_t k_size =
      format::element_count(std::vector<int64_t>(w.shape.begin() + 2, w.shape.end()));
  NpyArray out = NpyArray::zeros(DType::kFloat32, shape);
  const auto src = w.view<float>();
  auto dst = out.view<float>();
  for (int64_t c = 0; c < in_c; ++c) {
    const int64_t grp = c / icg, ci = c % icg;
    for (int64_t mo = 0; mo < ocg; ++mo) {
      const int64_t m = grp * ocg + mo;
      for (int64_t kp = 0; kp < k_size; ++kp) {
        // Reversing the flat index within the kernel reverses every spatial dim at once.
        dst[static_cast<size_t>((m * icg + ci) * k_size + (k_size - 1 - kp))] =
            src[static_cast<size_t>((c * ocg + mo) * k_size + kp)];
      }
    }
  }
  return out;
}

/// Inserts stride - 1 zeros after every element of `x` (static dims `dims`) along each
/// spatial axis with a stride above 1, as Reshape -> Pad -> Reshape nodes appended to `out`;
/// returns the zero-inserted value and updates `dims`.
ValueId insert_zeros(Graph& g, const Node& n, ValueId x, std::vector<int64_t>& dims,
                     const std::vector<int64_t>& strides, std::vector<Node>& out) {
  const DType dtype = DType::kFloat32;
  const auto i64 = [](const std::vector<int64_t>& v) {
    return NpyArray::of<int64_t>({static_cast<int64_t>(v.size())}, v);
  };
  const auto value = [&](const std::string& hint, const std::vector<int64_t>& shape) {
    Value v;
    v.name = g.unique_name(hint);
    v.dtype = dtype;
    v.shape = make_shape(shape);
    return g.add_value(std::move(v));
  };
  const auto node = [&](const std::string& op, const std::string& hint, std::vector<ValueId> inputs,
                        ValueId output) {
    Node m;
    m.name = g.unique_name(hint);
    m.op_type = op;
    m.opset = std::max<int64_t>(n.opset, 13);  // the input forms of Reshape and Pad
    m.inputs = std::move(inputs);
    m.outputs = {output};
    m.placement = {};
    out.push_back(std::move(m));
  };
  for (size_t d = 0; d < strides.size(); ++d) {
    const int64_t s = strides[d];
    if (s == 1) continue;
    const size_t a = 2 + d;
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < a; ++i) outer *= dims[i];
    for (size_t i = a + 1; i < dims.size(); ++i) inner *= dims[i];
    const std::string base = n.name + "_zeros" + std::to_string(d);
    const std::vector<int64_t> split = {outer, dims[a], 1, inner};
    const std::vector<int64_t> padded = {outer, dims[a], s, inner};
    std::vector<int64_t> merged = dims;
    merged[a] *= s;
    const ValueId v1 = value(base + "_split", split);
    node("Reshape", base + "_split", {x, g.add_constant(base + "_split_shape", i64(split))}, v1);
    const ValueId v2 = value(base + "_padded", padded);
    node("Pad", base + "_pad",
         {v1, g.add_constant(base + "_pads", i64({0, 0, 0, 0, 0, 0, s - 1, 0}))}, v2);
    const ValueId v3 = value(base, merged);
    node("Reshape", base + "_merge", {v2, g.add_constant(base + "_merged_shape", i64(merged))}, v3);
    x = v3;
    dims = merged;
  }
  return x;
}

class ConvTransposeToConvPass final : public Pass {
 public:
  std::string_view name() const override { return "conv-transpose-to-conv"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size());
    for (Node& n : g.nodes) {
      Rewrite r = n.op_type == "ConvTranspose" ? plan(g, n) : Rewrite{"not a ConvTranspose", {}};
      if (!r.reason.empty()) {
        nodes.push_back(std::move(n));
        continue;
      }
      const NpyArray& w = *g.constant(n.input(1));
      const int64_t group = n.attr_int("group", 1);
      const size_t rank = w.shape.size() - 2;
      const std::vector<int64_t> strides = n.attr_ints("strides", std::vector<int64_t>(rank, 1));
      if (std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s != 1; })) {
        std::vector<int64_t> dims = *g.value(n.inputs[0]).static_dims();
        n.inputs[0] = insert_zeros(g, n, n.inputs[0], dims, strides, nodes);
      }
      NpyArray cw = conv_weights(w, group);
      const std::vector<int64_t> kernel(cw.shape.begin() + 2, cw.shape.end());
      n.inputs[1] = g.add_constant(g.value(n.inputs[1]).name + "_as_conv", std::move(cw));
      const std::vector<int64_t> dil = n.attr_ints("dilations", std::vector<int64_t>(rank, 1));
      n.op_type = "Conv";
      n.attrs.clear();
      n.attrs["dilations"] = dil;
      n.attrs["group"] = group;
      n.attrs["kernel_shape"] = kernel;
      n.attrs["pads"] = r.pads;
      n.attrs["strides"] = std::vector<int64_t>(rank, 1);
      nodes.push_back(std::move(n));
      changed = true;
    }
    g.nodes = std::move(nodes);
    return changed;
  }
};

}  // namespace

std::string conv_transpose_host_reason(const Graph& g, const Node& n) {
  return plan(g, n).reason;
}

std::unique_ptr<Pass> create_ConvTransposeToConvPass() {
  return std::make_unique<ConvTransposeToConvPass>();
}

}  // namespace npu::compiler
