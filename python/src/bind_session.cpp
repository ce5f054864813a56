// npu.Session: a package loaded on a device, run with NumPy arrays in and out, from any
// number of threads (the pool is session.h).
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "arrays.h"
#include "bindings.h"
#include "device_handle.h"
#include "errors.h"
#include "npu/runtime/run_trace.h"
#include "session.h"
#include "stats.h"

namespace npu::python {

namespace {

std::unique_ptr<Session> open_session(py::object source, py::object device,
                                      std::optional<size_t> max_parallel, bool profile) {
  PackageHandle package;
  if (py::isinstance<PackageHandle>(source)) {
    package = source.cast<PackageHandle>();
  } else {
    package = load_package(source);
  }
  std::string spec;
  std::optional<Device> first;
  if (py::isinstance<DeviceHandle>(device)) {
    const auto& handle = device.cast<const DeviceHandle&>();
    first = handle.device;
    spec = handle.device.path();
  } else {
    spec = device.cast<std::string>();
  }
  SessionOptions options;
  options.profile = profile;
  options.max_instances =
      max_parallel.value_or(std::max<size_t>(1, std::thread::hardware_concurrency()));
  py::gil_scoped_release nogil;
  return unwrap(Session::open(package.package, package.name, spec, std::move(first), options));
}

py::dict run(Session& s, py::object inputs, std::optional<double> timeout, bool racecheck) {
  std::vector<HeldView> held;
  std::map<std::string, format::ArrayView> views;
  const auto add = [&](const std::string& name, py::handle value) {
    held.push_back(view_of(value, s.name() + ": input '" + name + "'"));
    views.emplace(name, held.back().view);
  };
  if (py::isinstance<py::dict>(inputs)) {
    for (auto [key, value] : inputs.cast<py::dict>()) {
      if (!py::isinstance<py::str>(key)) {
        throw py::type_error("Session.run: input names must be str, got " +
                             py::repr(key).cast<std::string>());
      }
      add(key.cast<std::string>(), value);
    }
  } else if (s.inputs().size() == 1) {  // run(x) for a model with one input
    add(s.inputs()[0].name, inputs);
  } else {
    raise(s.name() + ": the model has " + std::to_string(s.inputs().size()) +
          " inputs: pass a dict {name: array}");
  }
  RunOptions options;
  options.racecheck = racecheck;
  if (timeout) {
    if (*timeout < 0) raise(s.name() + ": timeout must not be negative");
    options.timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(*timeout));
  }
  std::optional<Expected<std::map<std::string, format::NpyArray>>> result;
  {
    py::gil_scoped_release nogil;
    result.emplace(s.run(views, options));
  }
  std::map<std::string, format::NpyArray> outputs = unwrap(std::move(*result));
  py::dict out;
  for (const TensorDesc& d : s.outputs()) {
    auto it = outputs.find(d.name);
    if (it != outputs.end()) out[py::str(d.name)] = to_numpy(std::move(it->second));
  }
  return out;
}

py::object last_stats(const Session& s) {
  std::shared_ptr<const RunStats> stats = s.last_stats();
  if (!stats) return py::none();
  return py::cast(StatsSnapshot{std::move(stats), s.package(), s.engines(), s.clock_hz()});
}

void session_write_trace(const Session& s, py::object path) {
  const std::string file = path_of(path);
  std::shared_ptr<const RunStats> stats = s.last_stats();
  if (!stats) raise(s.name() + ": write_trace: no run yet");
  if (!stats->has_profile) {
    raise(s.name() +
          ": write_trace: the last run has no job profile (Session(..., profile=True) "
          "on a device with capability job_profile)");
  }
  TraceOptions options;
  options.clock_hz = s.clock_hz();
  options.engines = s.engines();
  options.process_name = "npu " + s.name();
  py::gil_scoped_release nogil;
  unwrap(write_run_trace(*stats, s.package()->metadata, file, options));
}

}  // namespace

