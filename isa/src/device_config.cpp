// DeviceConfig <-> JSON (docs/device-config.md). Every key is optional; unknown keys, wrong
// types and out-of-range values are errors naming the key.
#include "npu/isa/device_config.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "npu_isa.h"

namespace npu::isa {
namespace {

using json = nlohmann::json;

struct FeatureName {
  const char* name;
  uint64_t bit;
};
constexpr FeatureName kFeatureNames[] = {
    {"int8", NPU_FEATURE_INT8},
    {"fp32", NPU_FEATURE_FP32},
    {"transcendental", NPU_FEATURE_TRANSCENDENTAL},
    {"fp16", NPU_FEATURE_FP16},
};

Error config_error(const std::string& key, const std::string& what) {
  return make_error(EINVAL, "device config: key " + key + ": " + what);
}

// Reads an unsigned integer key into `out` if present, checking [lo, hi].
template <typename T>
Expected<void> read_uint(const json& obj, const char* key, const std::string& path, T& out,
                         uint64_t lo, uint64_t hi) {
  auto it = obj.find(key);
  if (it == obj.end()) return ok();
  const std::string full = path.empty() ? key : path + "." + key;
  if (!it->is_number_unsigned()) {
    if (it->is_number_integer()) {
      return config_error(full, "expected a non-negative integer, got " + it->dump());
    }
    return config_error(full, "expected an unsigned integer, got " + it->dump());
  }
  const uint64_t v = it->get<uint64_t>();
  if (v < lo || v > hi) {
    return config_error(full, "value " + std::to_string(v) + " outside [" + std::to_string(lo) +
                                  ", " + std::to_string(hi) + "]");
  }
  out = static_cast<T>(v);
  return ok();
}

Expected<void> read_bool(const json& obj, const char* key, const std::string& path, bool& out) {
  auto it = obj.find(key);
  if (it == obj.end()) return ok();
  if (!it->is_boolean()) {
    return config_error(path.empty() ? key : path + "." + key,
                        "expected true or false, got " + it->dump());
  }
  out = it->get<bool>();
  return ok();
}

Expected<void> check_keys(const json& obj, const std::string& path,
                          std::initializer_list<const char*> known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool found = false;
    for (const char* k : known) {
      if (it.key() == k) {
        found = true;
        break;
      }
    }
    if (!found) {
      const std::string full = path.empty() ? it.key() : path + "." + it.key();
      return make_error(EINVAL, "device config: unknown key " + full);
    }
  }
  return ok();
}

Expected<uint64_t> parse_features(const json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t bits = v.get<uint64_t>();
    if (bits & ~uint64_t{NPU_FEATURES_ALL}) {
      return config_error("features", "unknown feature bits in " + std::to_string(bits));
    }
    return bits;
  }
  if (!v.is_array()) {
    return config_error("features",
                        "expected a list of feature names or a number, got " + v.dump());
  }
  uint64_t bits = 0;
  for (const auto& e : v) {
    if (!e.is_string()) return config_error("features", "expected a feature name, got " + e.dump());
    const auto name = e.get<std::string>();
    bool found = false;
    for (const auto& f : kFeatureNames) {
      if (name == f.name) {
        bits |= f.bit;
        found = true;
      }
    }
    if (!found) {
      return config_error(
          "features", "unknown feature \"" + name + "\" (known: int8, fp32, transcendental, fp16)");
    }
  }
  return bits;
}

constexpr uint64_t kMaxLatency = 1'000'000;

