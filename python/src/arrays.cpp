// NumPy arrays in and out of the stack (arrays.h).
#include "arrays.h"

#include <memory>
#include <optional>
#include <vector>

#include "errors.h"

namespace npu::python {

using format::DType;

namespace {

/// The DType of a NumPy dtype of native or little byte order, or nullopt.
std::optional<DType> dtype_from_numpy(const py::dtype& d) {
  const char kind = d.kind();
  const auto size = d.itemsize();
  switch (kind) {
    case 'b':
      return size == 1 ? std::optional(DType::kBool) : std::nullopt;
    case 'i':
      if (size == 1) return DType::kInt8;
      if (size == 2) return DType::kInt16;
      if (size == 4) return DType::kInt32;
      if (size == 8) return DType::kInt64;
      return std::nullopt;
    case 'u':
      if (size == 1) return DType::kUint8;
      if (size == 2) return DType::kUint16;
      if (size == 4) return DType::kUint32;
      if (size == 8) return DType::kUint64;
      return std::nullopt;
    case 'f':
      if (size == 2) return DType::kFloat16;
      if (size == 4) return DType::kFloat32;
      if (size == 8) return DType::kFloat64;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

/// Whether `a`'s elements are in the byte order the stack uses (little-endian, this host's).
bool native_order(const py::array& a) {
  const char order = a.dtype().attr("byteorder").cast<std::string>().at(0);
  return order == '=' || order == '|' || order == '<';
}

}  // namespace

py::dtype numpy_dtype(DType t) {
  return py::dtype(format::npy_descr(t));
}

HeldView view_of(py::handle obj, const std::string& what) {
  py::array a = py::isinstance<py::array>(obj)
                    ? py::reinterpret_borrow<py::array>(obj)
                    : py::array(py::module_::import("numpy").attr("asarray")(obj));
  const auto dtype = dtype_from_numpy(a.dtype());
  if (!dtype) {
    raise(what + ": dtype " + py::str(a.dtype()).cast<std::string>() +
          " is not supported (bool, int8-64, uint8-64, float16, float32, float64)");
  }
  const bool direct = (a.flags() & py::array::c_style) &&
                      (a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_) && native_order(a);
  if (!direct) {  // one contiguous copy in native order
    a = py::array(py::module_::import("numpy").attr("ascontiguousarray")(
        a, a.dtype().attr("newbyteorder")("=")));
  }
  std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
  const auto bytes = static_cast<size_t>(a.nbytes());
  HeldView held{{*dtype, std::move(shape), {static_cast<const std::byte*>(a.data()), bytes}}, a};
  return held;
}

format::NpyArray array_of(py::handle obj, const std::string& what) {
  return view_of(obj, what).view.to_array();
}

py::array to_numpy(format::NpyArray&& a) {
  auto owned = std::make_unique<format::NpyArray>(std::move(a));
  format::NpyArray* raw = owned.get();
  // The capsule deletes the array when NumPy drops its last reference to the data.
  py::capsule base(raw, [](void* p) {
    const std::unique_ptr<format::NpyArray> drop(static_cast<format::NpyArray*>(p));
  });
  static_cast<void>(owned.release());  // now the capsule's
  std::vector<py::ssize_t> shape(raw->shape.begin(), raw->shape.end());
  return py::array(numpy_dtype(raw->dtype), shape, raw->data.data(), base);
}

}  // namespace npu::python
