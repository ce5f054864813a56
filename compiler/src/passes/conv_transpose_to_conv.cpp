// conv-transpose-to-conv: a ConvTranspose with stride 1 is an ordinary convolution, so the
// device's CONV2D runs it. With stride 1, y[o] = sum over k of x[o + pad_begin - k * d] *
// W[c][m][k]; substituting k' = K - 1 - k gives a Conv over x padded by d * (K - 1) -
// pad_begin at the start and d * (K - 1) + output_padding - pad_end at the end, whose weights
// W'[m][c][k'] = W[c][m][K - 1 - k'] are flipped along every spatial dim with the in/out
// channels swapped within each group (W [C, M / group, k...] -> W' [M, C / group, k...]).
// The pads come from npu::ops::resolve_transpose_pads, the rule the host implementation
// uses, so auto_pad, output_shape and output_padding mean the same on both sides.
//
// Larger strides would need zeros inserted between the input elements first; the device has
// no command that does that, so such nodes stay on the host, and the support check reports
// conv_transpose_host_reason(). Runs before fold-batchnorm, fuse-bias and fuse-activation so
// that the Conv it makes takes part in them.
#include "conv_transpose_to_conv.h"

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

std::string dims_text(const std::vector<int64_t>& v) {
  return format::shape_text(v);
}

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
  for (int64_t s : strides) {
    if (s != 1) {
      r.reason = "strides " + dims_text(strides) +
                 " (only stride 1 maps to a device Conv; a larger stride needs zeros inserted "
                 "between the input elements)";
      return r;
    }
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
    const ops::PadResult p = ops::resolve_transpose_pads(*mode, in.value, k, 1, dil[d], adj[d],
                                                         pads[d], pads[rank + d], size);
    if (p.overflow || p.out < 1 || dil[d] < 1 || k < 1) {
      r.reason = "attributes out of range";
      return r;
    }
    const int64_t reach = dil[d] * (k - 1);
    r.pads[d] = reach - p.begin;
    r.pads[rank + d] = reach + adj[d] - p.end;
    if (r.pads[d] < 0 || r.pads[rank + d] < 0) {
      r.reason =
          "pads larger than the kernel's reach (the equivalent Conv would need negative "
          "pads)";
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

class ConvTransposeToConvPass final : public Pass {
 public:
  std::string_view name() const override { return "conv-transpose-to-conv"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    for (Node& n : g.nodes) {
      if (n.op_type != "ConvTranspose") continue;
      Rewrite r = plan(g, n);
      if (!r.reason.empty()) continue;
      const NpyArray& w = *g.constant(n.input(1));
      const int64_t group = n.attr_int("group", 1);
      const size_t rank = w.shape.size() - 2;
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
      changed = true;
    }
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
