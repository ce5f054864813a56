// The kernel driver's logger: npu::logger("npu-kmd") (npu/log.h: stderr, NPU_LOG_LEVEL,
// default warn).
#pragma once

#include <spdlog/spdlog.h>

namespace npu::emu::kmd {

/// The driver's logger (created on first use, thread-safe).
spdlog::logger& log();

}  // namespace npu::emu::kmd
