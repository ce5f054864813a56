// Argument parsing every tool shares (CLI11): --help exits 0, a usage error prints one line
// "TOOL: message" on stderr (CLI11 capitalizes; our messages start lowercase) and exits 1.
#pragma once

#include <CLI/CLI.hpp>

#include <cctype>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

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

}  // namespace npu::tools
