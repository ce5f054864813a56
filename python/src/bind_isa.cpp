// npu.assemble(), npu.disassemble() and npu.device_config(): the assembler (npu-as,
// npu-objdump) and device configs, from Python.
#include <pybind11/stl.h>

#include <optional>

#include "bindings.h"
#include "errors.h"
#include "npu/isa/asm.h"
#include "npu/isa/device_config.h"

namespace npu::python {

namespace {

isa::DeviceConfig config_of(const py::object& path) {
  if (path.is_none()) return {};
  return unwrap(isa::DeviceConfig::load(path_of(path)));
}

py::bytes assemble(const std::string& text, const std::string& filename, bool validate,
                   py::object device_config) {
  isa::Assembly assembly = unwrap(isa::assemble_listing(text, filename));
  if (validate || !device_config.is_none()) {
    unwrap(isa::validate_assembly(assembly, config_of(device_config), filename));
  }
  return {reinterpret_cast<const char*>(assembly.bytes.data()), assembly.bytes.size()};
}

std::string disassemble(py::buffer data, bool index_comments) {
  const py::buffer_info info = data.request();
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(info.ptr),
                                         static_cast<size_t>(info.size * info.itemsize));
  return unwrap(isa::disassemble(bytes, {.index_comments = index_comments}));
}

}  // namespace

void bind_isa(py::module_& m) {
  m.def("assemble", &assemble, py::arg("text"), py::kw_only(), py::arg("filename") = "<input>",
        py::arg("validate") = false, py::arg("device_config") = py::none(),
        R"(Assembles .npuasm text (docs/asm.md) into a command buffer's bytes (what npu-as does).

filename: names the source in errors ("prog.npuasm:12: conv2d: unknown field 'strid_h'").
validate: also check the ISA's rules against the device config (npu-as --validate); given a
    device_config path, against that device.
Errors raise npu.Error.)");
  m.def("disassemble", &disassemble, py::arg("data"), py::kw_only(),
        py::arg("index_comments") = true,
        "Disassembles a command buffer (bytes-like) into .npuasm text that npu.assemble() turns "
        "back into the same bytes (what npu-objdump does). index_comments appends '# [i]' to "
        "each command. A buffer whose header is not sane raises npu.Error.");
  m.def(
      "device_config",
      [](py::object path) {
        return py::module_::import("json").attr("loads")(config_of(path).to_json());
      },
      py::arg("path") = py::none(),
      "A device config (docs/device-config.md) as a dict: the default device's, or the JSON "
      "file's at `path` with defaults filled in (sram_size, clock_hz, dma.bytes_per_cycle, "
      "matrix.int8_rows, ...). npu.plot reads its roofs from it.");
}

}  // namespace npu::python
