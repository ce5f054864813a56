// resize-to-matmul: a linear or cubic Resize (and a nearest one the device cannot copy) is a
// weighted sum of input elements with weights that depend only on the shapes and the
// attributes, separately per axis. For a 4-D float32 X resized along H and W only,
//   Y[n, c] = Rh · X[n, c] · Rwᵀ   per (n, c) plane,
// where row o of Rh [H', H] (Rw [W', W]) holds the weights output index o gives each input
// index. So the matrix engine runs it, as several NPUs run resize: the pass replaces the node
// by MatMul(X, Rwᵀ) (a constant B broadcast over the N·C·H rows) and MatMul(Rh, ·) (a
// constant A broadcast over the N·C batch, which the device MatMul reads with a zero batch
// stride), in the cheaper order, and skips the product of an axis that maps onto itself.
// The weights are the host op's own taps (npu::ops::resize_taps, ops/src/resize.cpp: the
// coordinate transform, the nearest/linear/cubic kernel, antialias, exclude_outside), so every
// coordinate_transformation_mode means the same on both sides. Float32 results differ from
// the host's only in summation order (the host sums the 2-4 taps, the product also adds
// zeros).
//
// Left on the host (resize_matmul_reason() says why, and the support check reports it): any
// dtype but float32, rank other than 4, a resized N or C, dynamic shapes, roi/scales/sizes
// that are not constant, tf_crop_and_resize with a nonzero extrapolation_value (the outputs
// outside the crop are a constant, not a linear map of X), a matrix above kMaxResizeMatrix
// elements, and calls the operator itself refuses. A nearest resize by integer factors stays
// a Resize: the device copies it with zero strides, which costs no arithmetic.
#include "resize_to_matmul.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "npu/compiler/pass.h"
#include "npu/ops/resize_taps.h"
#include "op_attributes.h"

namespace npu::compiler {

namespace {

struct Rewrite {
  std::string reason;
  ops::ResizeTaps taps;
};

Rewrite plan(const Graph& g, const Node& n) {
  Rewrite r;
  auto refuse = [&](std::string why) {
    r.reason = std::move(why);
    return std::move(r);
  };
  if ((n.op_type != "Resize" && n.op_type != "Upsample") || !n.domain.empty())
    return refuse("not a Resize");
  if (n.input(0) < 0 || n.outputs.empty()) return refuse("Resize without X or Y");
  const Value& x = g.value(n.input(0));
  if (x.dtype != DType::kFloat32)
    return refuse(std::string("Resize of ") + dtype_name(x.dtype) +
                  " (the matrix form is float32)");
  const auto xd = x.static_dims();
  const auto yd = g.value(n.outputs[0]).static_dims();
  if (!xd || !yd) return refuse("Resize with a dynamic shape");
  if (xd->size() != 4) return refuse("Resize of rank other than 4");
  std::vector<const NpyArray*> inputs(n.inputs.size(), nullptr);
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    if (n.input(i) < 0) continue;
    inputs[i] = g.constant(n.input(i));
    if (!inputs[i]) return refuse("Resize roi/scales/sizes are not constant");
  }
  const bool nearest = n.attr_string("mode", "nearest") == "nearest";
  if (nearest && n.op_type == "Resize" && resize_copy_reason(g, n).empty())
    return refuse("nearest Resize by integer factors (the device copies it)");
  // X's stand-in: the taps depend on its shape only.
  const NpyArray stand_in{DType::kFloat32, *xd, {}};
  inputs.resize(std::max<size_t>(inputs.size(), 1));
  inputs[0] = &stand_in;
  auto taps = ops::resize_taps(n.op_type, detail::op_attributes(n), inputs);
  if (!taps) return refuse(taps.error().message);
  for (size_t d = 0; d < 4; ++d) {
    const ops::ResizeAxisTaps& a = taps->axes[d];
    if (a.out != (*yd)[d]) return refuse("Resize output shape disagrees with its taps");
    if (d < 2 && !a.identity) return refuse("Resize of the batch or channel dim");
    if (d >= 2 && (a.in == 0 || a.out == 0)) return refuse("Resize of an empty axis");
    if (d >= 2 && !a.identity && a.in * a.out > kMaxResizeMatrix) {
      return refuse("Resize interpolation matrix [" + std::to_string(a.out) + ", " +
                    std::to_string(a.in) + "] is larger than " + std::to_string(kMaxResizeMatrix) +
                    " elements");
    }
    if (taps->extrapolation_value != 0) {
      for (uint8_t o : a.outside) {
        if (o) {
          return refuse(
              "tf_crop_and_resize with extrapolation_value " +
              std::to_string(taps->extrapolation_value) +
              " (outputs outside the crop are a constant, not a linear map of the input)");
        }
      }
    }
  }
  r.taps = std::move(*taps);
  return r;
}

/// The float32 [rows, cols] matrix of `a`'s weights, transposed when `transpose` is set.
NpyArray weights(const ops::ResizeAxisTaps& a, bool transpose) {
  const std::vector<double> m = a.matrix();
  const auto out = static_cast<size_t>(a.out), in = static_cast<size_t>(a.in);
  std::vector<float> v(m.size());
  for (size_t o = 0; o < out; ++o) {
    for (size_t i = 0; i < in; ++i) {
      v[transpose ? i * out + o : o * in + i] = static_cast<float>(m[o * in + i]);
    }
  }
  return NpyArray::of<float>(
      transpose ? std::vector<int64_t>{a.in, a.out} : std::vector<int64_t>{a.out, a.in}, v);
}

class ResizeToMatMulPass final : public Pass {
 public:
  std::string_view name() const override { return "resize-to-matmul"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size());
    for (Node& n : g.nodes) {
      Rewrite r = plan(g, n);  // refuses anything but Resize/Upsample first
      if (!r.reason.empty()) {
        nodes.push_back(std::move(n));
        continue;
      }
      rewrite(g, std::move(n), r.taps, nodes);
      changed = true;
    }
    g.nodes = std::move(nodes);
    return changed;
  }

