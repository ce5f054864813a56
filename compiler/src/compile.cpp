// compile_onnx / compile_graph: import, passes, partition, lowering (npu/compiler/compile.h).
#include "npu/compiler/compile.h"

#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "lower/lower.h"
#include "npu/compiler/quantize.h"
#include "npu/compiler/tvm_import.h"
#include "npu/elide.h"
#include "npu/exception_boundary.h"
#include "npu/ops/registry.h"
#include "npu_isa.h"

namespace npu::compiler {

namespace {

/// Whether input slot `i` of `n` only parameterizes it (operators.def's Params column).
bool parameter_slot(const Node& n, size_t i) {
  const ops::OpSchema* op = n.domain.empty() ? ops::find(n.op_type) : nullptr;
  return op != nullptr && op->params.has(i);
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

namespace {

/// Whether value `v` is read only in parameter slots, directly or through ops that only
/// rearrange it (a weight fed as NHWC/HWIO goes through a Transpose first, a zero point through
/// a Cast): `param` when some use is a parameter, `data` when some use is data.
void classify_uses(const Graph& g, ValueId v, bool& param, bool& data, int depth = 0) {
  if (g.is_graph_output(v)) data = true;
  for (const Node& n : g.nodes) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i] != v) continue;
      const bool view = i == 0 && n.outputs.size() == 1 && n.outputs[0] >= 0 && depth < 8 &&
                        (n.op_type == "Transpose" || n.op_type == "Reshape" ||
                         n.op_type == "Cast" || n.op_type == "Identity");
      if (view) {
        classify_uses(g, n.outputs[0], param, data, depth + 1);
      } else {
        (parameter_slot(n, i) ? param : data) = true;
      }
    }
  }
}

}  // namespace

std::vector<std::string> parameter_inputs(const Graph& g) {
  std::vector<std::string> names;
  for (ValueId in : g.inputs) {
    bool param = false, data = false;
    classify_uses(g, in, param, data);
    if (param && !data) names.push_back(g.value(in).name);
  }
  return names;
}

std::optional<Precision> precision_from_name(std::string_view name) {
  if (name == "fp32") return Precision::kFp32;
  if (name == "fp16") return Precision::kFp16;
  if (name == "bf16") return Precision::kBf16;
  return std::nullopt;
}

