// The daemon's logger: npu::logger("npu-daemon") (npu/log.h: stderr, NPU_LOG_LEVEL), at info by
// default (a server says when it starts, stops and drops a client). Thread-safe.
#pragma once

#include <spdlog/spdlog.h>

#include "npu/log.h"

namespace npu::daemon::detail {

inline spdlog::logger& log() {
  return npu::logger("npu-daemon", LogLevel::kInfo);
}

}  // namespace npu::daemon::detail
