// remove-identities: exported graphs carry ops that do nothing at inference time — Identity,
// Dropout (inference mode), and ops that turn out not to change their input once shapes are
// known (Reshape/Flatten/Squeeze/Unsqueeze/Expand to the same shape, Cast to the same type,
// Transpose with the identity permutation, Pad by zero, a full Slice, a one-input Concat,
// Add/Sub of 0, Mul/Div by 1). Each costs a device command or a host round trip for nothing,
// so readers of the output read the input instead. Graph output names are kept. Which rule
// applies to which operator is its row's Identity column (npu/ops/operators.def).
#include <algorithm>

#include "npu/compiler/pass.h"
#include "npu/ops/registry.h"

namespace npu::compiler {

namespace {

bool all_equal(const NpyArray* t, double x) {
  if (!t) return false;
  for (int64_t i = 0; i < t->num_elements(); ++i) {
    if (format::number_at(*t, i) != x) return false;
  }
  return true;
}

class RemoveIdentitiesPass final : public Pass {
 public:
  std::string_view name() const override { return "remove-identities"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    const auto consumers = g.consumers();
    for (const Node& n : g.nodes) {
      if (!n.domain.empty() || n.activation || n.outputs.empty() || n.outputs[0] < 0) continue;
      const ValueId in = passthrough_input(g, n, consumers);
      if (in == kNoValue) continue;
      changed |= g.bypass(n.outputs[0], in);
    }
    if (changed) g.remove_dead_nodes();
    return changed;
  }

 private:
  static bool same_type_and_shape(const Graph& g, ValueId a, ValueId b) {
    if (a < 0 || b < 0) return false;
    const Value& x = g.value(a);
    const Value& y = g.value(b);
    const auto dx = x.static_dims();
    return x.dtype == y.dtype && dx && dx == y.static_dims();
  }

  // The input that `n` passes through unchanged, or kNoValue.
  static ValueId passthrough_input(const Graph& g, const Node& n,
                                   const std::vector<std::vector<int>>& consumers) {
    const std::string& op = n.op_type;
    const ValueId x = n.input(0);
    const ValueId y = n.outputs[0];
    if (x < 0) return kNoValue;
    // Every other output must be unused (Dropout's mask, Split's other parts).
    for (size_t o = 1; o < n.outputs.size(); ++o) {
      const ValueId extra = n.outputs[o];
      if (extra >= 0 &&
          (!consumers[static_cast<size_t>(extra)].empty() || g.is_graph_output(extra)))
        return kNoValue;
    }
    const ops::OpSchema* schema = ops::find(op);
    using enum ops::IdentityRule;
    const ops::IdentityRule rule = schema != nullptr ? schema->identity : kNever;
    if (rule == kNever) return kNoValue;
    if (rule == kAlways) return x;
    if (rule == kInference) {
      const NpyArray* training = g.constant(n.input(2));
      if (n.input(2) >= 0 && (!training || !all_equal(training, 0))) return kNoValue;
      return x;
    }
    if (!same_type_and_shape(g, x, y)) return kNoValue;
    switch (rule) {
      case kSameShape:
        return x;
      case kOneInput:
        return n.inputs.size() == 1 ? x : kNoValue;
      case kIdentityPerm: {
        const auto perm = n.attr_ints("perm");
        for (size_t i = 0; i < perm.size(); ++i) {
          if (perm[i] != static_cast<int64_t>(i)) return kNoValue;
        }
        return perm.empty() && g.value(x).shape && g.value(x).shape->size() > 1 ? kNoValue : x;
      }
      case kZeroPads:
        return all_equal(g.constant(n.input(1)), 0) ? x : kNoValue;
      case kFullSlice: {
        // Same shape and no negative step: the whole tensor, in order.
        if (n.input(4) < 0) return x;
        const NpyArray* steps = g.constant(n.input(4));
        if (!steps) return kNoValue;
        for (int64_t s : format::to_ints(*steps)) {
          if (s < 0) return kNoValue;
        }
        return x;
      }
      case kPlusZero:
      case kMinusZero:
      case kTimesOne:
      case kOverOne: {
        const double neutral = rule == kPlusZero || rule == kMinusZero ? 0.0 : 1.0;
        if (all_equal(g.constant(n.input(1)), neutral)) return x;
        const bool commutes = rule == kPlusZero || rule == kTimesOne;
        if (commutes && all_equal(g.constant(x), neutral) &&
            same_type_and_shape(g, n.input(1), y)) {
          return n.input(1);
        }
        return kNoValue;
      }
      default:
        return kNoValue;
    }
  }
};

}  // namespace

std::unique_ptr<Pass> create_RemoveIdentitiesPass() {
  return std::make_unique<RemoveIdentitiesPass>();
}

}  // namespace npu::compiler
