// Chrome / Perfetto trace-event JSON of a job's timeline (see npu/trace.h for the format).
#include "npu/trace.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "npu/isa/validate.h"

namespace npu {

namespace {

using json = nlohmann::ordered_json;

constexpr int kPid = 1;

std::vector<EngineInfo> default_engines() {
  std::vector<EngineInfo> engines;
  for (uint32_t id : {NPU_ENGINE_CP, NPU_ENGINE_DMA_IN, NPU_ENGINE_DMA_OUT, NPU_ENGINE_MATRIX,
                      NPU_ENGINE_VECTOR}) {
    EngineInfo e;
    e.id = id;
    e.name = isa::engine_name(static_cast<uint8_t>(id));
    engines.push_back(std::move(e));
  }
  return engines;
}

/// One flow arrow per hazard between the slices of its two commands (both must be in the
/// timeline), from the one that ran first; the ids are the hazards' positions, from 1.
template <typename ToUs>
void add_hazard_flows(const JobProfile& profile, const TraceOptions& options, ToUs us,
                      json& events) {
  if (options.hazards.empty()) return;
  std::unordered_map<uint32_t, const CommandTiming*> at;
  for (const auto& t : profile.timeline) at.emplace(t.cmd_index, &t);
  const CommandLabeler label = options.label ? options.label : marker_labels(options.commands);
  // Flow ends bind to the slice enclosing their timestamp: the middle of the command's.
  auto mid = [&](const CommandTiming& t) {
    return (us(t.start_cycle) + us(std::max(t.end_cycle, t.start_cycle))) / 2;
  };
  uint64_t id = 0;
  for (const Hazard& h : options.hazards) {
    auto a = at.find(h.first.cmd_index);
    auto b = at.find(h.second.cmd_index);
    ++id;
    if (a == at.end() || b == at.end()) continue;
    // The arrow runs forward in time: a racing command may well run before the one earlier
    // in the buffer.
    if (mid(*b->second) < mid(*a->second)) std::swap(a, b);
    const std::string name = fmt::format("{} {} [{:#x}, {:#x})", hazard_kind_name(h.kind),
                                         memory_space_name(h.space), h.begin, h.end);
    events.push_back({{"name", name},
                      {"cat", "hazard"},
                      {"ph", "s"},
                      {"id", id},
                      {"pid", kPid},
                      {"tid", a->second->engine},
                      {"ts", mid(*a->second)},
                      {"args", {{"text", describe_hazard(h, label)}}}});
    events.push_back({{"name", name},
                      {"cat", "hazard"},
                      {"ph", "f"},
                      {"bp", "e"},
                      {"id", id},
                      {"pid", kPid},
                      {"tid", b->second->engine},
                      {"ts", mid(*b->second)}});
  }
}

}  // namespace

std::vector<npu_cmd> split_commands(std::span<const std::byte> cmdbuf) {
  if (cmdbuf.size() < sizeof(npu_cmdbuf_header)) return {};
  npu_cmdbuf_header h{};
  std::memcpy(&h, cmdbuf.data(), sizeof(h));
  const size_t room = (cmdbuf.size() - sizeof(h)) / sizeof(npu_cmd);
  return isa::copy_commands(cmdbuf.data() + sizeof(h), std::min<size_t>(room, h.num_cmds));
}

std::string chrome_trace_json(const JobProfile& profile, const TraceOptions& options) {
  const double hz = options.clock_hz != 0 ? static_cast<double>(options.clock_hz) : 1e9;
  auto us = [hz](uint64_t cycles) { return static_cast<double>(cycles) * 1e6 / hz; };
  // A complete ("X") event on track `tid` from cycle `start` to `end` (at least `start`).
  auto span = [&us](std::string_view name, std::string_view cat, uint32_t tid, uint64_t start,
                    uint64_t end, json args) {
    end = std::max(end, start);
    return json{{"name", name},
                {"cat", cat},
                {"ph", "X"},
                {"pid", kPid},
                {"tid", tid},
                {"ts", us(start)},
                {"dur", us(end - start)},
                {"args", std::move(args)}};
  };
  const std::vector<EngineInfo> engines =
      options.engines.empty() ? default_engines() : options.engines;

  json events = json::array();
  events.push_back(
      {{"name", "process_name"},
       {"ph", "M"},
       {"pid", kPid},
       {"tid", 0},
       {"args",
        {{"name", options.process_name.empty() ? std::string("npu job") : options.process_name}}}});
  for (const auto& e : engines) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", kPid},
                      {"tid", e.id},
                      {"args", {{"name", e.name}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", kPid},
                      {"tid", e.id},
                      {"args", {{"sort_index", e.id}}}});
  }

