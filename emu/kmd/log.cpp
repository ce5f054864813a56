#include "log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <memory>
#include <string_view>

namespace npu::emu::kmd {
namespace {

spdlog::level::level_enum level_from_env() {
  const char* env = std::getenv("NPU_LOG_LEVEL");
  if (env == nullptr) return spdlog::level::warn;
  const std::string_view v(env);
  if (v == "trace") return spdlog::level::trace;
  if (v == "debug") return spdlog::level::debug;
  if (v == "info") return spdlog::level::info;
  if (v == "warn" || v == "warning") return spdlog::level::warn;
  if (v == "error" || v == "err") return spdlog::level::err;
  if (v == "off") return spdlog::level::off;
  return spdlog::level::warn;
}

std::shared_ptr<spdlog::logger> make_logger() {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("npu-kmd", std::move(sink));
  logger->set_level(level_from_env());
  logger->set_pattern("[%n] [%l] %v");
  return logger;
}

}  // namespace

spdlog::logger& log() {
  static const std::shared_ptr<spdlog::logger> logger = make_logger();
  return *logger;
}

}  // namespace npu::emu::kmd
