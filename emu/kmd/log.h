// The kernel driver's logger. One spdlog logger named "npu-kmd" writing to stderr; its level
// comes from the environment variable NPU_LOG_LEVEL (trace, debug, info, warn, error, off;
// default warn), read once on first use.
#pragma once

#include <spdlog/spdlog.h>

namespace npu::emu::kmd {

/// The driver's logger (created on first use, thread-safe).
spdlog::logger& log();

}  // namespace npu::emu::kmd
