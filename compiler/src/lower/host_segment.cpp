// Host segments: one package segment per host node, with its ONNX attributes as the operator
// library's JSON, followed by the extra host steps the device would have fused (a MatMul
// bias add, a fused activation with Clip's bounds as constants) chained through host-only
// temporaries (see segments.h).
#include <nlohmann/json.hpp>

#include <string>

#include "lower/segments.h"
#include "npu/ops/registry.h"
#include "op_attributes.h"

namespace npu::compiler::detail {

namespace {

using json = nlohmann::json;

/// An extra host op after a node; it reads the previous step's result and `extra_inputs`.
struct HostStep {
  std::string name, op_type, attributes;
  std::vector<std::string> extra_inputs;
};

bool has_matmul_bias(const Node& n) {
  return n.op_type == "MatMul" && n.inputs.size() > 2;
}

/// Clip's bounds (inputs since opset 11) as scalar constants of the package.
std::vector<std::string> clip_bound_tensors(Lowering& L, PackageBuilder& pb, const Node& n) {
  const Graph& g = L.g;
  std::vector<std::string> names;
  for (float bound : {n.activation->alpha, n.activation->beta}) {
    const std::string name =
        g.unique_name(g.value(n.outputs[0]).name + "/clip" + std::to_string(names.size()));
    const NpyArray t = NpyArray::of<float>({}, std::span<const float>(&bound, 1));
    const uint64_t va = L.constants.add(t.data);
    pb.add_constant_tensor(name, format::TensorLocation{"constants", va - kConstantsVa, 4});
    names.push_back(name);
  }
  return names;
}

/// The steps after node n: a MatMul bias add, then a fused activation.
std::vector<HostStep> host_steps(Lowering& L, PackageBuilder& pb, const Node& n) {
  const Graph& g = L.g;
  std::vector<HostStep> after;
  if (has_matmul_bias(n)) {
    pb.touch(n.inputs[2]);
    after.push_back(
        {n.name + "/bias", "Add", json{{"_opset", n.opset}}.dump(), {g.value(n.inputs[2]).name}});
  }
  if (n.activation) {
    Node act;
    act.op_type = n.activation->op_type;
    act.opset = n.opset;
    std::vector<std::string> extra;
    const ops::OpSchema* s = ops::find(act.op_type);
    if (act.op_type == "Clip") {
      extra = clip_bound_tensors(L, pb, n);
    } else if (s) {  // the parameters the activation's schema has (LeakyRelu, HardSigmoid, ...)
      if (s->attribute("alpha")) act.attrs["alpha"] = n.activation->alpha;
      if (s->attribute("beta")) act.attrs["beta"] = n.activation->beta;
    }
    after.push_back({n.name + "/act", act.op_type, op_attributes(act), std::move(extra)});
  }
  return after;
}

/// The host segments of one node: the node itself, then its steps.
void add_host_node(Lowering& L, PackageBuilder& pb, const Node& n) {
  const Graph& g = L.g;
  format::Segment s;
  s.kind = format::SegmentKind::kHost;
  s.name = n.name;
  s.op_type = n.op_type;
  s.attributes = op_attributes(n);
  std::vector<ValueId> ins = n.inputs;
  if (has_matmul_bias(n)) ins.resize(2);
  for (ValueId v : ins) {
    if (v >= 0) pb.touch(v);
    s.inputs.push_back(v >= 0 ? g.value(v).name : "");
  }
  const std::vector<HostStep> after = host_steps(L, pb, n);
  std::vector<std::string> outs;
  std::vector<ValueId> node_outs = n.outputs;
  while (node_outs.size() > 1 && node_outs.back() < 0) node_outs.pop_back();  // unused tail
  for (ValueId v : node_outs) {
    if (v >= 0) pb.touch(v);
    // An output nothing reads (ONNX's empty name, e.g. an LSTM's Y when only Y_h is used)
    // stays empty: the runtime drops it, and its shape need not be known.
    outs.push_back(v >= 0 ? g.value(v).name : "");
  }
  // The chain node -> steps passes through host-only temporaries: chain[k] is what step k
  // reads, the last entry is the node's real output 0 (steps follow a used output 0 only).
  std::vector<std::string> chain(after.size() + 1);
  chain.back() = outs[0];
  for (size_t k = 0; k < after.size(); ++k) {
    chain[k] = outs[0] + "/pre" + std::to_string(after.size() - k);
    pb.touch_extra(chain[k], g.value(n.outputs[0]));
  }
  outs[0] = chain[0];
  s.outputs = outs;
  pb.md.segments.push_back(s);
  for (size_t k = 0; k < after.size(); ++k) {
    format::Segment e;
    e.kind = format::SegmentKind::kHost;
    e.name = after[k].name;
    e.op_type = after[k].op_type;
    e.attributes = after[k].attributes;
    e.inputs = {chain[k]};
    e.inputs.insert(e.inputs.end(), after[k].extra_inputs.begin(), after[k].extra_inputs.end());
    e.outputs = {chain[k + 1]};
    pb.md.segments.push_back(std::move(e));
  }
}

}  // namespace

std::optional<LowerError> lower_host_segment(Lowering& L, PackageBuilder& pb, const Liveness& live,
                                             const Segment& seg) {
  for (size_t ni : seg.nodes) {
    const Node& n = L.g.nodes[ni];
    add_host_node(L, pb, n);
    // Results a device node reads later go to the arena (the runtime writes them back).
    for (ValueId v : n.outputs) {
      if (v < 0 || !live.read_by_device(v)) continue;
      if (auto st = L.define_runtime_written(v); !st) {
        return LowerError{make_error(st.error().code, n.label() + ": " + st.error().message), -1};
      }
    }
    live.release_dead(L, ni);
  }
  return std::nullopt;
}

}  // namespace npu::compiler::detail
