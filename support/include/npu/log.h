// The stack's loggers, configured in one place: every library logs through a named spdlog
// logger from npu::logger(), which writes to stderr only (stdout belongs to the tools' output,
// e.g. --json), uses one line format "[name] [level] message", and takes its level from the
// environment variable NPU_LOG_LEVEL (trace, debug, info, warn, error, off), read once; when
// the variable is unset or unknown the caller's default applies (warn unless a logger is
// opted into, like the ioctl trace). Thread-safe; the loggers live until exit.
#pragma once

#include <string_view>

namespace spdlog {
class logger;
}

namespace npu {

/// Log levels as spdlog numbers them (trace 0 ... off 6), so this header needs no spdlog.
enum class LogLevel : int { kTrace = 0, kDebug, kInfo, kWarn, kError, kCritical, kOff };

/// The logger named `name` ("npu", "npu-kmd", "npu-device", "npuc", "npu.ioctl"), created on
/// first use with NPU_LOG_LEVEL's level, or `default_level` when that is unset.
spdlog::logger& logger(std::string_view name, LogLevel default_level = LogLevel::kWarn);

}  // namespace npu
