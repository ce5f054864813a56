// Shared by npu-compile and npu-run: the compile flags of BRIEF §3 (--device-config,
// --quantize/--calibration, --params, --report, pass debugging) and their translation into
// compiler::CompileOptions, including the inputs npu-run binds as constants. MODEL is an ONNX
// model or a TVM BYOC JSON graph (.json). The Python module's npu.compile() goes through the
// same translation, with the model, the calibration data and the params in memory.
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npu/compiler/compile.h"
#include "npu/expected.h"
#include "npu/format/npy.h"

namespace npu::tools {

struct CompileFlags {
  std::string model;
  std::string device_config;
  std::string quantize, calibration;
  std::string precision;  // --precision fp32|fp16|bf16
  std::string params;     // --params FILE.npz|DIR: TVM const nodes and inputs bound as constants
  bool report = false, host_only = false;
  std::vector<std::string> print_after, disable, input_shapes, dims;
  // In memory instead of files (the Python module): the model's bytes (`model` then only
  // names it), the calibration inputs (`calibration` then only names them), and params
  // arrays bound like those of `params`.
  std::optional<std::string> model_bytes;
  std::shared_ptr<const format::NpyArray> calibration_data;
  std::map<std::string, format::NpyArray> params_data;
};

/// Adds the compile flags (not the positional MODEL) to `app`.
void add_compile_flags(CLI::App& app, CompileFlags& flags);

/// The arrays of --params: an .npz archive (np.savez / np.savez_compressed) or a directory of
/// NAME.npy files, by name.
Expected<std::map<std::string, format::NpyArray>> read_params(const std::string& path);

/// CompileOptions for `flags`; --params arrays are bound as constants (ImportOptions::
/// constant_inputs: a TVM graph's const nodes and named inputs, an ONNX model's inputs);
/// `inputs` (npu-run's --input arrays) fix the graph inputs'
/// shapes, and those that only parameterize an op (compiler::parameter_inputs) are bound as
/// constants and removed from `inputs`. `--quantize int8 --calibration FILE.npy` (each needs
/// the other) reads FILE and sets CompileOptions::calibrate to a run of the calibration graph
/// host-only on the emulator ("emu:"), FILE bound to the model's single input in slices of its
/// compiled batch.
Expected<compiler::CompileOptions> compile_options(const CompileFlags& flags,
                                                   std::map<std::string, format::NpyArray>* inputs);

/// The calibration run of CompileOptions::calibrate for `data` (named `name` in errors): the
/// calibration graph compiled host-only, loaded on the emulator ("emu:") and run with
/// run_batched() on `data` bound to the model's single input.
std::function<Expected<std::map<std::string, format::NpyArray>>(const compiler::Graph&)>
calibration_runner(std::shared_ptr<const format::NpyArray> data, std::string name);

/// Compiles flags.model, or flags.model_bytes (one-line errors naming the model).
Expected<compiler::CompileResult> compile_model(const CompileFlags& flags,
                                                const compiler::CompileOptions& options);

}  // namespace npu::tools
