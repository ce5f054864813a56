// npu.Device and npu.SubmitResult: a device's parameters and raw command buffers run on it
// with NumPy buffers at fixed device addresses (what npu-info and npu-submit's raw mode do).
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

#include "arrays.h"
#include "bindings.h"
#include "device_handle.h"
#include "errors.h"
#include "npu/device_report.h"
#include "npu/format/file.h"
#include "npu/job_report.h"
#include "npu/raw_job.h"
#include "npu/trace.h"

namespace npu::python {

namespace {

/// One finished raw job. Not copyable: `report.commands` points into `commands`.
struct SubmitResult {
  SubmitResult() = default;
  SubmitResult(const SubmitResult&) = delete;
  SubmitResult& operator=(const SubmitResult&) = delete;

  JobReport report;
  std::vector<npu_cmd> commands;
  py::dict outputs;
};

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%#llx", static_cast<unsigned long long>(v));
  return buf;
}

/// The bytes of a command buffer: a bytes-like object, or the file at a path.
std::vector<std::byte> command_bytes(py::handle cmdbuf) {
  if (is_path(cmdbuf)) return unwrap(format::read_file(path_of(cmdbuf)));
  const py::buffer_info info = py::buffer(py::reinterpret_borrow<py::object>(cmdbuf)).request();
  const auto* p = static_cast<const std::byte*>(info.ptr);
  return {p, p + info.size * info.itemsize};
}

py::dict device_info(const DeviceHandle& d) {
  DeviceReport report;
  {
    py::gil_scoped_release nogil;
    report = unwrap(query_device_report(d.device));
  }
  py::dict j = py::module_::import("json").attr("loads")(device_report_json(report));
  py::dict info;
  info["device"] = j["device"];
  for (const char* group : {"identity", "parameters"}) {
    for (auto [key, value] : j[group].cast<py::dict>()) info[key] = value;
  }
  for (const char* key : {"engines", "counters", "daemon", "schema_version"}) {
    if (j.contains(key)) info[key] = j[key];
  }
  return info;
}

std::shared_ptr<SubmitResult> submit(const DeviceHandle& d, py::object cmdbuf, py::object buffers,
                                     bool racecheck, py::object read_only,
                                     std::optional<double> timeout, bool skip_validation,
                                     bool check) {
  auto result = std::make_shared<SubmitResult>();
  const std::vector<std::byte> bytes = command_bytes(cmdbuf);
  std::set<uint64_t> ro;
  for (py::handle a : read_only) ro.insert(a.cast<uint64_t>());
  std::vector<BufferSpec> specs;
  std::vector<HeldView> held;
  if (!buffers.is_none()) {
    for (auto [key, value] : buffers.cast<py::dict>()) {
      BufferSpec spec;
      spec.address = key.cast<uint64_t>();
      spec.read_only = ro.count(spec.address) > 0;
      const std::string what = "buffer " + hex(spec.address);
      if (py::isinstance<py::int_>(value)) {
        const auto size = value.cast<int64_t>();
        if (size < 1) raise(what + ": size must be at least 1 (got " + std::to_string(size) + ")");
        spec.size = static_cast<uint64_t>(size);
      } else {
        py::object array = py::isinstance<py::array>(value)
                               ? py::reinterpret_borrow<py::object>(value)
                               : py::module_::import("numpy").attr("frombuffer")(value, "uint8");
        held.push_back(view_of(array, what));
        if (held.back().view.data.empty()) raise(what + ": the array is empty");
        spec.data = held.back().view.data;
      }
      specs.push_back(std::move(spec));
    }
  }
  for (uint64_t a : ro) {
    if (std::none_of(specs.begin(), specs.end(),
                     [&](const BufferSpec& s) { return s.address == a; }))
      raise("read_only " + hex(a) + ": no buffer at that address");
  }
  RawJobOptions options;
  options.racecheck = racecheck;
  options.skip_validation = skip_validation;
  if (timeout) {
    if (*timeout < 0) raise("submit: timeout must not be negative");
    options.timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(*timeout));
  }
  std::optional<Expected<RawJobRun>> ran;
  std::vector<std::pair<uint64_t, std::vector<std::byte>>> contents;
  std::optional<Error> read_error;
  {
    py::gil_scoped_release nogil;
    ran.emplace(run_raw_job(d.device, bytes, specs, options));
    if (*ran && (*ran)->ok()) {
      for (const BufferSpec& spec : (*ran)->specs) {
        if (spec.read_only) continue;
        auto data = (*ran)->read_range(spec.address, spec.size);
        if (!data) {
          read_error = data.error();
          break;
        }
        contents.emplace_back(spec.address, std::move(*data));
      }
    }
  }
  RawJobRun run = unwrap(std::move(*ran));
  if (read_error) raise(*read_error);
  result->commands = split_commands(bytes);
  JobReport& r = result->report;
  r.result = run.result;
  r.timed_out = run.timed_out;
  r.profile = run.profile;
  r.clock_hz = d.device.params().clock_hz;
  r.host_ns = run.host_ns;
  r.engines = unwrap(d.device.engine_info());
  r.commands = result->commands;
  r.hazards = run.hazards;
  if (check && run.timed_out) {
    raise(make_error(ETIMEDOUT, "job timed out: still pending after " +
                                    std::to_string(std::llround(*timeout * 1e3)) + " ms"));
  }
  if (check && !run.result.ok()) {
    std::string what = std::string("job ") + to_string(run.result.status);
    if (run.result.fault.kind != DRM_NPU_FAULT_NONE) {
      what += ": " + describe_fault(run.result.fault, result->commands);
    }
    raise(make_error(EIO, what));
  }
  for (auto& [address, data] : contents) {
    result->outputs[py::int_(address)] =
        py::bytes(reinterpret_cast<const char*>(data.data()), data.size());
  }
  return result;
}

