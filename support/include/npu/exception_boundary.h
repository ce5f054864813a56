// The exception boundary of the stack's libraries. The libraries report errors as Expected
// (npu/expected.h), but the code they call — the standard library (std::bad_alloc,
// std::length_error), nlohmann-json, protobuf, ONNX — throws. Every public entry point that
// can reach such code runs its body through catch_exceptions(), so no exception crosses a
// library call: std::bad_alloc becomes ENOMEM naming what was being done ("m.npub: load: out
// of memory"), anything else an EIO "internal error" carrying what() — a bug to report, not
// a crash. The C API and the tools use error_from_exception() to the same effect.
// Threading: none of its own; pure functions.
#pragma once

#include <exception>
#include <string_view>
#include <type_traits>

#include "npu/expected.h"

namespace npu {

/// The Error for the exception `e` (std::current_exception() inside a catch block), its
/// message prefixed with `where`.
Error error_from_exception(std::string_view where, const std::exception_ptr& e);

/// Runs `body` (returning Expected<T>) and returns its result, or the Error of whatever it
/// threw.
template <typename Body>
auto catch_exceptions(std::string_view where, Body&& body) noexcept -> std::invoke_result_t<Body&> {
  try {
    return body();
  } catch (...) {
    return error_from_exception(where, std::current_exception());
  }
}

}  // namespace npu
