// DeviceReport: gathering (params, ENGINE_INFO, COUNTERS) and the table / JSON renderings.
#include "npu/device_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "npu_isa.h"

namespace npu {

namespace {

std::vector<std::string> bit_names(uint64_t bits,
                                   std::initializer_list<std::pair<uint64_t, const char*>> known) {
  std::vector<std::string> names;
  uint64_t rest = bits;
  for (const auto& [bit, name] : known) {
    if (bits & bit) names.emplace_back(name);
    rest &= ~bit;
  }
  for (int i = 0; i < 64; ++i) {
    if (rest & (1ull << i)) names.push_back(fmt::format("bit {}", i));
  }
  return names;
}

std::string join(const std::vector<std::string>& items) {
  if (items.empty()) return "none";
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

// "2 MiB" for exact binary multiples, else the byte count.
std::string human_bytes(uint64_t n) {
  if (n != 0 && n % (1ull << 30) == 0) return fmt::format("{} GiB", n >> 30);
  if (n != 0 && n % (1ull << 20) == 0) return fmt::format("{} MiB", n >> 20);
  if (n != 0 && n % (1ull << 10) == 0) return fmt::format("{} KiB", n >> 10);
  return fmt::format("{} bytes", n);
}

std::string human_hz(uint64_t hz) {
  if (hz != 0 && hz % 1'000'000'000 == 0) return fmt::format("{} GHz", hz / 1'000'000'000);
  if (hz != 0 && hz % 1'000'000 == 0) return fmt::format("{} MHz", hz / 1'000'000);
  return fmt::format("{} Hz", hz);
}

std::string version(uint16_t major, uint16_t minor) {
  return fmt::format("{}.{}", major, minor);
}

// The engines to key per-engine counters by: the reported ones, else the five known ids.
std::vector<std::pair<uint32_t, std::string>> engine_keys(const std::vector<EngineInfo>& engines) {
  std::vector<std::pair<uint32_t, std::string>> keys;
  for (const auto& e : engines) {
    if (e.id < DRM_NPU_MAX_ENGINES) keys.emplace_back(e.id, e.name);
  }
  return keys;
}

}  // namespace

Expected<DeviceReport> query_device_report(const Device& device) {
  DeviceReport r;
  r.device = device.path();
  r.params = device.params();
  auto engines = device.engine_info();
  if (!engines) return engines.error();
  r.engines = std::move(*engines);
  auto counters = device.counters();
  if (!counters) return counters.error();
  r.counters = *counters;
  if (r.params.has(DRM_NPU_CAP_QUOTAS)) {
    auto quota = device.quota();
    if (!quota) return quota.error();
    r.quota = *quota;
  }
  if (r.device.starts_with("unix:")) {
    auto st = daemon_status_of_others(r.device.substr(5));
    if (!st) return st.error();
    r.daemon = std::move(*st);
  }
  return r;
}

std::string platform_name(uint32_t platform) {
  switch (platform) {
    case DRM_NPU_PLATFORM_SILICON:
      return "silicon";
    case DRM_NPU_PLATFORM_EMULATOR:
      return "emulator";
    default:
      return fmt::format("unknown ({})", platform);
  }
}

std::vector<std::string> capability_names(uint64_t caps) {
  return bit_names(caps, {{DRM_NPU_CAP_INT8, "int8"},
                          {DRM_NPU_CAP_FP32, "fp32"},
                          {DRM_NPU_CAP_PRIORITY, "priority"},
                          {DRM_NPU_CAP_JOB_PROFILE, "job_profile"},
                          {DRM_NPU_CAP_SKIP_VALIDATION, "skip_validation"},
                          {DRM_NPU_CAP_RACECHECK, "racecheck"},
                          {DRM_NPU_CAP_BO_WAIT, "bo_wait"},
                          {DRM_NPU_CAP_FENCES, "fences"},
                          {DRM_NPU_CAP_BO_SHARING, "bo_sharing"},
                          {DRM_NPU_CAP_CTX_EVENTS, "ctx_events"},
                          {DRM_NPU_CAP_PREEMPTION, "preemption"},
                          {DRM_NPU_CAP_QUOTAS, "quotas"}});
}

std::vector<std::string> feature_names(uint64_t features) {
  return bit_names(features, {{NPU_FEATURE_INT8, "int8"},
                              {NPU_FEATURE_FP32, "fp32"},
                              {NPU_FEATURE_TRANSCENDENTAL, "transcendental"},
                              {NPU_FEATURE_FP16, "fp16"}});
}

const char* engine_throughput_unit(uint32_t engine) {
  switch (engine) {
    case NPU_ENGINE_CP:
      return "commands/cycle";
    case NPU_ENGINE_DMA_IN:
    case NPU_ENGINE_DMA_OUT:
      return "bytes/cycle";
    case NPU_ENGINE_MATRIX:
      return "macs/cycle";
    case NPU_ENGINE_VECTOR:
      return "elements/cycle";
    default:
      return "units/cycle";
  }
}

std::string format_device_report(const DeviceReport& r) {
  const DeviceParams& p = r.params;
  std::string out;
  auto row = [&](std::string_view key, const std::string& value) {
    out += fmt::format("  {:<16}{}\n", key, value);
  };
  out += "identity\n";
  row("device", r.device);
  row("name", p.name);
  row("device id", fmt::format("{:#06x}", p.device_id));
  row("revision", fmt::format("{}", p.revision));
  row("platform", platform_name(p.platform));
  row("api version", version(p.api_major, p.api_minor));
  row("isa version", version(p.isa_major, p.isa_minor));

  out += "parameters\n";
  row("sram", fmt::format("{} ({} bytes) in {} banks", human_bytes(p.sram_size), p.sram_size,
                          p.sram_banks));
  row("clock", fmt::format("{} ({} Hz)", human_hz(p.clock_hz), p.clock_hz));
  row("semaphores", fmt::format("{}", p.num_semaphores));
  row("watchdog", fmt::format("{} ms", p.watchdog_ms));
  row("max bo size", fmt::format("{} ({} bytes)", human_bytes(p.max_bo_size), p.max_bo_size));
  if (p.va_range) {
    row("va range", fmt::format("[{:#x}, {:#x}) align {:#x}", p.va_range->start, p.va_range->end,
                                p.va_range->align));
  } else {
    row("va range", "not reported");
  }
  row("engines", fmt::format("{} (mask {:#x})", p.num_engines, p.engine_mask));
  if (p.preemption) {
    row("preemption", fmt::format("at safe points, {} cycles a switch, time slice {}",
                                  p.preemption->switch_cycles,
                                  p.preemption->time_slice_cycles == 0
                                      ? std::string("off")
                                      : fmt::format("{} cycles", p.preemption->time_slice_cycles)));
  }
  row("capabilities", join(capability_names(p.capabilities)));
  row("features", join(feature_names(p.features)));

  out += "engines\n";
  out += fmt::format("  {:>2}  {:<10}{:>26}{:>10}{:>13}\n", "id", "name", "throughput", "latency",
                     "queue depth");
  for (const auto& e : r.engines) {
    out += fmt::format("  {:>2}  {:<10}{:>26}{:>10}{:>13}\n", e.id, e.name,
                       fmt::format("{} {}", e.throughput, engine_throughput_unit(e.id)), e.latency,
                       e.queue_depth);
  }

  const drm_npu_counters& c = r.counters;
  out += "counters\n";
  row("jobs completed", fmt::format("{}", c.jobs_completed));
  row("jobs faulted", fmt::format("{}", c.jobs_faulted));
  row("device resets", fmt::format("{}", c.device_resets));
  row("total cycles", fmt::format("{}", c.total_cycles));
  row("dma bytes in", fmt::format("{}", c.dma_bytes_in));
  row("dma bytes out", fmt::format("{}", c.dma_bytes_out));
  row("macs", fmt::format("{}", c.macs));
  row("vector elements", fmt::format("{}", c.vector_elements));
  row("sem stalls", fmt::format("{} cycles", c.semaphore_stall_cycles));
  if (p.api_minor >= 4) {
    row("jobs submitted", fmt::format("{}", c.jobs_submitted));
    row("jobs aborted", fmt::format("{}", c.jobs_aborted));
    row("preemptions", fmt::format("{} ({} cycles)", c.preemptions, c.preempt_cycles));
  }
  for (const auto& [id, name] : engine_keys(r.engines)) {
    row(fmt::format("{}", name),
        fmt::format("{} busy cycles, {} commands", c.busy_cycles[id], c.commands[id]));
  }
  if (r.quota) {
    const drm_npu_quota& q = *r.quota;
    out += "quota (this file: used / limit)\n";
    row("bo memory", fmt::format("{} / {} bytes", q.bo_memory, q.bo_memory_limit));
    row("device memory",
        fmt::format("{} / {} bytes", q.device_bo_memory, q.device_bo_memory_limit));
    row("contexts", fmt::format("{} / {}", q.contexts, q.contexts_limit));
    row("jobs in flight", fmt::format("{} / {}", q.jobs_in_flight, q.jobs_in_flight_limit));
    row("realtime", (q.flags & DRM_NPU_QUOTA_REALTIME) != 0 ? "allowed" : "not allowed (EPERM)");
  }
  if (r.daemon) out += format_daemon_status(r.device.substr(5), *r.daemon);
  return out;
}

std::string device_report_json(const DeviceReport& r) {
  using json = nlohmann::ordered_json;
  const DeviceParams& p = r.params;
  json j;
  j["schema_version"] = 1;
  j["device"] = r.device;
  j["identity"] = {
      {"name", p.name},
      {"device_id", p.device_id},
      {"revision", p.revision},
      {"platform", platform_name(p.platform)},
      {"api_version", version(p.api_major, p.api_minor)},
      {"isa_version", version(p.isa_major, p.isa_minor)},
  };
  json params = {
      {"sram_size", p.sram_size},
      {"sram_banks", p.sram_banks},
      {"clock_hz", p.clock_hz},
      {"num_semaphores", p.num_semaphores},
      {"watchdog_ms", p.watchdog_ms},
      {"max_bo_size", p.max_bo_size},
      {"num_engines", p.num_engines},
      {"engine_mask", p.engine_mask},
      {"capabilities", capability_names(p.capabilities)},
      {"capabilities_mask", p.capabilities},
      {"features", feature_names(p.features)},
      {"features_mask", p.features},
  };
  if (p.va_range) {
    params["va_range"] = {
        {"start", p.va_range->start}, {"end", p.va_range->end}, {"align", p.va_range->align}};
  } else {
    params["va_range"] = nullptr;
  }
  if (p.preemption) {
    params["preemption"] = {{"switch_cycles", p.preemption->switch_cycles},
                            {"time_slice_cycles", p.preemption->time_slice_cycles}};
  }
  j["parameters"] = std::move(params);
  json engines = json::array();
  for (const auto& e : r.engines) {
    engines.push_back({{"id", e.id},
                       {"name", e.name},
                       {"throughput", e.throughput},
                       {"throughput_unit", engine_throughput_unit(e.id)},
                       {"latency", e.latency},
                       {"queue_depth", e.queue_depth}});
  }
  j["engines"] = std::move(engines);
  const drm_npu_counters& c = r.counters;
  json busy = json::object(), commands = json::object();
  for (const auto& [id, name] : engine_keys(r.engines)) {
    busy[name] = c.busy_cycles[id];
    commands[name] = c.commands[id];
  }
  j["counters"] = {
      {"jobs_completed", c.jobs_completed},
      {"jobs_faulted", c.jobs_faulted},
      {"device_resets", c.device_resets},
      {"total_cycles", c.total_cycles},
      {"busy_cycles", std::move(busy)},
      {"commands", std::move(commands)},
      {"dma_bytes_in", c.dma_bytes_in},
      {"dma_bytes_out", c.dma_bytes_out},
      {"macs", c.macs},
      {"vector_elements", c.vector_elements},
      {"semaphore_stall_cycles", c.semaphore_stall_cycles},
  };
  if (p.api_minor >= 4) {
    j["counters"]["jobs_submitted"] = c.jobs_submitted;
    j["counters"]["jobs_aborted"] = c.jobs_aborted;
    j["counters"]["preemptions"] = c.preemptions;
    j["counters"]["preempt_cycles"] = c.preempt_cycles;
  }
  if (r.quota) {
    const drm_npu_quota& q = *r.quota;
    j["quota"] = {{"bo_memory", q.bo_memory},
                  {"bo_memory_limit", q.bo_memory_limit},
                  {"device_bo_memory", q.device_bo_memory},
                  {"device_bo_memory_limit", q.device_bo_memory_limit},
                  {"contexts", q.contexts},
                  {"contexts_limit", q.contexts_limit},
                  {"jobs_in_flight", q.jobs_in_flight},
                  {"jobs_in_flight_limit", q.jobs_in_flight_limit},
                  {"realtime", (q.flags & DRM_NPU_QUOTA_REALTIME) != 0}};
  }
  if (r.daemon) {
    json clients = json::array();
    for (const npu_daemon_client& d : r.daemon->clients) {
      json cl = {{"client_id", d.client_id},
                 {"pid", d.pid},
                 {"bos", d.bos},
                 {"bo_bytes", d.bo_bytes},
                 {"contexts", d.contexts}};
      if (r.daemon->version >= 3) {
        cl["uid"] = d.uid;
        cl["gid"] = d.gid;
        cl["jobs_in_flight"] = d.jobs_in_flight;
        cl["realtime"] = (d.flags & NPU_DAEMON_CLIENT_REALTIME) != 0;
      }
      clients.push_back(std::move(cl));
    }
    j["daemon"] = {{"socket", r.device.substr(5)},
                   {"clients_served", r.daemon->summary.clients_served},
                   {"bo_memory", r.daemon->summary.bo_memory},
                   {"clients", std::move(clients)}};
  }
  return j.dump(2) + "\n";
}

}  // namespace npu