 private:
  /// Appends the MatMuls (or an Identity when neither axis changes) computing `n`'s output.
  static void rewrite(Graph& g, Node n, const ops::ResizeTaps& taps, std::vector<Node>& nodes) {
    const ops::ResizeAxisTaps &h = taps.axes[2], &w = taps.axes[3];
    std::vector<int64_t> dims = *g.value(n.input(0)).static_dims();
    const ValueId y = n.outputs[0];
    // Multiply-accumulates of each order (per plane); an identity axis costs nothing.
    const int64_t hc = h.identity ? 0 : h.out * h.in, wc = w.identity ? 0 : w.out * w.in;
    const bool w_first = wc * dims[2] + hc * w.out <= hc * dims[3] + wc * h.out;
    std::vector<char> steps;  // 'w', 'h'
    for (char s : w_first ? std::string("wh") : std::string("hw")) {
      if (!(s == 'w' ? w : h).identity) steps.push_back(s);
    }
    ValueId cur = n.input(0);
    if (steps.empty()) {
      Node id;
      id.name = n.name;
      id.op_type = "Identity";
      id.opset = n.opset;
      id.inputs = {cur};
      id.outputs = {y};
      nodes.push_back(std::move(id));
      return;
    }
    for (size_t k = 0; k < steps.size(); ++k) {
      const bool along_w = steps[k] == 'w';
      const ops::ResizeAxisTaps& a = along_w ? w : h;
      dims[along_w ? 3 : 2] = a.out;
      ValueId out = y;
      if (k + 1 < steps.size()) {
        Value v;
        v.name = g.unique_name(g.value(y).name + (along_w ? "_resized_w" : "_resized_h"));
        v.dtype = DType::kFloat32;
        v.shape = make_shape(dims);
        out = g.add_value(std::move(v));
      }
      Node mm;
      mm.name = k + 1 < steps.size() ? g.unique_name(n.name + (along_w ? "_w" : "_h")) : n.name;
      mm.op_type = "MatMul";
      mm.opset = std::min<int64_t>(n.opset, 13);  // MatMul's latest; Resize goes up to 19
      const ValueId m =
          g.add_constant(n.name + (along_w ? "_rw_t" : "_rh"), weights(a, /*transpose=*/along_w));
      mm.inputs = along_w ? std::vector<ValueId>{cur, m} : std::vector<ValueId>{m, cur};
      mm.outputs = {out};
      nodes.push_back(std::move(mm));
      cur = out;
    }
  }
};

}  // namespace

std::string resize_matmul_reason(const Graph& g, const Node& n) {
  return plan(g, n).reason;
}

std::unique_ptr<Pass> create_ResizeToMatMulPass() {
  return std::make_unique<ResizeToMatMulPass>();
}

}  // namespace npu::compiler
