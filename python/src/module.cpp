// The extension module npu._npu: npu.Error and the bindings of bindings.h. The Python package
// npu (python/npu/__init__.py) re-exports it with the plotting helpers.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "errors.h"

namespace py = pybind11;

PYBIND11_MODULE(_npu, m) {
  m.doc() = "The NPU stack from Python: compile, run, submit, assemble (docs/python.md).";
  // A RuntimeError subclass; errno holds the library's errno-style code.
  static py::exception<npu::python::ModuleError> error(m, "Error", PyExc_RuntimeError);
  error.attr("__doc__") =
      "An error of the NPU stack: the one-line message the tools print (without the "
      "tool's name); `errno` is its errno-style code (EINVAL, ENOENT, EIO, ...).";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const npu::python::ModuleError& e) {
      py::object instance = py::handle(error.ptr())(e.what());  // an Error instance
      instance.attr("errno") = e.code();
      PyErr_SetObject(error.ptr(), instance.ptr());
    }
  });
  npu::python::bind_package(m);
#ifdef NPU_PYTHON_HAS_COMPILER
  npu::python::bind_compile(m);
#endif
  npu::python::bind_stats(m);
  npu::python::bind_session(m);
  npu::python::bind_device(m);
  npu::python::bind_isa(m);
}
