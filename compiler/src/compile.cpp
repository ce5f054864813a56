// compile_onnx / compile_graph: import, passes, partition, lowering (npu/compiler/compile.h).
#include "npu/compiler/compile.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "lower/lower.h"
#include "npu/compiler/quantize.h"

namespace npu::compiler {

namespace {

/// Input slots of each op that only parameterize it (see parameter_inputs()).
bool parameter_slot(const Node& n, size_t i) {
  const std::string& op = n.op_type;
  if (op == "QLinearConv" || op == "QLinearMatMul") return i >= 1;
  if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose") return i >= 1;
  if (op == "Gemm") return i >= 1;
  if (op == "MatMul" || op == "MatMulInteger") return i >= 1;
  if (op == "QuantizeLinear" || op == "DequantizeLinear") return i >= 1;
  if (op == "BatchNormalization" || op == "InstanceNormalization") return i >= 1;
  if (op == "Clip" || op == "Reshape" || op == "Pad" || op == "Squeeze" || op == "Unsqueeze" ||
      op == "Expand" || op == "Tile" || op == "Slice" || op == "Split" || op == "TopK") {
    return i >= 1;
  }
  if (op.rfind("Reduce", 0) == 0) return i >= 1;
  if (op == "PRelu") return i == 1;
  return false;
}

/// The default pipeline's passes up to and including `last` (first), and the rest (second).
std::pair<PassManager, PassManager> split_pipeline(std::string_view last) {
  std::pair<PassManager, PassManager> halves;
  bool second = false;
  for (const PassInfo& p : registered_passes()) {
    (second ? halves.second : halves.first).add(create_pass(p.name));
    second = second || p.name == last;
  }
  return halves;
}

/// Passes up to fuse-activation, calibration of the fused float graph, int8 rewrite, the
/// remaining passes.
Expected<void> run_passes_quantized(Graph& g, const CompileOptions& options,
                                    const std::string& source) {
  if (!options.calibrate) {
    return make_error(EINVAL, source + ": int8 quantization needs calibration inputs");
  }
  auto [front, back] = split_pipeline("fuse-activation");
  NPU_TRY(front.run(g, options.passes));
  const Graph calibration = calibration_graph(g);
  auto outputs = options.calibrate(calibration);
  if (!outputs) return make_error(outputs.error().code, "calibration: " + outputs.error().message);
  if (auto r = quantize_int8(g, calibration_ranges(calibration, *outputs)); !r) {
    return make_error(r.error().code, source + ": " + r.error().message);
  }
  return back.run(g, options.passes);
}

}  // namespace

std::vector<std::string> parameter_inputs(const Graph& g) {
  std::vector<std::string> names;
  for (ValueId in : g.inputs) {
    bool param = false, data = false;
    for (const Node& n : g.nodes) {
      for (size_t i = 0; i < n.inputs.size(); ++i) {
        if (n.inputs[i] != in) continue;
        (parameter_slot(n, i) ? param : data) = true;
      }
    }
    if (g.is_graph_output(in)) data = true;
    if (param && !data) names.push_back(g.value(in).name);
  }
  return names;
}

Expected<CompileResult> compile_graph(Graph g, const CompileOptions& options,
                                      const std::string& source) {
  if (options.quantize_int8) {
    NPU_TRY(run_passes_quantized(g, options, source));
  } else {
    NPU_TRY(PassManager::default_pipeline().run(g, options.passes));
  }
  if (options.host_only) {
    for (Node& n : g.nodes) n.placement = {Target::kHost, "host-only compile"};
  }
  detail::LowerOptions lo;
  lo.cfg = options.device;
  lo.source = std::filesystem::path(source).filename().string();
  lo.model_name = g.name.empty() ? std::filesystem::path(source).stem().string() : g.name;
  lo.producer = options.producer;
  // A node the lowering cannot handle (a shape the tiler cannot fit, an attribute combination
  // the ISA lacks) moves to the host with the lowering's reason, and the graph is lowered
  // again.
  for (size_t attempt = 0; attempt <= g.nodes.size(); ++attempt) {
    auto part = partition(g);
    if (!part) return make_error(part.error().code, source + ": " + part.error().message);
    auto r = detail::lower(g, *part, lo);
    if (auto* pkg = std::get_if<format::Package>(&r)) {
      if (auto v = format::validate_package(*pkg, source, &options.device); !v) {
        return make_error(v.error().code, "internal error: " + v.error().message);
      }
      CompileResult res;
      res.package = std::move(*pkg);
      res.partition_report = partition_report(g, *part);
      res.device_ops = part->device_ops;
      res.host_ops = part->host_ops;
      return res;
    }
    const auto& e = std::get<detail::LowerError>(r);
    if (e.node < 0 || g.nodes[static_cast<size_t>(e.node)].placement.target != Target::kDevice) {
      return make_error(e.error.code, source + ": " + e.error.message);
    }
    Node& n = g.nodes[static_cast<size_t>(e.node)];
    n.placement = {Target::kHost, "lowering: " + e.error.message};
  }
  return make_error(EINVAL, source + ": lowering did not converge");
}

Expected<CompileResult> compile_onnx(const std::string& path, const CompileOptions& options) {
  auto g = import_onnx(path, options.import);
  if (!g) return g.error();
  // Symbolic dims nobody bound (a dynamic batch): compile for size 1 and keep the symbol on
  // the graph's inputs and outputs, so the runtime runs a larger batch slice by slice.
  ImportOptions bound = options.import;
  std::map<std::string, Shape> symbolic;
  for (const auto* list : {&g->inputs, &g->outputs}) {
    for (ValueId v : *list) {
      const Value& val = g->value(v);
      if (!val.shape) continue;
      for (const Dim& d : *val.shape) {
        if (d.is_static() || d.symbol.empty()) continue;
        bound.dim_values.emplace(d.symbol, 1);
        symbolic[val.name] = *val.shape;
      }
    }
  }
  if (symbolic.empty()) return compile_graph(std::move(*g), options, path);
  g = import_onnx(path, bound);
  if (!g) return g.error();
  auto r = compile_graph(std::move(*g), options, path);
  if (!r) return r;
  for (auto& t : r->package.metadata.tensors) {
    auto it = symbolic.find(t.name);
    if (it == symbolic.end() || it->second.size() != t.shape.size()) continue;
    for (size_t i = 0; i < t.shape.size(); ++i) {
      const Dim& d = it->second[i];
      if (!d.is_static() && !d.symbol.empty()) t.shape[i] = format::Dim::named(d.symbol);
    }
  }
  if (auto v = format::validate_package(r->package, path, &options.device); !v) {
    return make_error(v.error().code, "internal error: " + v.error().message);
  }
  return r;
}

std::string format_layer_report(const format::Package& package) {
  std::string out = fmt::format("{:<28} {:<12} {:<7} {:>6} {:>12} {:>11} {:>11} {:>6}\n", "layer",
                                "op", "engine", "tiles", "MACs", "bytes", "cycles", "util");
  uint64_t macs = 0, bytes = 0, cycles = 0, compute = 0, host = 0;
  for (const auto& s : package.metadata.segments) {
    if (s.kind == format::SegmentKind::kHost) {
      out += fmt::format("{:<28} {:<12} {:<7}\n", s.name.substr(0, 28), s.op_type, "host");
      ++host;
      continue;
    }
    for (const auto& l : s.layers) {
      const double util = l.cycles ? 100.0 * double(l.compute_cycles) / double(l.cycles) : 0.0;
      out += fmt::format("{:<28} {:<12} {:<7} {:>6} {:>12} {:>11} {:>11} {:>5.1f}%\n",
                         l.name.substr(0, 28), l.op, l.engine, l.tiles, l.macs, l.bytes, l.cycles,
                         util);
      macs += l.macs;
      bytes += l.bytes;
      compute += l.compute_cycles;
    }
    cycles += s.estimated_cycles;
  }
  const double util = cycles ? 100.0 * double(compute) / double(cycles) : 0.0;
  out += fmt::format("{:<28} {:<12} {:<7} {:>6} {:>12} {:>11} {:>11} {:>5.1f}%\n", "total",
                     fmt::format("{} host", host), "", "", macs, bytes, cycles, util);
  return out;
}

}  // namespace npu::compiler
