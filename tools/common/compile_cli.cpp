// Compile flags shared by npu-compile and npu-run (see compile_cli.h).
#include "compile_cli.h"

#include <filesystem>

#include "npu/compiler/onnx_tensor.h"

namespace npu::tools {

namespace {

Expected<std::vector<int64_t>> parse_dims(const std::string& text, const std::string& what) {
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = text.find_first_of(",x", pos);
    const std::string part = text.substr(pos, comma == std::string::npos ? comma : comma - pos);
    try {
      size_t used = 0;
      const long long v = std::stoll(part, &used);
      if (used != part.size() || v < 0) throw std::invalid_argument(part);
      dims.push_back(v);
    } catch (const std::exception&) {
      return make_error(EINVAL, what + ": '" + part + "' is not a dimension");
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return dims;
}

Expected<std::pair<std::string, std::string>> split_eq(const std::string& text,
                                                       const std::string& flag) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    return make_error(EINVAL, flag + " '" + text + "': expected NAME=VALUE");
  return std::pair{text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace

void add_compile_flags(CLI::App& app, CompileFlags& f) {
  app.add_option("--device-config", f.device_config,
                 "device-config JSON the code is compiled for (SRAM size, MAC array, timing)");
  app.add_option("--quantize", f.quantize, "quantize a float model (int8)");
  app.add_option("--calibration", f.calibration, "calibration inputs (.npy) for --quantize");
  app.add_flag("--report", f.report, "print the partition and the per-layer table");
  app.add_flag("--host-only", f.host_only, "run every operator on the host (reference run)");
  app.add_option("--input-shape", f.input_shapes,
                 "NAME=D0,D1,...: the run-time shape of an input (binds symbolic dims)");
  app.add_option("--dim", f.dims, "SYMBOL=N: the size of a symbolic dim (e.g. N=1)");
  app.add_option("--print-after", f.print_after, "dump the graph after these passes (or all)");
  app.add_option("--disable", f.disable, "skip these passes");
}

Expected<compiler::CompileOptions> compile_options(
    const CompileFlags& f, std::map<std::string, format::NpyArray>* inputs) {
  compiler::CompileOptions o;
  if (!f.quantize.empty() || !f.calibration.empty()) {
    // Post-training quantization is not implemented: say so rather than run in float.
    return make_error(ENOTSUP, "--quantize " + f.quantize +
                                   ": post-training quantization is not implemented yet "
                                   "(compile pre-quantized QDQ/QLinear ONNX models instead)");
  }
  if (!f.device_config.empty()) {
    auto cfg = isa::DeviceConfig::load(f.device_config);
    if (!cfg) return cfg.error();
    o.device = std::move(*cfg);
  }
  o.host_only = f.host_only;
  o.passes.print_after = f.print_after;
  o.passes.disable = f.disable;
  o.producer = "npu-compile";
  for (const auto& text : f.input_shapes) {
    auto kv = split_eq(text, "--input-shape");
    if (!kv) return kv.error();
    auto d = parse_dims(kv->second, "--input-shape " + kv->first);
    if (!d) return d.error();
    o.import.input_shapes[kv->first] = std::move(*d);
  }
  for (const auto& text : f.dims) {
    auto kv = split_eq(text, "--dim");
    if (!kv) return kv.error();
    auto d = parse_dims(kv->second, "--dim " + kv->first);
    if (!d) return d.error();
    if (d->size() != 1) return make_error(EINVAL, "--dim " + text + ": expected SYMBOL=N");
    o.import.dim_values[kv->first] = (*d)[0];
  }
  if (inputs && !inputs->empty()) {
    for (const auto& [name, a] : *inputs) o.import.input_shapes[name] = a.shape;
    // Inputs that only parameterize an op become constants (BRIEF §3, npu-run).
    auto g = compiler::import_onnx(f.model, o.import);
    if (!g) return g.error();
    for (const std::string& name : compiler::parameter_inputs(*g)) {
      auto it = inputs->find(name);
      if (it == inputs->end()) continue;
      auto t = compiler::from_npy(it->second, "--input '" + name + "'");
      if (!t) return t.error();
      o.import.constant_inputs[name] = std::move(*t);
      o.import.input_shapes.erase(name);
      inputs->erase(it);
    }
  }
  return o;
}

Expected<compiler::CompileResult> compile_model(const CompileFlags& f,
                                                const compiler::CompileOptions& o) {
  const std::string ext = std::filesystem::path(f.model).extension().string();
  if (ext == ".json") {
    return make_error(ENOTSUP, f.model +
                                   ": TVM JSON graphs are not supported yet (give an "
                                   ".onnx model)");
  }
  return compiler::compile_onnx(f.model, o);
}

}  // namespace npu::tools