Expected<void> parse_object(const json& j, DeviceConfig& c) {
  if (!j.is_object()) return make_error(EINVAL, "device config: top level must be a json object");
  NPU_TRY(check_keys(
      j, "",
      {"name",        "device_id",      "revision",      "clock_hz",          "sram_size",
       "sram_banks",  "num_semaphores", "semaphore_max", "cp_cycles_per_cmd", "queue_depth",
       "watchdog_ms", "features",       "max_bo_size",   "racecheck",         "engine_threads",
       "dma",         "matrix",         "vector",        "scheduling",        "quota"}));
  if (auto it = j.find("name"); it != j.end()) {
    if (!it->is_string()) return config_error("name", "expected a string, got " + it->dump());
    c.name = it->get<std::string>();
    if (c.name.empty() || c.name.size() > 63) {
      return config_error("name", "length must be 1..63 characters");
    }
  }
  NPU_TRY(read_uint(j, "device_id", "", c.device_id, 0, UINT32_MAX));
  NPU_TRY(read_uint(j, "revision", "", c.revision, 0, UINT32_MAX));
  NPU_TRY(read_uint(j, "clock_hz", "", c.clock_hz, 1'000, 100'000'000'000ull));
  NPU_TRY(read_uint(j, "sram_banks", "", c.sram_banks, 1, 1024));
  NPU_TRY(read_uint(j, "sram_size", "", c.sram_size, 64 * 1024, uint64_t{1} << 32));
  NPU_TRY(read_uint(j, "num_semaphores", "", c.num_semaphores, 1, 1024));
  NPU_TRY(read_uint(j, "semaphore_max", "", c.semaphore_max, 1, INT32_MAX));
  NPU_TRY(read_uint(j, "cp_cycles_per_cmd", "", c.cp_cycles_per_cmd, 0, kMaxLatency));
  NPU_TRY(read_uint(j, "queue_depth", "", c.queue_depth, 1, 65536));
  NPU_TRY(read_uint(j, "watchdog_ms", "", c.watchdog_ms, 1, 86'400'000));
  NPU_TRY(read_uint(j, "max_bo_size", "", c.max_bo_size, 4096, uint64_t{1} << 48));
  NPU_TRY(read_bool(j, "racecheck", "", c.racecheck));
  NPU_TRY(read_bool(j, "engine_threads", "", c.engine_threads));
  if (auto it = j.find("features"); it != j.end()) {
    auto f = parse_features(*it);
    if (!f) return f.error();
    c.features = *f;
  }
  const uint64_t granule = uint64_t{c.sram_banks} * 64;
  if (c.sram_size % granule != 0) {
    return config_error("sram_size",
                        "value " + std::to_string(c.sram_size) +
                            " is not a multiple of sram_banks * 64 = " + std::to_string(granule));
  }
  if (auto it = j.find("dma"); it != j.end()) {
    if (!it->is_object()) return config_error("dma", "expected an object, got " + it->dump());
    NPU_TRY(check_keys(*it, "dma", {"bytes_per_cycle", "latency"}));
    NPU_TRY(read_uint(*it, "bytes_per_cycle", "dma", c.dma.bytes_per_cycle, 1, 65536));
    NPU_TRY(read_uint(*it, "latency", "dma", c.dma.latency, 0, kMaxLatency));
  }
  if (auto it = j.find("matrix"); it != j.end()) {
    if (!it->is_object()) return config_error("matrix", "expected an object, got " + it->dump());
    NPU_TRY(check_keys(*it, "matrix",
                       {"int8_rows", "int8_cols", "fp32_rows", "fp32_cols", "fp16_rows",
                        "fp16_cols", "fill_latency"}));
    NPU_TRY(read_uint(*it, "int8_rows", "matrix", c.matrix.int8_rows, 1, 4096));
    NPU_TRY(read_uint(*it, "int8_cols", "matrix", c.matrix.int8_cols, 1, 4096));
    NPU_TRY(read_uint(*it, "fp32_rows", "matrix", c.matrix.fp32_rows, 1, 4096));
    NPU_TRY(read_uint(*it, "fp32_cols", "matrix", c.matrix.fp32_cols, 1, 4096));
    NPU_TRY(read_uint(*it, "fp16_rows", "matrix", c.matrix.fp16_rows, 1, 4096));
    NPU_TRY(read_uint(*it, "fp16_cols", "matrix", c.matrix.fp16_cols, 1, 4096));
    NPU_TRY(read_uint(*it, "fill_latency", "matrix", c.matrix.fill_latency, 0, kMaxLatency));
  }
  if (auto it = j.find("vector"); it != j.end()) {
    if (!it->is_object()) return config_error("vector", "expected an object, got " + it->dump());
    NPU_TRY(
        check_keys(*it, "vector", {"int8_lanes", "fp32_lanes", "latency", "transcendental_cost"}));
    NPU_TRY(read_uint(*it, "int8_lanes", "vector", c.vector.int8_lanes, 1, 65536));
    NPU_TRY(read_uint(*it, "fp32_lanes", "vector", c.vector.fp32_lanes, 1, 65536));
    NPU_TRY(read_uint(*it, "latency", "vector", c.vector.latency, 0, kMaxLatency));
    NPU_TRY(read_uint(*it, "transcendental_cost", "vector", c.vector.transcendental_cost, 1, 1024));
  }
  if (auto it = j.find("scheduling"); it != j.end()) {
    if (!it->is_object())
      return config_error("scheduling", "expected an object, got " + it->dump());
    NPU_TRY(check_keys(
        *it, "scheduling",
        {"preemption", "preempt_cycles", "time_slice_cycles", "preempt_every_safe_point"}));
    NPU_TRY(read_bool(*it, "preemption", "scheduling", c.scheduling.preemption));
    NPU_TRY(read_uint(*it, "preempt_cycles", "scheduling", c.scheduling.preempt_cycles, 0,
                      100'000'000));
    NPU_TRY(read_uint(*it, "time_slice_cycles", "scheduling", c.scheduling.time_slice_cycles, 0,
                      uint64_t{1} << 48));
    NPU_TRY(read_bool(*it, "preempt_every_safe_point", "scheduling",
                      c.scheduling.preempt_every_safe_point));
  }
  if (auto it = j.find("quota"); it != j.end()) {
    if (!it->is_object()) return config_error("quota", "expected an object, got " + it->dump());
    NPU_TRY(
        check_keys(*it, "quota", {"bo_memory", "device_bo_memory", "contexts", "jobs_in_flight"}));
    NPU_TRY(read_uint(*it, "bo_memory", "quota", c.quota.bo_memory, 0, uint64_t{1} << 48));
    NPU_TRY(read_uint(*it, "device_bo_memory", "quota", c.quota.device_bo_memory, 0,
                      uint64_t{1} << 48));
    NPU_TRY(read_uint(*it, "contexts", "quota", c.quota.contexts, 1, 1024));
    NPU_TRY(read_uint(*it, "jobs_in_flight", "quota", c.quota.jobs_in_flight, 1, 1u << 20));
  }
  return ok();
}

