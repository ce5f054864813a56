#include "log.h"

#include "npu/log.h"

namespace npu::emu::kmd {

spdlog::logger& log() {
  return npu::logger("npu-kmd", LogLevel::kError);
}

}  // namespace npu::emu::kmd
