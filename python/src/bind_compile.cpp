// npu.compile(): the compiler from Python, through the tools' compile-flag translation
// (tools/common/compile_cli.h) so that a call and the npu-compile command line with the same
// settings give the same package and the same errors. Only in builds with the compiler
// (NPU_BUILD_COMPILER); without it, npu/__init__.py says so when npu.compile() is called.
#include <pybind11/stl.h>

#include <optional>

#include "arrays.h"
#include "bindings.h"
#include "compile_cli.h"
#include "errors.h"
#include "npu/compiler/compile.h"

namespace npu::python {

namespace {

std::string join_dims(py::handle dims) {
  std::string text;
  for (py::handle d : dims) text += (text.empty() ? "" : ",") + std::to_string(d.cast<int64_t>());
  return text;
}

PackageHandle compile(py::object model, std::optional<std::string> precision,
                      std::optional<std::string> quantize, py::object calibration,
                      py::object params, py::object input_shapes, py::object device_config,
                      py::object dims, bool host_only) {
  tools::CompileFlags f;
  if (is_path(model)) {
    f.model = path_of(model);
  } else {
    f.model = "<bytes>";
    const py::buffer_info info = py::buffer(model).request();
    f.model_bytes = std::string(static_cast<const char*>(info.ptr),
                                static_cast<size_t>(info.size * info.itemsize));
  }
  f.precision = precision.value_or("");
  f.quantize = quantize.value_or("");
  if (!calibration.is_none()) {
    if (is_path(calibration)) {
      f.calibration = path_of(calibration);
    } else {
      f.calibration = "calibration";
      f.calibration_data =
          std::make_shared<const format::NpyArray>(array_of(calibration, "calibration"));
    }
  }
  if (!params.is_none()) {
    if (is_path(params)) {
      f.params = path_of(params);
    } else {
      for (auto [key, value] : params.cast<py::dict>()) {
        const auto name = key.cast<std::string>();
        f.params_data.emplace(name, array_of(value, "params['" + name + "']"));
      }
    }
  }
  if (!input_shapes.is_none()) {
    for (auto [key, value] : input_shapes.cast<py::dict>()) {
      f.input_shapes.push_back(key.cast<std::string>() + "=" + join_dims(value));
    }
  }
  if (!dims.is_none()) {
    for (auto [key, value] : dims.cast<py::dict>()) {
      f.dims.push_back(key.cast<std::string>() + "=" + std::to_string(value.cast<int64_t>()));
    }
  }
  if (!device_config.is_none()) f.device_config = path_of(device_config);
  f.host_only = host_only;

  std::optional<Expected<compiler::CompileResult>> result;
  {
    py::gil_scoped_release nogil;
    auto options = tools::compile_options(f, nullptr);
    if (!options) {
      result.emplace(options.error());
    } else {
      options->producer = "npu (python)";
      result.emplace(tools::compile_model(f, *options));
    }
  }
  compiler::CompileResult r = unwrap(std::move(*result));
  return {std::make_shared<const format::Package>(std::move(r.package)), f.model,
          std::move(r.partition_report), r.device_ops, r.host_ops};
}

}  // namespace

void bind_compile(py::module_& m) {
  m.def("compile", &compile, py::arg("model"), py::kw_only(), py::arg("precision") = "fp32",
        py::arg("quantize") = py::none(), py::arg("calibration") = py::none(),
        py::arg("params") = py::none(), py::arg("input_shapes") = py::none(),
        py::arg("device_config") = py::none(), py::arg("dims") = py::none(),
        py::arg("host_only") = false,
        R"(Compiles a model into an npu.Package (what npu-compile does).

model: a path (str or os.PathLike) to an ONNX model (.onnx) or a TVM BYOC JSON graph
    (.json), or the bytes of one (JSON text starts with '{').
precision: 'fp32', 'fp16' or 'bf16': the type float32 tensors are stored in and convolutions
    and matrix products run in on the device (--precision).
quantize: None or 'int8': post-training quantization (--quantize); needs calibration.
calibration: representative inputs for the model's one input, an ndarray or a .npy path; any
    number of rows of the input's shape (--calibration).
params: a TVM graph's const nodes and inputs bound as constants: a dict {name: ndarray}, an
    .npz path or a directory of NAME.npy files (--params).
input_shapes: {input name: shape} binding symbolic dims (--input-shape).
device_config: path of the device-config JSON to compile for (--device-config).
dims: {symbol: size} for symbolic dims (--dim).
host_only: put every operator on the host (a reference run of the same package).

Errors raise npu.Error with npu-compile's message, e.g. "m.onnx: node 3 (Conv): ...".
The GIL is released while compiling.)");

  py::object package = m.attr("Package");
  package.attr("report_text") = py::cpp_function(
      [](const PackageHandle& p) { return compiler::format_layer_report(*p.package); },
      py::is_method(package), py::name("report_text"),
      "The per-layer table npu-compile --report prints (layer, op, engine, tiles, MACs, "
      "bytes, cycles, utilization, totals).");
}

}  // namespace npu::python