#undef NPU_TRY

}  // namespace

Expected<DeviceConfig> DeviceConfig::from_json(std::string_view json_text) {
  json j;
  try {
    j = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    return make_error(EINVAL,
                      std::string("device config: invalid json at byte ") + std::to_string(e.byte));
  }
  DeviceConfig c;
  if (auto r = parse_object(j, c); !r) return r.error();
  return c;
}

Expected<DeviceConfig> DeviceConfig::load(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno != 0 ? errno : ENOENT;
    return make_error(err, path + ": cannot open device config: " + std::strerror(err));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return make_error(EIO, path + ": cannot read device config");
  auto c = from_json(ss.str());
  if (!c) return make_error(c.error().code, path + ": " + c.error().message);
  return c;
}

std::string DeviceConfig::to_json() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["name"] = name;
  j["device_id"] = device_id;
  j["revision"] = revision;
  j["clock_hz"] = clock_hz;
  j["sram_size"] = sram_size;
  j["sram_banks"] = sram_banks;
  j["num_semaphores"] = num_semaphores;
  j["semaphore_max"] = semaphore_max;
  j["cp_cycles_per_cmd"] = cp_cycles_per_cmd;
  j["queue_depth"] = queue_depth;
  j["watchdog_ms"] = watchdog_ms;
  if ((features & ~uint64_t{NPU_FEATURES_ALL}) == 0) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& f : kFeatureNames) {
      if (features & f.bit) list.push_back(f.name);
    }
    j["features"] = list;
  } else {
    j["features"] = features;
  }
  j["max_bo_size"] = max_bo_size;
  if (racecheck) j["racecheck"] = true;
  if (engine_threads) j["engine_threads"] = true;
  j["dma"] = {{"bytes_per_cycle", dma.bytes_per_cycle}, {"latency", dma.latency}};
  j["matrix"] = {{"int8_rows", matrix.int8_rows},      {"int8_cols", matrix.int8_cols},
                 {"fp32_rows", matrix.fp32_rows},      {"fp32_cols", matrix.fp32_cols},
                 {"fp16_rows", matrix.fp16_rows},      {"fp16_cols", matrix.fp16_cols},
                 {"fill_latency", matrix.fill_latency}};
  j["vector"] = {{"int8_lanes", vector.int8_lanes},
                 {"fp32_lanes", vector.fp32_lanes},
                 {"latency", vector.latency},
                 {"transcendental_cost", vector.transcendental_cost}};
  j["scheduling"] = {{"preemption", scheduling.preemption},
                     {"preempt_cycles", scheduling.preempt_cycles},
                     {"time_slice_cycles", scheduling.time_slice_cycles}};
  if (scheduling.preempt_every_safe_point) j["scheduling"]["preempt_every_safe_point"] = true;
  j["quota"] = {{"bo_memory", quota.bo_memory},
                {"device_bo_memory", quota.device_bo_memory},
                {"contexts", quota.contexts},
                {"jobs_in_flight", quota.jobs_in_flight}};
  return j.dump(2) + "\n";
}

}  // namespace npu::isa