void bind_session(py::module_& m) {
  py::class_<Session>(m, "Session", R"(A model package loaded on a device, ready to run.

Session(package, device="emu:", *, max_parallel=None, profile=True)

package: an npu.Package, or a .npub path (or its bytes).
device: a device string -- "emu:" (the in-process emulator, the default), "emu:CONFIG.json",
    "unix:SOCKET" (a device served by npu-daemon), "/dev/accel/accelN" -- or an npu.Device.
max_parallel: how many runs may execute at once (default: the number of CPUs). Each
    concurrent run needs its own copy of the model's buffers, so a Session loads up to this
    many instances, each on its own open device, as threads ask for them.
profile: collect job profiles, which last_stats needs for per-engine and per-layer figures.

run() releases the GIL; any number of threads may call it on one Session at once. Use it as
a context manager, or call close(), to free the device memory early. Errors raise npu.Error
with the message npu-submit prints.)")
      .def(py::init(&open_session), py::arg("package"), py::arg("device") = "emu:", py::kw_only(),
           py::arg("max_parallel") = py::none(), py::arg("profile") = true)
      .def_property_readonly(
          "inputs", [](const Session& s) { return tensor_specs(s.inputs()); },
          "The graph inputs, a list of npu.TensorSpec (name, shape, dtype) in order.")
      .def_property_readonly(
          "outputs", [](const Session& s) { return tensor_specs(s.outputs()); },
          "The graph outputs, a list of npu.TensorSpec in order.")
      .def_property_readonly("name", &Session::name,
                             "The package's name in errors (its path, or the model's).")
      .def_property_readonly("device", &Session::device, "The device string the session runs on.")
      .def_property_readonly(
          "package",
          [](const Session& s) {
            return PackageHandle{s.package(), s.name(), {}, {}, {}};
          },
          "The npu.Package the session runs.")
      .def("run", &run, py::arg("inputs"), py::kw_only(), py::arg("timeout") = py::none(),
           py::arg("racecheck") = false,
           R"(Runs the model once and returns {output name: ndarray}.

inputs: {input name: array}, or one array for a model with one input. Each array must have
    the input's dtype and shape (a symbolic dim takes the size given; a dynamic batch larger
    than the compiled one runs slice by slice). C-contiguous arrays in native byte order are
    read in place, without a copy; others are copied once.
timeout: seconds the whole run may take (default: no limit).
racecheck: run every device segment under the synchronization checker; its hazards are in
    last_stats.hazards (they are not errors).

Names, dtypes and shapes are checked before anything runs: an unknown or missing input,
a wrong dtype or shape raises npu.Error ("fm.npub: input 'image': dtype float64, expected
float32"). The GIL is released while the model runs.)")
      .def_property_readonly("last_stats", &last_stats,
                             "npu.RunStats of the last finished run (of any thread), or None "
                             "before the first.")
      .def("write_trace", &session_write_trace, py::arg("path"),
           "Writes the Chrome/Perfetto trace-event JSON of the last run (device engines and "
           "host segments on one timeline; open it in ui.perfetto.dev).")
      .def_property_readonly("instances", &Session::instances,
                             "Model instances loaded so far (at most max_parallel).")
      .def_property_readonly("closed", &Session::closed, "Whether close() was called.")
      .def("close", &Session::close, py::call_guard<py::gil_scoped_release>(),
           "Waits for the runs in flight, then frees the model's device memory. Later runs "
           "raise npu.Error; closing twice is fine.")
      .def(
          "__enter__", [](py::object self) { return self; }, "Returns the session.")
      .def(
          "__exit__",
          [](Session& s, py::handle, py::handle, py::handle) {
            py::gil_scoped_release nogil;
            s.close();
          },
          py::arg("exc_type"), py::arg("exc"), py::arg("tb"), "close()s the session.")
      .def("__repr__", [](const Session& s) {
        return "<npu.Session " + s.name() + " on " + s.device() + (s.closed() ? " (closed)" : "") +
               ">";
      });
}

}  // namespace npu::python
