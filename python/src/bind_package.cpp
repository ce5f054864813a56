// npu.Package, npu.TensorSpec and npu.load(): compiled model packages (.npub) in Python.
#include <pybind11/stl.h>

#include <cstring>

#include "bindings.h"
#include "errors.h"

namespace npu::python {

namespace {

/// The per-layer report as dicts (npu-compile --report): one row per device layer and one per
/// host segment.
py::list report_rows(const format::Package& package) {
  py::list rows;
  for (const format::Segment& s : package.metadata.segments) {
    if (s.kind == format::SegmentKind::kHost) {
      py::dict row;
      row["layer"] = s.name;
      row["segment"] = s.name;
      row["op"] = s.op_type;
      row["engine"] = "host";
      for (const char* key :
           {"tiles", "macs", "bytes", "estimated_cycles", "compute_cycles", "utilization"}) {
        row[key] = py::none();
      }
      rows.append(row);
      continue;
    }
    for (const format::LayerReport& l : s.layers) {
      py::dict row;
      row["layer"] = l.name;
      row["segment"] = s.name;
      row["op"] = l.op;
      row["engine"] = l.engine;
      row["tiles"] = l.tiles;
      row["macs"] = l.macs;
      row["bytes"] = l.bytes;
      row["estimated_cycles"] = l.cycles;
      row["compute_cycles"] = l.compute_cycles;
      row["utilization"] =
          l.cycles ? static_cast<double>(l.compute_cycles) / static_cast<double>(l.cycles) : 0.0;
      rows.append(row);
    }
  }
  return rows;
}

std::vector<TensorDesc> descs(const format::PackageMetadata& m,
                              const std::vector<std::string>& names) {
  std::vector<TensorDesc> out;
  for (const std::string& name : names) {
    if (const format::TensorInfo* t = m.find_tensor(name))
      out.push_back({name, t->dtype, t->shape});
  }
  return out;
}

py::bytes to_bytes(const PackageHandle& p) {
  std::vector<std::byte> bytes = unwrap(format::serialize_package(*p.package));
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

PackageHandle load_package(py::handle source) {
  if (is_path(source)) {
    const std::string path = path_of(source);
    auto package = unwrap(format::read_package(path));
    return {std::make_shared<const format::Package>(std::move(package)), path, {}, {}, {}};
  }
  const py::buffer_info info = py::buffer(py::reinterpret_borrow<py::object>(source)).request();
  std::span<const std::byte> bytes(static_cast<const std::byte*>(info.ptr),
                                   static_cast<size_t>(info.size * info.itemsize));
  auto package = unwrap(format::parse_package(bytes, "<bytes>"));  // sections are copies
  return {std::make_shared<const format::Package>(std::move(package)), "<bytes>", {}, {}, {}};
}

void bind_package(py::module_& m) {
  py::class_<TensorSpec>(m, "TensorSpec",
                         "A graph input or output: name, shape (a tuple of ints; a symbolic "
                         "dim, such as a dynamic batch, is its name as a str) and dtype (a "
                         "numpy.dtype).")
      .def(py::init<std::string, py::tuple, py::object>(), py::arg("name"), py::arg("shape"),
           py::arg("dtype"))
      .def_readonly("name", &TensorSpec::name, "The tensor's name in the graph.")
      .def_readonly("shape", &TensorSpec::shape,
                    "The shape: ints, and the symbol (a str) for a symbolic dim.")
      .def_readonly("dtype", &TensorSpec::dtype, "The element type, a numpy.dtype.")
      .def("__repr__",
           [](const TensorSpec& t) {
             return "TensorSpec(name=" + py::repr(py::str(t.name)).cast<std::string>() +
                    ", shape=" + py::repr(t.shape).cast<std::string>() +
                    ", dtype=" + py::str(t.dtype).cast<std::string>() + ")";
           })
      .def("__eq__", [](const TensorSpec& a, const TensorSpec& b) {
        return a.name == b.name && a.shape.equal(b.shape) && a.dtype.equal(b.dtype);
      });

  py::class_<PackageHandle>(
      m, "Package",
      "A compiled model package (.npub): what npu.compile() returns and npu.load() reads.\n\n"
      "Run it with npu.Session(package). The package is immutable and may be shared by several "
      "sessions and threads.")
      .def_property_readonly(
          "name", [](const PackageHandle& p) { return p.name; },
          "The package's name in error messages: the model or package path, or '<bytes>'.")
      .def_property_readonly(
          "inputs",
          [](const PackageHandle& p) {
            return tensor_specs(descs(p.package->metadata, p.package->metadata.inputs));
          },
          "The graph inputs, a list of npu.TensorSpec in order.")
      .def_property_readonly(
          "outputs",
          [](const PackageHandle& p) {
            return tensor_specs(descs(p.package->metadata, p.package->metadata.outputs));
          },
          "The graph outputs, a list of npu.TensorSpec in order.")
      .def_property_readonly(
          "partition", [](const PackageHandle& p) { return p.partition; },
          "The compiler's partition report ('N ops on the NPU, M on the host', with the reasons "
          "ops stayed on the host) for a package compiled in this process, else None.")
      .def_property_readonly(
          "device_ops", [](const PackageHandle& p) { return p.device_ops; },
          "Operators placed on the NPU (compiled in this process), else None.")
      .def_property_readonly(
          "host_ops", [](const PackageHandle& p) { return p.host_ops; },
          "Operators left on the host (compiled in this process), else None.")
      .def_property_readonly(
          "estimated_cycles",
          [](const PackageHandle& p) {
            uint64_t total = 0;
            for (const auto& s : p.package->metadata.segments) total += s.estimated_cycles;
            return total;
          },
          "The compiler's estimate of one inference's device cycles (all device segments).")
      .def_property_readonly(
          "metadata",
          [](const PackageHandle& p) {
            return py::module_::import("json").attr("loads")(
                format::metadata_to_json(p.package->metadata));
          },
          "The package's metadata (docs/package.md) as a dict: model, target, tensors, buffers, "
          "segments, inputs, outputs.")
      .def(
          "report", [](const PackageHandle& p) { return report_rows(*p.package); },
          "The per-layer report of npu-compile --report, one dict per row: layer, segment, op, "
          "engine ('matrix', 'vector', 'dma' or 'host'), tiles, macs, bytes (DRAM bytes moved), "
          "estimated_cycles, compute_cycles and utilization (compute / estimated cycles). Host "
          "segments have None for the numbers the compiler does not estimate.")
      .def(
          "save",
          [](const PackageHandle& p, py::object path) {
            unwrap(format::write_package(path_of(path), *p.package));
          },
          py::arg("path"),
          "Writes the package to `path` (.npub), atomically; npu.load(path) reads it back.")
      .def("to_bytes", &to_bytes, "The package's bytes, as save() would write them.")
      .def("__repr__", [](const PackageHandle& p) {
        return "<npu.Package " + p.name + ": " +
               std::to_string(p.package->metadata.segments.size()) + " segments>";
      });

  m.def("load", &load_package, py::arg("source"),
        "Reads a model package: `source` is a path (str or os.PathLike) to a .npub file, or the "
        "bytes of one (Package.to_bytes()). The package is validated; errors raise npu.Error "
        "naming the file and the field.");
}

}  // namespace npu::python
