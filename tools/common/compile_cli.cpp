// Compile flags shared by npu-compile and npu-run (see compile_cli.h).
#include "compile_cli.h"

#include <filesystem>
#include <memory>

#include "npu/device.h"
#include "npu/format/npz.h"
#include "npu/runtime/batch.h"
#include "npu/runtime/model.h"

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

/// The calibration run (CompileOptions::calibrate): compiles the calibration graph with every
/// operator on the host, loads it on the emulator and runs it on `data` bound to the model's
/// one input with run_batched() (a slice of the input's batch at a time, every output's rows
/// concatenated).
Expected<std::map<std::string, format::NpyArray>> run_calibration(const compiler::Graph& g,
                                                                  const format::NpyArray& data,
                                                                  const std::string& file) {
  compiler::CompileOptions o;
  o.host_only = true;
  o.producer = "npu-compile (calibration)";
  auto compiled = compiler::compile_graph(g, o, file);
  if (!compiled) return compiled.error();
  auto dev = Device::open("emu:");
  if (!dev) return dev.error();
  auto model = Model::load(*dev, std::move(compiled->package), file);
  if (!model) return model.error();
  if (model->inputs().size() != 1) {
    std::string names;
    for (const auto& in : model->inputs()) names += (names.empty() ? "" : ", ") + in.name;
    return make_error(EINVAL, file + ": the model has " + std::to_string(model->inputs().size()) +
                                  " inputs (" + names +
                                  "); --calibration needs a model with one input");
  }
  return run_batched(*model, model->inputs()[0].name, data);
}

}  // namespace

Expected<std::map<std::string, format::NpyArray>> read_params(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    if (fs::path(path).extension() != ".npz") {
      return make_error(EINVAL, "--params " + path +
                                    ": expected an .npz file or a directory of "
                                    "NAME.npy files");
    }
    auto arrays = format::read_npz(path);
    if (!arrays) return make_error(arrays.error().code, "--params " + arrays.error().message);
    return arrays;
  }
  std::map<std::string, format::NpyArray> arrays;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.path().extension() != ".npy") continue;
    auto a = format::read_npy(entry.path().string());
    if (!a) return make_error(a.error().code, "--params " + a.error().message);
    arrays.emplace(entry.path().stem().string(), std::move(*a));
  }
  if (ec) return make_error(EIO, "--params " + path + ": " + ec.message());
  return arrays;
}

void add_compile_flags(CLI::App& app, CompileFlags& f) {
  app.add_option("--device-config", f.device_config,
                 "device-config JSON the code is compiled for (SRAM size, MAC array, timing)");
  app.add_option("--quantize", f.quantize, "quantize a float model (int8)");
  app.add_option("--calibration", f.calibration, "calibration inputs (.npy) for --quantize");
  app.add_option("--precision", f.precision,
                 "fp32 (default), fp16 or bf16: the type float32 tensors are stored in and "
                 "convolutions and matrix products run in on the device");
  app.add_option("--params", f.params,
                 "FILE.npz or DIR of NAME.npy: a TVM graph's const nodes, and inputs bound as "
                 "constants (weights)");
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
  if (!f.precision.empty()) {
    auto p = compiler::precision_from_name(f.precision);
    if (!p)
      return make_error(EINVAL, "--precision " + f.precision + ": expected fp32, fp16 or bf16");
    o.precision = *p;
  }
  if (!f.quantize.empty() && f.quantize != "int8") {
    return make_error(EINVAL, "--quantize " + f.quantize + ": unsupported (only int8)");
  }
  if (f.quantize.empty() != f.calibration.empty()) {
    return make_error(EINVAL, f.quantize.empty() ? "--calibration needs --quantize int8"
                                                 : "--quantize int8 needs --calibration FILE.npy");
  }
  if (!f.quantize.empty()) {
    std::shared_ptr<const format::NpyArray> data = f.calibration_data;
    if (!data) {
      auto read = format::read_npy(f.calibration);
      if (!read) return read.error();
      data = std::make_shared<const format::NpyArray>(std::move(*read));
    }
    o.quantize_int8 = true;
    o.calibrate = calibration_runner(std::move(data), f.calibration);
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
  std::map<std::string, format::NpyArray> params = f.params_data;
  if (!f.params.empty()) {
    auto read = read_params(f.params);
    if (!read) return read.error();
    for (auto& [name, a] : *read) {
      if (params.count(name)) {
        return make_error(EINVAL, "'" + name + "' is given twice in the params");
      }
      params.emplace(name, std::move(a));
    }
  }
  if (!params.empty()) {
    for (auto& [name, a] : params) {
      if (inputs && inputs->count(name)) {
        return make_error(EINVAL, "'" + name + "' is given by both --params and --input");
      }
      o.import.constant_inputs[name] = std::move(a);
    }
  }
  if (inputs && !inputs->empty()) {
    for (const auto& [name, a] : *inputs) o.import.input_shapes[name] = a.shape;
    // Inputs that only parameterize an op become constants (BRIEF §3, npu-run).
    auto g = f.model_bytes ? compiler::import_model_bytes(*f.model_bytes, o.import, f.model)
                           : compiler::import_model(f.model, o.import);
    if (!g) return g.error();
    for (const std::string& name : compiler::parameter_inputs(*g)) {
      auto it = inputs->find(name);
      if (it == inputs->end()) continue;
      o.import.constant_inputs[name] = it->second;
      o.import.input_shapes.erase(name);
      inputs->erase(it);
    }
  }
  return o;
}

std::function<Expected<std::map<std::string, format::NpyArray>>(const compiler::Graph&)>
calibration_runner(std::shared_ptr<const format::NpyArray> data, std::string name) {
  return [data = std::move(data), name = std::move(name)](const compiler::Graph& g) {
    return run_calibration(g, *data, name);
  };
}

Expected<compiler::CompileResult> compile_model(const CompileFlags& f,
                                                const compiler::CompileOptions& o) {
  if (f.model_bytes) return compiler::compile_model_bytes(*f.model_bytes, o, f.model);
  return compiler::compile_model(f.model, o);
}

}  // namespace npu::tools
