// Python values the bindings share (bindings.h): paths, tensor specs, hazards, per-engine
// dictionaries.
#include <pybind11/stl.h>

#include "arrays.h"
#include "bindings.h"
#include "npu/job_report.h"

namespace npu::python {

std::string path_of(py::handle obj) {
  return py::module_::import("os").attr("fspath")(obj).cast<std::string>();
}

bool is_path(py::handle obj) {
  return py::isinstance<py::str>(obj) ||
         py::isinstance(obj, py::module_::import("os").attr("PathLike"));
}

py::list tensor_specs(const std::vector<TensorDesc>& descs) {
  py::list out;
  for (const TensorDesc& d : descs) {
    py::list shape;
    for (const format::Dim& dim : d.shape) {
      if (dim.symbolic()) {
        shape.append(py::str(dim.symbol));
      } else {
        shape.append(py::int_(dim.size));
      }
    }
    out.append(py::cast(TensorSpec{d.name, py::tuple(shape), numpy_dtype(d.dtype)}));
  }
  return out;
}

py::list hazard_list(const HazardReport& report, const CommandLabeler& label) {
  py::object parsed = py::module_::import("json").attr("loads")(hazard_report_json(report, label));
  return parsed["hazards"];
}

py::dict utilization(const std::array<uint64_t, DRM_NPU_MAX_ENGINES>& busy, uint64_t cycles,
                     const std::vector<EngineInfo>& engines) {
  py::dict out;
  for (const EngineInfo& e : engines) {
    if (e.id >= busy.size()) continue;
    out[py::str(e.name)] =
        cycles ? static_cast<double>(busy[e.id]) / static_cast<double>(cycles) : 0.0;
  }
  return out;
}

py::dict busy_cycles(const std::array<uint64_t, DRM_NPU_MAX_ENGINES>& busy,
                     const std::vector<EngineInfo>& engines) {
  py::dict out;
  for (const EngineInfo& e : engines) {
    if (e.id < busy.size()) out[py::str(e.name)] = busy[e.id];
  }
  return out;
}

}  // namespace npu::python
