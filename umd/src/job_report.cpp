// Job reports: text and JSON renderings of a finished job (see npu/job_report.h).
#include "npu/job_report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "npu/isa/validate.h"

namespace npu {

namespace {

using json = nlohmann::ordered_json;

std::vector<std::pair<uint32_t, std::string>> engines_of(const JobReport& r) {
  std::vector<std::pair<uint32_t, std::string>> out;
  if (r.engines.empty()) {
    for (uint32_t id : {NPU_ENGINE_CP, NPU_ENGINE_DMA_IN, NPU_ENGINE_DMA_OUT, NPU_ENGINE_MATRIX,
                        NPU_ENGINE_VECTOR}) {
      out.emplace_back(id, isa::engine_name(static_cast<uint8_t>(id)));
    }
  } else {
    for (const auto& e : r.engines) {
      if (e.id < DRM_NPU_MAX_ENGINES) out.emplace_back(e.id, e.name);
    }
  }
  return out;
}

std::string engine_label(uint32_t engine) {
  const char* name = isa::engine_name(static_cast<uint8_t>(engine));
  return std::string_view(name) == "unknown" ? fmt::format("engine {}", engine) : name;
}

double utilization(uint64_t busy, uint64_t cycles) {
  return cycles == 0 ? 0.0 : static_cast<double>(busy) / static_cast<double>(cycles);
}

std::string status_text(const JobReport& r) {
  return r.timed_out ? std::string("pending") : std::string(to_string(r.result.status));
}

// "1.234 us at 1 GHz"
std::string device_time(uint64_t cycles, uint64_t clock_hz) {
  if (clock_hz == 0) return "clock unknown";
  const double us = static_cast<double>(cycles) * 1e6 / static_cast<double>(clock_hz);
  const double ghz = static_cast<double>(clock_hz) / 1e9;
  return fmt::format("{:.3f} us at {:g} GHz", us, ghz);
}

}  // namespace

std::string describe_fault(const Fault& f, std::span<const npu_cmd> commands) {
  std::string op;
  if (f.cmd_index < commands.size()) {
    op = fmt::format(" ({})", isa::opcode_name(commands[f.cmd_index].hdr.opcode));
  }
  std::string where;
  switch (f.kind) {
    case DRM_NPU_FAULT_MMU:
      where = fmt::format(", address {:#x}", f.address);
      break;
    case DRM_NPU_FAULT_SRAM_RANGE:
      where = fmt::format(", sram offset {:#x}", f.address);
      break;
    case DRM_NPU_FAULT_SEMAPHORE:
      where = fmt::format(", semaphore {}", f.address);
      break;
    default:
      if (f.address != 0) where = fmt::format(", address {:#x}", f.address);
      break;
  }
  return fmt::format("{} on {} at command {}{}{}", fault_kind_name(f.kind), engine_label(f.engine),
                     f.cmd_index, op, where);
}

std::string format_hazard_report(const HazardReport& h, const CommandLabeler& label) {
  if (!h.checked) return "racecheck: the job was not checked\n";
  std::string out = "racecheck: ";
  if (h.total == 0) {
    out += "no hazards";
  } else {
    out += fmt::format("{} hazard{}", h.total, h.total == 1 ? "" : "s");
    if (h.total > h.hazards.size()) out += fmt::format(" (first {} listed)", h.hazards.size());
  }
  if (h.partial) out += " (partial: the job did not complete)";
  out += "\n";
  for (const Hazard& z : h.hazards) out += "  " + describe_hazard(z, label) + "\n";
  return out;
}

namespace {

CommandLabeler labeler_of(const JobReport& r) {
  return r.label ? r.label : marker_labels(r.commands);
}

json hazard_command_json(const HazardCommand& c, const CommandLabeler& label) {
  json j = {{"cmd_index", c.cmd_index},
            {"engine", engine_label(c.engine)},
            {"opcode", isa::opcode_name(static_cast<uint8_t>(c.opcode))}};
  const std::string l = label(c.cmd_index);
  j["label"] = l.empty() ? json(nullptr) : json(l);
  return j;
}

json hazards_json(const HazardReport& h, const CommandLabeler& label) {
  json list = json::array();
  for (const Hazard& z : h.hazards) {
    list.push_back({{"kind", hazard_kind_name(z.kind)},
                    {"space", memory_space_name(z.space)},
                    {"begin", z.begin},
                    {"end", z.end},
                    {"first", hazard_command_json(z.first, label)},
                    {"second", hazard_command_json(z.second, label)},
                    {"text", describe_hazard(z, label)}});
  }
  return {{"checked", h.checked},
          {"partial", h.partial},
          {"total", h.total},
          {"hazards", std::move(list)}};
}

}  // namespace

std::string hazard_report_json(const HazardReport& report, const CommandLabeler& label) {
  return hazards_json(report,
                      label ? label : CommandLabeler([](uint32_t) { return std::string(); }))
      .dump(2);
}

std::string format_job_report(const JobReport& r, bool stats) {
  std::string out;
  if (r.timed_out) {
    out += fmt::format("job pending: wait timed out after {:.3f} ms\n",
                       static_cast<double>(r.host_ns) / 1e6);
    return out;
  }
  out +=
      fmt::format("job {}: {} cycles ({}), host {:.3f} ms\n", status_text(r), r.result.cycles,
                  device_time(r.result.cycles, r.clock_hz), static_cast<double>(r.host_ns) / 1e6);
  if (r.result.fault.kind != DRM_NPU_FAULT_NONE) {
    out += fmt::format("fault: {}\n", describe_fault(r.result.fault, r.commands));
  }
  if (r.hazards) out += format_hazard_report(*r.hazards, labeler_of(r));
  if (stats) {
    if (!r.profile) {
      out += "stats: no job profile (device lacks job_profile or the job was not retained)\n";
    } else {
      const JobProfile& p = *r.profile;
      out += fmt::format("  {:<10}{:>14}{:>13}\n", "engine", "busy cycles", "utilization");
      for (const auto& [id, name] : engines_of(r)) {
        out += fmt::format("  {:<10}{:>14}{:>12.1f}%\n", name, p.busy_cycles[id],
                           100.0 * utilization(p.busy_cycles[id], p.cycles));
      }
      out += fmt::format("  dma bytes in       {}\n", p.dma_bytes_in);
      out += fmt::format("  dma bytes out      {}\n", p.dma_bytes_out);
      out += fmt::format("  macs               {}\n", p.macs);
      out += fmt::format("  vector elements    {}\n", p.vector_elements);
      out += fmt::format("  sem stall cycles   {}\n", p.semaphore_stall_cycles);
      out += fmt::format("  commands executed  {}\n", p.commands_executed());
      if (p.preemptions > 0) {
        out += fmt::format("  preemptions        {} ({} cycles of switches)\n", p.preemptions,
                           p.preempt_cycles);
      }
    }
  }
  for (const auto& o : r.outputs) {
    out += fmt::format("wrote {} ({} bytes from {:#x})\n", o.file, o.length, o.address);
  }
  return out;
}

std::string job_report_json(const JobReport& r) {
  json j;
  j["status"] = status_text(r);
  j["timed_out"] = r.timed_out;
  j["cycles"] = r.result.cycles;
  j["clock_hz"] = r.clock_hz;
  j["device_us"] = r.clock_hz == 0 ? 0.0
                                   : static_cast<double>(r.result.cycles) * 1e6 /
                                         static_cast<double>(r.clock_hz);
  j["host_ns"] = r.host_ns;
  if (r.result.fault.kind != DRM_NPU_FAULT_NONE) {
    const Fault& f = r.result.fault;
    json fault = {{"kind", fault_kind_name(f.kind)},
                  {"engine", engine_label(f.engine)},
                  {"cmd_index", f.cmd_index},
                  {"address", f.address},
                  {"text", describe_fault(f, r.commands)}};
    if (f.cmd_index < r.commands.size()) {
      fault["opcode"] = isa::opcode_name(r.commands[f.cmd_index].hdr.opcode);
    }
    j["fault"] = std::move(fault);
  } else {
    j["fault"] = nullptr;
  }
  if (r.profile) {
    const JobProfile& p = *r.profile;
    json engines = json::array();
    for (const auto& [id, name] : engines_of(r)) {
      engines.push_back({{"id", id},
                         {"name", name},
                         {"busy_cycles", p.busy_cycles[id]},
                         {"utilization", utilization(p.busy_cycles[id], p.cycles)}});
    }
    j["profile"] = {{"seqno", p.seqno},
                    {"cycles", p.cycles},
                    {"engines", std::move(engines)},
                    {"dma_bytes_in", p.dma_bytes_in},
                    {"dma_bytes_out", p.dma_bytes_out},
                    {"macs", p.macs},
                    {"vector_elements", p.vector_elements},
                    {"semaphore_stall_cycles", p.semaphore_stall_cycles},
                    {"commands_executed", p.commands_executed()},
                    {"preemptions", p.preemptions},
                    {"preempt_cycles", p.preempt_cycles}};
  } else {
    j["profile"] = nullptr;
  }
  j["racecheck"] = r.hazards ? hazards_json(*r.hazards, labeler_of(r)) : json(nullptr);
  json outputs = json::array();
  for (const auto& o : r.outputs) {
    outputs.push_back({{"address", o.address}, {"length", o.length}, {"file", o.file}});
  }
  j["outputs"] = std::move(outputs);
  return j.dump(2) + "\n";
}

}  // namespace npu