  if (!options.host_spans.empty()) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", kPid},
                      {"tid", kHostTraceTid},
                      {"args", {{"name", "host"}}}});
  }
  for (const auto& h : options.host_spans) {
    const uint64_t end = std::max(h.end_cycle, h.start_cycle);
    events.push_back(span(h.name, "host", kHostTraceTid, h.start_cycle, end,
                          {{"start_cycle", h.start_cycle}, {"end_cycle", end}}));
  }
  for (const auto& t : profile.timeline) {
    const npu_cmd* cmd =
        t.cmd_index < options.commands.size() ? &options.commands[t.cmd_index] : nullptr;
    const uint64_t end = std::max(t.end_cycle, t.start_cycle);
    if (t.opcode == DRM_NPU_PROFILE_PREEMPT) {  // the job was switched out at this safe point
      events.push_back(span("preempted", "preempt", t.engine, t.start_cycle, end,
                            {{"safe_point", t.cmd_index},
                             {"start_cycle", t.start_cycle},
                             {"end_cycle", t.end_cycle}}));
      continue;
    }
    if (t.opcode == NPU_OP_MARKER) {
      const std::string name =
          cmd != nullptr ? fmt::format("marker {}", cmd->marker.id) : std::string("marker");
      json args = {{"cmd_index", t.cmd_index}, {"cycle", t.start_cycle}};
      if (cmd != nullptr) args["id"] = cmd->marker.id;
      events.push_back({{"name", name},
                        {"cat", "marker"},
                        {"ph", "i"},
                        {"s", "t"},
                        {"pid", kPid},
                        {"tid", t.engine},
                        {"ts", us(t.start_cycle)},
                        {"args", std::move(args)}});
      continue;
    }
    events.push_back(span(
        isa::opcode_name(static_cast<uint8_t>(t.opcode)), "command", t.engine, t.start_cycle, end,
        {{"cmd_index", t.cmd_index}, {"start_cycle", t.start_cycle}, {"end_cycle", t.end_cycle}}));
    if (t.opcode == NPU_OP_FENCE && cmd != nullptr && cmd->hdr.opcode == NPU_OP_FENCE &&
        (cmd->hdr.flags & NPU_FENCE_FLAG_IRQ) != 0) {
      events.push_back(
          {{"name", fmt::format("fence irq {}", cmd->fence.value)},
           {"cat", "irq"},
           {"ph", "i"},
           {"s", "g"},
           {"pid", kPid},
           {"tid", t.engine},
           {"ts", us(end)},
           {"args", {{"cmd_index", t.cmd_index}, {"value", cmd->fence.value}, {"cycle", end}}}});
    }
  }

  add_hazard_flows(profile, options, us, events);

  const json other = {
      {"seqno", profile.seqno},
      {"cycles", profile.cycles},
      {"clock_hz", static_cast<uint64_t>(hz)},
      {"time_unit", "ts and dur are microseconds of device time: cycles * 1e6 / clock_hz"}};
  // One event per line: diffable, greppable, and still one JSON document.
  std::string out = "{\"traceEvents\": [\n";
  for (size_t i = 0; i < events.size(); ++i) {
    out += "  " + events[i].dump() + (i + 1 < events.size() ? ",\n" : "\n");
  }
  out += "],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": " + other.dump() + "}\n";
  return out;
}

Expected<void> write_chrome_trace(const JobProfile& profile, const std::string& path,
                                  const TraceOptions& options) {
  const std::string text = chrome_trace_json(profile, options);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    return make_error(errno != 0 ? errno : EIO,
                      fmt::format("trace: cannot write '{}': {}", path, std::strerror(errno)));
  }
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return make_error(EIO, fmt::format("trace: cannot write '{}'", path));
  return {};
}

}  // namespace npu
