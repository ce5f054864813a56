// How the Python module reports errors: every npu::Error becomes a Python `npu.Error` (a
// RuntimeError subclass registered by module.cpp) whose message is the Error's one line — the
// line the tools print after their "TOOL: " prefix — and whose `errno` attribute is its
// errno-style code.
//
// Semantics: bindings call unwrap() on the Expected results of the libraries; a failure throws
// ModuleError, which pybind11's translator (module.cpp) turns into npu.Error as the exception
// crosses into Python. Exceptions of other kinds keep their Python meaning (TypeError for a
// wrong argument type, from pybind11's own conversions).
// Threading: may be thrown with or without the GIL held; the translation runs with it held.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "npu/expected.h"

namespace npu::python {

class ModuleError : public std::runtime_error {
 public:
  explicit ModuleError(const Error& e) : std::runtime_error(e.message), code_(e.code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// Throws ModuleError for `e`.
[[noreturn]] inline void raise(const Error& e) {
  throw ModuleError(e);
}
/// Throws ModuleError with EINVAL and `message`.
[[noreturn]] inline void raise(std::string message) {
  throw ModuleError(make_error(EINVAL, std::move(message)));
}

/// The value of `r`, or throws its Error.
template <typename T>
T unwrap(Expected<T>&& r) {
  if (!r) raise(r.error());
  return std::move(*r);
}
inline void unwrap(Expected<void>&& r) {
  if (!r) raise(r.error());
}

}  // namespace npu::python
