// choose-layout: ONNX tensors are NCHW, but the device's CONV2D and POOL read and write HWC
// tiles (channels innermost) and want conv weights as OHWI. Keeping device activations NHWC
// across a run of device ops avoids a transpose around every op; this pass decides where.
// Seeds: the activations of device convs, pools and batch norms. The choice spreads through
// device ops that do not care about layout (elementwise, activations, (de)quantize, Concat,
// Identity). Only values a device op produces are marked — graph inputs and host results stay
// in ONNX order — so lowering inserts a TRANSPOSE wherever an NHWC value meets a reader
// that needs ONNX order (host ops, graph outputs, Reshape/Flatten/MatMul/...). Conv weights
// of device convs are marked OHWI; lowering reorders the constant once.
#include "npu/compiler/op_set.h"
#include "npu/compiler/pass.h"

namespace npu::compiler {

namespace {

bool on_device(const Node& n) {
  return n.placement.target == Target::kDevice;
}

bool is_anchor(const Node& n) {
  const OpInfo* op = find_op(n.op_type);
  return op && n.domain.empty() && on_device(n) &&
         (op->op_class == OpClass::kConv || op->op_class == OpClass::kPool ||
          op->op_class == OpClass::kNorm);
}

bool is_layout_agnostic(const Node& n) {
  const OpInfo* op = find_op(n.op_type);
  if (!op || !n.domain.empty() || !on_device(n)) return false;
  return op->op_class == OpClass::kEltwise || op->op_class == OpClass::kActivation ||
         op->op_class == OpClass::kQuant || op->op_class == OpClass::kNoOp ||
         op->op_class == OpClass::kConcat;
}

class ChooseLayoutPass final : public Pass {
 public:
  std::string_view name() const override { return "choose-layout"; }

  Expected<bool> run(Graph& g) override {
    const auto producers = g.producers();
    std::vector<bool> nhwc(g.num_values(), false);
    // A value may be NHWC if it is a rank-4 activation produced by a device node.
    auto eligible = [&](ValueId v) {
      if (v < 0) return false;
      const Value& val = g.value(v);
      const int p = producers[static_cast<size_t>(v)];
      return !val.is_constant() && val.shape && val.shape->size() == 4 && p >= 0 &&
             on_device(g.nodes[static_cast<size_t>(p)]);
    };
    auto activations = [&](const Node& n) {
      std::vector<ValueId> vs;
      for (ValueId i : n.inputs) {
        if (i >= 0 && !g.value(i).is_constant()) vs.push_back(i);
      }
      for (ValueId o : n.outputs) {
        if (o >= 0) vs.push_back(o);
      }
      return vs;
    };
    for (const Node& n : g.nodes) {
      if (!is_anchor(n)) continue;
      for (ValueId v : activations(n)) nhwc[static_cast<size_t>(v)] = eligible(v);
    }
    for (bool grew = true; grew;) {
      grew = false;
      for (const Node& n : g.nodes) {
        if (!is_layout_agnostic(n)) continue;
        const auto vs = activations(n);
        bool any = false;
        for (ValueId v : vs) any = any || nhwc[static_cast<size_t>(v)];
        if (!any) continue;
        for (ValueId v : vs) {
          if (!nhwc[static_cast<size_t>(v)] && eligible(v)) {
            nhwc[static_cast<size_t>(v)] = true;
            grew = true;
          }
        }
      }
    }
    bool changed = false;
    for (size_t v = 0; v < g.num_values(); ++v) {
      Value& val = g.value(static_cast<ValueId>(v));
      if (val.is_constant()) continue;
      const Layout l = nhwc[v] ? Layout::kNHWC : Layout::kOnnx;
      changed |= val.layout != l;
      val.layout = l;
    }
    for (const Node& n : g.nodes) {
      if (!on_device(n) || find_op(n.op_type) == nullptr ||
          find_op(n.op_type)->op_class != OpClass::kConv) {
        continue;
      }
      const ValueId w = n.input(n.op_type == "QLinearConv" ? 3 : 1);
      if (w >= 0 && g.value(w).is_constant() && g.value(w).layout != Layout::kOHWI) {
        g.value(w).layout = Layout::kOHWI;
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> create_ChooseLayoutPass() {
  return std::make_unique<ChooseLayoutPass>();
}

}  // namespace npu::compiler
