// Argument parsing every tool shares (CLI11): --help exits 0, a usage error prints one line
// "TOOL: message" on stderr (CLI11 capitalizes; our messages start lowercase) and exits 1.
#pragma once

#include <CLI/CLI.hpp>

#include <cctype>
#include <exception>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "npu/exception_boundary.h"

namespace npu::tools {

inline constexpr int kUsageError = 1;

/// Prints "TOOL: message" (a capitalized first word lowercased; "MODEL", an acronym or a
/// name in capitals, stays) on stderr and returns `status`.
inline int fail(std::string_view tool, std::string message, int status = kUsageError) {
  const auto upper = [&](size_t i) {
    return i < message.size() && std::isupper(static_cast<unsigned char>(message[i]));
  };
  if (upper(0) && !upper(1)) {
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  }
  std::cerr << tool << ": " << message << "\n";
  return status;
}

/// Parses argv into `app`. Returns the status the tool should exit with (help shown or a usage
/// error), or nullopt to go on.
inline std::optional<int> parse_args(CLI::App& app, int argc, char** argv, std::string_view tool) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::Success&) {  // an option that did its job while parsing (--list-ops)
    return 0;
  } catch (const CLI::ParseError& e) {
    return fail(tool, e.what());
  }
  return std::nullopt;
}

/// Runs a tool's body and closes the exception boundary (npu/exception_boundary.h): whatever
/// escapes it (the libraries report errors as Expected, but the standard library,
/// nlohmann-json, protobuf and ONNX throw) becomes one line and exit status 1 instead of
/// std::terminate; std::bad_alloc is reported as ENOMEM ("out of memory").
template <typename Body>
int guarded_main(std::string_view tool, Body&& body) {
  try {
    return body();
  } catch (...) {
    return fail(tool, error_from_exception("", std::current_exception()).message);
  }
}

}  // namespace npu::tools