namespace {

Expected<CompileResult> compile_graph_unguarded(Graph g, const CompileOptions& options,
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
  lo.precision = options.precision == Precision::kFp16   ? NPU_DTYPE_FP16
                 : options.precision == Precision::kBf16 ? NPU_DTYPE_BF16
                                                         : 0;
  if (lo.precision && !(options.device.features & NPU_FEATURE_FP16))
    return make_error(ENOTSUP, source + ": --precision " +
                                   (lo.precision == NPU_DTYPE_FP16 ? "fp16" : "bf16") +
                                   ": the device '" + options.device.name +
                                   "' has no fp16/bf16 datapath (features lack fp16)");
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

/// Whether every row of a dynamic batch `symbol` is computed independently: the symbol is dim
/// 0 (and only dim 0) of every graph input and output and of every non-constant tensor a node
/// reads or writes, and no softmax normalizes across dim 0. Then a package compiled for batch 1
/// can run a batch of N as N slices.
bool batch_rows_independent(const Graph& g, const std::string& symbol) {
  auto leading_only = [&](ValueId v) {
    const Value& val = g.value(v);
    if (val.is_constant()) return true;
    if (!val.shape || val.shape->empty() || (*val.shape)[0].symbol != symbol) return false;
    for (size_t i = 1; i < val.shape->size(); ++i) {
      if (!(*val.shape)[i].is_static()) return false;
    }
    return true;
  };
  for (const auto* list : {&g.inputs, &g.outputs}) {
    for (ValueId v : *list) {
      if (!leading_only(v)) return false;
    }
  }
  for (const Node& n : g.nodes) {
    for (const auto* list : {&n.inputs, &n.outputs}) {
      for (ValueId v : *list) {
        if (v >= 0 && !leading_only(v)) return false;
      }
    }
    if (n.op_type == "Softmax" || n.op_type == "LogSoftmax" || n.op_type == "Hardmax") {
      const auto rank = static_cast<int64_t>(g.value(n.input(0)).shape->size());
      int64_t axis = n.attr_int("axis", n.opset < 13 ? 1 : -1);
      if (axis < 0) axis += rank;
      if (axis == 0) return false;
    }
  }
  return true;
}

/// Imports an ONNX model with the given options (from a file or from bytes).
using OnnxImporter = std::function<Expected<Graph>(const ImportOptions&)>;

Expected<CompileResult> compile_onnx_unguarded(const OnnxImporter& import, const std::string& path,
                                               const CompileOptions& options) {
  auto g = import(options.import);
  if (!g) return g.error();
  // Symbolic dims nobody bound: compile for size 1. When the symbol is a batch whose rows are
  // independent, keep it on the graph's inputs and outputs, so the runtime runs a larger batch
  // slice by slice; otherwise the package is for size 1 only (bind the size with --dim).
  ImportOptions bound = options.import;
  std::set<std::string> symbols;
  for (const auto* list : {&g->inputs, &g->outputs}) {
    for (ValueId v : *list) {
      const Value& val = g->value(v);
      if (!val.shape) continue;
      for (const Dim& d : *val.shape) {
        if (!d.is_static() && !d.symbol.empty()) symbols.insert(d.symbol);
      }
    }
  }
  if (symbols.empty()) return compile_graph_unguarded(std::move(*g), options, path);
  std::map<std::string, Shape> dynamic;  // graph inputs/outputs keeping a symbolic batch
  for (const std::string& sym : symbols) {
    bound.dim_values.emplace(sym, 1);
    if (symbols.size() != 1 || !batch_rows_independent(*g, sym)) continue;
    for (const auto* list : {&g->inputs, &g->outputs}) {
      for (ValueId v : *list) dynamic[g->value(v).name] = *g->value(v).shape;
    }
  }
  g = import(bound);
  if (!g) return g.error();
  auto r = compile_graph_unguarded(std::move(*g), options, path);
  if (!r) return r;
  for (auto& t : r->package.metadata.tensors) {
    auto it = dynamic.find(t.name);
    if (it == dynamic.end() || it->second.size() != t.shape.size()) continue;
    t.shape[0] = format::Dim::named(it->second[0].symbol);
  }
  if (auto v = format::validate_package(r->package, path, &options.device); !v) {
    return make_error(v.error().code, "internal error: " + v.error().message);
  }
  return r;
}

bool is_tvm_json(const std::string& path) {
  return std::filesystem::path(path).extension() == ".json";
}

/// A serialized ModelProto never starts with '{' (its first byte is a field tag); a TVM JSON
/// graph is an object, after optional whitespace.
bool is_json_text(std::string_view bytes) {
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && bytes[first] == '{';
}

OnnxImporter onnx_file(const std::string& path) {
  return [&path](const ImportOptions& o) { return import_onnx(path, o); };
}

}  // namespace

// The public entry points close the exception boundary (npu/exception_boundary.h).

Expected<CompileResult> compile_graph(Graph g, const CompileOptions& options,
                                      const std::string& source) {
  return catch_exceptions(source,
                          [&] { return compile_graph_unguarded(std::move(g), options, source); });
}

Expected<CompileResult> compile_onnx(const std::string& path, const CompileOptions& options) {
  return catch_exceptions(path,
                          [&] { return compile_onnx_unguarded(onnx_file(path), path, options); });
}

Expected<Graph> import_model(const std::string& path, const ImportOptions& options) {
  return catch_exceptions(path, [&] {
    return is_tvm_json(path) ? import_tvm_json(path, options) : import_onnx(path, options);
  });
}

Expected<CompileResult> compile_model(const std::string& path, const CompileOptions& options) {
  return catch_exceptions(path, [&]() -> Expected<CompileResult> {
    if (!is_tvm_json(path)) return compile_onnx_unguarded(onnx_file(path), path, options);
    auto g = import_tvm_json(path, options.import);
    if (!g) return g.error();
    return compile_graph_unguarded(std::move(*g), options, path);
  });
}

Expected<Graph> import_model_bytes(std::string_view bytes, const ImportOptions& options,
                                   const std::string& source) {
  return catch_exceptions(source, [&] {
    return is_json_text(bytes) ? import_tvm_json_text(bytes, options, source)
                               : import_onnx_bytes(bytes, options, source);
  });
}

Expected<CompileResult> compile_model_bytes(std::string_view bytes, const CompileOptions& options,
                                            const std::string& source) {
  return catch_exceptions(source, [&]() -> Expected<CompileResult> {
    if (!is_json_text(bytes)) {
      const OnnxImporter import = [&](const ImportOptions& o) {
        return import_onnx_bytes(bytes, o, source);
      };
      return compile_onnx_unguarded(import, source, options);
    }
    auto g = import_tvm_json_text(bytes, options.import, source);
    if (!g) return g.error();
    return compile_graph_unguarded(std::move(*g), options, source);
  });
}

std::string format_layer_report(const format::Package& package) {
  std::string out = fmt::format("{:<28} {:<12} {:<7} {:>6} {:>12} {:>11} {:>11} {:>6}\n", "layer",
                                "op", "engine", "tiles", "MACs", "bytes", "cycles", "util");
  uint64_t macs = 0, bytes = 0, cycles = 0, compute = 0, host = 0;
  for (const auto& s : package.metadata.segments) {
    if (s.kind == format::SegmentKind::kHost) {
      out += fmt::format("{} {:<12} {:<7}\n", elide_cell(s.name, 28), s.op_type, "host");
      ++host;
      continue;
    }
    for (const auto& l : s.layers) {
      const double util = l.cycles ? 100.0 * double(l.compute_cycles) / double(l.cycles) : 0.0;
      out += fmt::format("{} {:<12} {:<7} {:>6} {:>12} {:>11} {:>11} {:>5.1f}%\n",
                         elide_cell(l.name, 28), l.op, l.engine, l.tiles, l.macs, l.bytes, l.cycles,
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

std::string format_precision_report(const format::Package& half, const format::Package& fp32,
                                    std::string_view precision) {
  std::map<std::string, uint64_t, std::less<>> base;
  uint64_t base_total = 0, half_total = 0;
  for (const auto& s : fp32.metadata.segments) {
    for (const auto& l : s.layers) base[l.name] += l.cycles;
    base_total += s.estimated_cycles;
  }
  std::string out =
      fmt::format("{:<28} {:<12} {:>11} {:>11} {:>8}\n", "layer", "op", "fp32", precision, "saved");
  auto saved = [](uint64_t b, uint64_t h) {
    return b ? fmt::format("{:.1f}%", 100.0 * (double(b) - double(h)) / double(b)) : "-";
  };
  std::set<std::string, std::less<>> seen;
  for (const auto& s : half.metadata.segments) {
    for (const auto& l : s.layers) {
      const auto it = base.find(l.name);
      const bool first = seen.insert(l.name).second;
      const bool both = it != base.end() && first;
      out += fmt::format("{} {:<12} {:>11} {:>11} {:>8}\n", elide_cell(l.name, 28), l.op,
                         both ? std::to_string(it->second) : "-", l.cycles,
                         both ? saved(it->second, l.cycles) : "-");
    }
    half_total += s.estimated_cycles;
  }
  out += fmt::format("{:<28} {:<12} {:>11} {:>11} {:>8}\n", "total", "", base_total, half_total,
                     saved(base_total, half_total));
  return out;
}

}  // namespace npu::compiler
