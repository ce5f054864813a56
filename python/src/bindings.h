// The pieces of the extension module `npu._npu` (module.cpp assembles them) and the helpers
// they share. Each bind_* function adds one concept's classes and functions to the module:
// packages (bind_package.cpp), compiling (bind_compile.cpp, only in builds with the compiler),
// sessions (bind_session.cpp), run statistics (bind_stats.cpp), devices and raw jobs
// (bind_device.cpp), the assembler and device configs (bind_isa.cpp).
//
// Conventions: every Python-visible object has a docstring (help(npu.Session) shows them);
// library errors become npu.Error through unwrap() (errors.h); paths are str or os.PathLike;
// calls that wait on the device or compile release the GIL.
// Threading: all helpers need the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/format/package.h"
#include "npu/hazard.h"
#include "npu/runtime/model.h"

namespace npu::python {

namespace py = pybind11;

/// A model package as Python sees it (npu.Package): the package, its name in errors, and what
/// the compiler said about it when it was compiled in this process.
struct PackageHandle {
  std::shared_ptr<const format::Package> package;
  std::string name;
  std::optional<std::string> partition;  // the partition report (compiled packages)
  std::optional<size_t> device_ops, host_ops;
};

/// A graph input or output as Python sees it (npu.TensorSpec).
struct TensorSpec {
  std::string name;
  py::tuple shape;   // ints, and str for symbolic dims ("N")
  py::object dtype;  // numpy.dtype
};

/// npu.load(): a Package from a .npub path (str or os.PathLike) or the bytes of one.
PackageHandle load_package(py::handle source);

void bind_package(py::module_& m);
void bind_compile(py::module_& m);
void bind_stats(py::module_& m);
void bind_session(py::module_& m);
void bind_device(py::module_& m);
void bind_isa(py::module_& m);

/// os.fspath(obj) as a string; a TypeError (pybind11's cast) for anything else.
std::string path_of(py::handle obj);
/// Whether `obj` is a path (str or os.PathLike) rather than bytes or an array.
bool is_path(py::handle obj);

/// npu.TensorSpec objects for `descs` (name, shape with symbolic dims as str, NumPy dtype).
py::list tensor_specs(const std::vector<TensorDesc>& descs);

/// The hazards of `report` as dicts, the objects of npu-submit --json (job_report.h): kind,
/// space, begin, end, first and second (cmd_index, engine, opcode, label) and text (the line
/// npu-submit --racecheck prints).
py::list hazard_list(const HazardReport& report, const CommandLabeler& label);

/// {engine name: busy / cycles} (0..1) for the engines of `engines`.
py::dict utilization(const std::array<uint64_t, DRM_NPU_MAX_ENGINES>& busy, uint64_t cycles,
                     const std::vector<EngineInfo>& engines);
/// {engine name: busy cycles}.
py::dict busy_cycles(const std::array<uint64_t, DRM_NPU_MAX_ENGINES>& busy,
                     const std::vector<EngineInfo>& engines);

}  // namespace npu::python
