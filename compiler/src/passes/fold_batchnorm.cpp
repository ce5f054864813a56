// fold-batchnorm: in inference, BatchNormalization after a Conv is a per-output-channel
// affine map, y = (conv(x) - mean) * s + beta with s = gamma / sqrt(var + eps), which the
// convolution can absorb: W'[oc] = W[oc] * s[oc], b'[oc] = (b[oc] - mean[oc]) * s[oc] +
// beta[oc]. CNNs exported from PyTorch have one BN per conv, so this removes a full pass
// over every activation. Applies when the Conv is fp32 with constant weights (and bias), its
// output feeds only the BN, and the BN's parameters are constants in inference mode.
#include <cmath>

#include "huge_pages.h"
#include "npu/compiler/pass.h"

namespace npu::compiler {

namespace {

class FoldBatchNormPass final : public Pass {
 public:
  std::string_view name() const override { return "fold-batchnorm"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    std::vector<bool> dead(g.nodes.size(), false);
    const auto producers = g.producers();
    const auto consumers = g.consumers();
    for (size_t b = 0; b < g.nodes.size(); ++b) {
      Node& bn = g.nodes[b];
      if (bn.op_type != "BatchNormalization" || !bn.domain.empty() || bn.outputs.empty()) continue;
      if (bn.attr_int("training_mode", 0) != 0) continue;
      bool extra_used = false;
      for (size_t o = 1; o < bn.outputs.size(); ++o) {
        const ValueId v = bn.outputs[o];
        extra_used |=
            v >= 0 && (!consumers[static_cast<size_t>(v)].empty() || g.is_graph_output(v));
      }
      const ValueId x = bn.input(0);
      if (extra_used || x < 0 || producers[static_cast<size_t>(x)] < 0) continue;
      const auto c = static_cast<size_t>(producers[static_cast<size_t>(x)]);
      Node& conv = g.nodes[c];
      if (conv.op_type != "Conv" || !conv.domain.empty() || conv.activation || dead[c]) continue;
      if (consumers[static_cast<size_t>(x)].size() != 1 || g.is_graph_output(x)) continue;
      const NpyArray* w = g.constant(conv.input(1));
      const NpyArray* bias = g.constant(conv.input(2));
      // float32 or float16 (folded in double, rounded once to the weights' type).
      if (!w || (w->dtype != DType::kFloat32 && w->dtype != DType::kFloat16) || w->shape.empty())
        continue;
      if (conv.input(2) >= 0 && (!bias || bias->dtype != w->dtype)) continue;
      const NpyArray* gamma = g.constant(bn.input(1));
      const NpyArray* beta = g.constant(bn.input(2));
      const NpyArray* mean = g.constant(bn.input(3));
      const NpyArray* var = g.constant(bn.input(4));
      const int64_t oc = w->shape[0];
      bool params_ok = true;
      for (const NpyArray* p : {gamma, beta, mean, var}) {
        params_ok = params_ok && p && p->dtype == w->dtype && p->num_elements() == oc;
      }
      if (!params_ok || (bias && bias->num_elements() != oc)) continue;

      const double eps = bn.attr_float("epsilon", 1e-5f);
      NpyArray new_w;  // a copy of w in fresh memory advised to huge pages
      new_w.dtype = w->dtype;
      new_w.shape = w->shape;
      detail::reserve_huge(new_w.data, w->data.size());
      new_w.data.assign(w->data.begin(), w->data.end());
      NpyArray new_b = NpyArray::zeros(w->dtype, {oc});
      const int64_t per_oc = oc ? w->num_elements() / oc : 0;
      for (int64_t k = 0; k < oc; ++k) {
        const double s = format::number_at(*gamma, k) / std::sqrt(format::number_at(*var, k) + eps);
        for (int64_t j = 0; j < per_oc; ++j) {
          format::set_number(new_w, k * per_oc + j, format::number_at(*w, k * per_oc + j) * s);
        }
        const double b0 = bias ? format::number_at(*bias, k) : 0.0;
        format::set_number(new_b, k,
                           (b0 - format::number_at(*mean, k)) * s + format::number_at(*beta, k));
      }
      conv.inputs.resize(std::max<size_t>(conv.inputs.size(), 3), kNoValue);
      const ValueId old_w = conv.inputs[1];
      conv.inputs[1] = g.add_constant(g.value(old_w).name + "_bnfold", std::move(new_w));
      // The unfolded weights are garbage now unless shared: freed here, their memory holds
      // the next conv's folded weights (ResNet-50: 100 MB of page faults less).
      g.release_if_unread(old_w);
      conv.inputs[2] = g.add_constant(conv.name + "_bias_bnfold", std::move(new_b));
      conv.outputs[0] = bn.outputs[0];  // the conv now produces the BN's output
      dead[b] = true;
      changed = true;
    }
    g.erase_nodes(dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> create_FoldBatchNormPass() {
  return std::make_unique<FoldBatchNormPass>();
}

}  // namespace npu::compiler