void submit_write_trace(const SubmitResult& s, py::object path) {
  const JobReport& r = s.report;
  if (!r.profile) raise("write_trace: the device reported no job profile (capability job_profile)");
  TraceOptions options;
  options.clock_hz = r.clock_hz;
  options.engines = r.engines;
  options.commands = s.commands;
  options.process_name = "npu submit";
  if (r.hazards) options.hazards = r.hazards->hazards;
  unwrap(write_chrome_trace(*r.profile, path_of(path), options));
}

}  // namespace

void bind_device(py::module_& m) {
  py::class_<SubmitResult, std::shared_ptr<SubmitResult>>(
      m, "SubmitResult",
      "A finished raw job (Device.submit): status, cycles, the writable buffers' contents, the "
      "profile and, with racecheck, the hazards.")
      .def_property_readonly(
          "outputs", [](const SubmitResult& s) { return s.outputs; },
          "{device address: bytes} of every buffer the job could write (all but read_only "
          "ones), read after the job; np.frombuffer(out[addr], np.float32) views it as floats.")
      .def_property_readonly(
          "cycles", [](const SubmitResult& s) { return s.report.result.cycles; },
          "Modeled device cycles of the job.")
      .def_property_readonly(
          "status",
          [](const SubmitResult& s) {
            return std::string(s.report.timed_out ? "pending" : to_string(s.report.result.status));
          },
          "'ok', 'error' (faulted), 'aborted', 'timeout' (watchdog) or 'pending' (the wait's "
          "timeout passed); only with check=False can it be other than 'ok'.")
      .def_property_readonly(
          "fault",
          [](const SubmitResult& s) -> py::object {
            if (s.report.result.fault.kind == DRM_NPU_FAULT_NONE) return py::none();
            return py::str(describe_fault(s.report.result.fault, s.commands));
          },
          "The fault line ('mmu on dma_in at command 0 (dma_load), address 0x200000000') or None.")
      .def_property_readonly(
          "host_ms",
          [](const SubmitResult& s) { return static_cast<double>(s.report.host_ns) / 1e6; },
          "Host time from submit until the wait returned, in milliseconds.")
      .def_property_readonly(
          "engines",
          [](const SubmitResult& s) {
            if (!s.report.profile) return py::dict();
            return utilization(s.report.profile->busy_cycles, s.report.profile->cycles,
                               s.report.engines);
          },
          "{engine name: utilization 0..1}; empty when the device reports no profile.")
      .def_property_readonly(
          "busy_cycles",
          [](const SubmitResult& s) {
            if (!s.report.profile) return py::dict();
            return busy_cycles(s.report.profile->busy_cycles, s.report.engines);
          },
          "{engine name: busy cycles}.")
      .def_property_readonly(
          "hazards",
          [](const SubmitResult& s) {
            if (!s.report.hazards) return py::list();
            return hazard_list(*s.report.hazards, marker_labels(s.commands));
          },
          "With racecheck=True: the hazards as dicts (kind, space, begin, end, first, second, "
          "text), named by the MARKER before each command, as npu-submit --racecheck prints "
          "them; [] otherwise.")
      .def(
          "report",
          [](const SubmitResult& s, bool stats) { return format_job_report(s.report, stats); },
          py::arg("stats") = false,
          "npu-submit's text report of the job (with stats=True the per-engine table and "
          "counters).")
      .def("write_trace", &submit_write_trace, py::arg("path"),
           "Writes the job's Chrome/Perfetto trace-event JSON (one track per engine).")
      .def("__repr__", [](const SubmitResult& s) {
        return "<npu.SubmitResult " + std::string(to_string(s.report.result.status)) + ", " +
               std::to_string(s.report.result.cycles) + " cycles>";
      });

  py::class_<DeviceHandle>(m, "Device", R"(An open NPU device.

Device(spec="emu:"): "emu:" (the in-process emulator), "emu:CONFIG.json" (one with that
device config), "unix:SOCKET" (a device served by npu-daemon), "/dev/accel/accelN" (a device
node). Errors raise npu.Error with the message npu-info prints.)")
      .def(py::init([](const std::string& spec) {
             py::gil_scoped_release nogil;
             return DeviceHandle{unwrap(Device::open(spec))};
           }),
           py::arg("spec") = "emu:")
      .def_property_readonly(
          "spec", [](const DeviceHandle& d) { return d.device.path(); },
          "The device string it was opened with.")
      .def_property_readonly(
          "info", &device_info,
          "What npu-info --json reports, as one flat dict: device, name, device_id, revision, "
          "platform, api_version, isa_version, sram_size, sram_banks, clock_hz, "
          "num_semaphores, watchdog_ms, max_bo_size, num_engines, engine_mask, va_range, "
          "capabilities, features, engines (list of dicts: id, name, throughput, "
          "throughput_unit, latency, queue_depth), counters, and daemon for unix: devices. "
          "Queried anew on each access.")
      .def("submit", &submit, py::arg("cmdbuf"), py::arg("buffers") = py::none(),
           py::arg("racecheck") = false, py::kw_only(), py::arg("read_only") = py::tuple(),
           py::arg("timeout") = py::none(), py::arg("skip_validation") = false,
           py::arg("check") = true,
           R"(Runs a raw command buffer (what npu-submit CMDBUF.bin --buffer ... does).

cmdbuf: the command buffer (bytes from npu.assemble(), or a path to an npu-as output).
buffers: {device address: ndarray | bytes | size}: a buffer at that fixed address holding the
    array's bytes, or `size` zero bytes. Addresses must be multiples of the device's VA
    alignment (Device.info['va_range']['align']) inside its VA range.
racecheck: run under the synchronization checker; SubmitResult.hazards lists what it found.
read_only: addresses of buffers the device may only read (not in SubmitResult.outputs).
timeout: seconds to wait for the job (default: no limit; the device's watchdog ends hung jobs).
skip_validation: submit without validating the buffer (the device meets bad commands).
check: raise npu.Error when the job faulted or did not finish ("job error: mmu on dma_in at
    command 0 (dma_load), address 0x200000000"); with False, SubmitResult.status says so.

Returns an npu.SubmitResult. The GIL is released while the job runs.)")
      .def("__repr__",
           [](const DeviceHandle& d) { return "<npu.Device " + d.device.path() + ">"; });
}

}  // namespace npu::python
