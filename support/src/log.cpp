// npu::logger() (npu/log.h): named stderr loggers with one format and NPU_LOG_LEVEL.
#include "npu/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace npu {
namespace {

std::optional<spdlog::level::level_enum> level_from_env() {
  const char* env = std::getenv("NPU_LOG_LEVEL");
  if (env == nullptr) return std::nullopt;
  const std::string_view v(env);
  if (v == "trace") return spdlog::level::trace;
  if (v == "debug") return spdlog::level::debug;
  if (v == "info") return spdlog::level::info;
  if (v == "warn" || v == "warning") return spdlog::level::warn;
  if (v == "error" || v == "err") return spdlog::level::err;
  if (v == "off") return spdlog::level::off;
  return std::nullopt;
}

}  // namespace

spdlog::logger& logger(std::string_view name, LogLevel default_level) {
  static std::mutex mu;
  static const std::optional<spdlog::level::level_enum> env = level_from_env();
  const std::lock_guard lock(mu);
  const std::string key(name);
  if (auto existing = spdlog::get(key)) return *existing;
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto l = std::make_shared<spdlog::logger>(key, std::move(sink));
  l->set_level(env.value_or(static_cast<spdlog::level::level_enum>(default_level)));
  l->set_pattern("[%n] [%l] %v");
  spdlog::register_logger(l);
  return *l;  // the registry keeps it alive until exit
}

}  // namespace npu
