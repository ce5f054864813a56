// NumPy arrays in and out of the stack: the dtype vocabulary both ways (format::DType <->
// numpy.dtype), views of NumPy memory for a run's inputs, copies where a value must be owned
// (params, calibration data), and NumPy arrays that take over an NpyArray's bytes.
//
// Semantics: view_of() reads an array without copying when it is C-contiguous, aligned and
// in native (little-endian) byte order; otherwise it makes one contiguous copy and keeps it in
// the returned HeldView. Anything that is not an ndarray goes through numpy.asarray() first
// (a list of floats becomes float64, which a float32 input then refuses: dtypes are never
// converted silently). A dtype the stack has no name for (complex, object, strings,
// datetimes) is an npu.Error naming `what`. to_numpy() moves the NpyArray to the heap and
// hands NumPy its bytes, owned by a capsule: no copy.
// Threading: every function needs the GIL. Lifetime: a HeldView's view is valid while the
// HeldView (which holds a reference to the array) lives and nobody writes the array.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "npu/format/npy.h"

namespace npu::python {

namespace py = pybind11;

/// The NumPy dtype of `t` (little-endian, as .npy files have it).
py::dtype numpy_dtype(format::DType t);

/// An input's view and the array that backs it.
struct HeldView {
  format::ArrayView view;
  py::array owner;
};

/// A view of `obj` (see the header comment); errors name `what` ("input 'x'").
HeldView view_of(py::handle obj, const std::string& what);
/// An owning copy of `obj`.
format::NpyArray array_of(py::handle obj, const std::string& what);
/// A NumPy array owning `a`'s bytes.
py::array to_numpy(format::NpyArray&& a);

}  // namespace npu::python
