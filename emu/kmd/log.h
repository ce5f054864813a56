// The kernel driver's logger: npu::logger("npu-kmd") (npu/log.h: stderr, NPU_LOG_LEVEL).
// Its default level is error, not warn: below the ioctl line it plays the kernel, whose
// warnings go to dmesg, not to the application's stderr, so a failing tool prints its one
// line and no more (the errno and the tool's message carry the reason).
#pragma once

#include <spdlog/spdlog.h>

namespace npu::emu::kmd {

/// The driver's logger (created on first use, thread-safe).
spdlog::logger& log();

}  // namespace npu::emu::kmd
