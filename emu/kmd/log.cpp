#include "log.h"

#include "npu/log.h"

namespace npu::emu::kmd {

spdlog::logger& log() {
  // Looked up once: the registry keeps loggers until exit, and the lookup (a mutex, a string
  // and spdlog's registry) was a few percent of an empty job's round trip.
  static spdlog::logger& l = npu::logger("npu-kmd", LogLevel::kError);
  return l;
}

}  // namespace npu::emu::kmd
