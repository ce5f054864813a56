// infer-shapes: after folding, Reshape targets and other shape operands are constants, so
// shapes that ONNX shape inference could not compute at import become computable. This pass
// exports the graph back to ONNX, runs ONNX's own (non-strict) shape inference with data
// propagation, and fills in every shape and element type that was unknown or less precise;
// where ONNX still leaves an output unknown, the operator registry's shape rule (elementwise,
// broadcasting and comparison operators) fills it from static inputs. Known dims are never
// changed.
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <unordered_map>

#include "npu/compiler/pass.h"
#include "onnx_proto.h"
#include "shape_rule.h"

namespace npu::compiler {

namespace {

/// Constants up to this size keep their values for shape inference (shape operands are a few
/// int64 or float values; int64 tensors always keep them).
constexpr size_t kShapeOperandBytes = 4096;

class InferShapesPass final : public Pass {
 public:
  std::string_view name() const override { return "infer-shapes"; }

  Expected<bool> run(Graph& g) override {
    // Large non-int64 constants go as typed inputs without their data (export_onnx()).
    onnx::ModelProto m = detail::export_onnx(g, kShapeOperandBytes);
    try {
      onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                          /*data_prop=*/true);
      onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options);
    } catch (const std::exception&) {
      return false;  // non-strict inference should not throw; keep what we have
    }
    std::unordered_map<std::string, const onnx::TypeProto*> types;
    for (const auto& v : m.graph().value_info()) types[v.name()] = &v.type();
    for (const auto& v : m.graph().output()) types[v.name()] = &v.type();
    bool changed = false;
    for (const Node& n : g.nodes) {
      for (ValueId o : n.outputs) {
        if (o < 0) continue;
        auto it = types.find(g.value(o).name);
        if (it == types.end()) continue;
        Value inferred;
        if (!detail::type_from_proto(*it->second, "value", inferred)) continue;
        changed |= merge(g.value(o), inferred);
      }
      changed |= apply_shape_rule(g, n);
    }
    return changed;
  }

 private:
  /// Output 0 by the operator registry's shape rule (npu/ops/registry.h) when ONNX left it
  /// unknown or symbolic and every input is static: the nodes ONNX cannot see through (an
  /// export that failed, a dim it could not propagate).
  static bool apply_shape_rule(Graph& g, const Node& n) {
    if (n.outputs.empty() || n.outputs[0] < 0 || g.value(n.outputs[0]).static_dims()) return false;
    const auto out = detail::shape_rule_output(g, n);
    if (!out) return false;
    Value inferred;
    if (detail::accepted_dtype(out->dtype)) inferred.dtype = out->dtype;
    inferred.shape = make_shape(out->shape);
    return merge(g.value(n.outputs[0]), inferred);
  }

  // Takes the inferred dtype/shape where ours is unknown; dims only go from unknown to known.
  static bool merge(Value& v, const Value& inferred) {
    bool changed = false;
    if (!v.dtype && inferred.dtype) {
      v.dtype = inferred.dtype;
      changed = true;
    }
    if (!inferred.shape) return changed;
    if (!v.shape) {
      v.shape = inferred.shape;
      return true;
    }
    if (v.shape->size() != inferred.shape->size()) return changed;
    for (size_t i = 0; i < v.shape->size(); ++i) {
      Dim& d = (*v.shape)[i];
      const Dim& e = (*inferred.shape)[i];
      if (!d.is_static() && (e.is_static() || (d.symbol.empty() && !e.symbol.empty()))) {
        d = e;
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> create_InferShapesPass() {
  return std::make_unique<InferShapesPass>();
}

}  // namespace npu::compiler
