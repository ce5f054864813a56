// Hazards: names, ABI conversion, labels and the one-line text (npu/hazard.h).
#include "npu/hazard.h"

#include <fmt/format.h>

#include <memory>

#include "npu/isa/opcodes.h"
#include "npu/isa/validate.h"

namespace npu {

const char* hazard_kind_name(HazardKind kind) {
  return isa::hazard_kind_name(static_cast<uint32_t>(kind));
}

const char* memory_space_name(MemorySpace space) {
  switch (space) {
    case MemorySpace::kSram:
      return "sram";
    case MemorySpace::kDram:
      return "dram";
  }
  return "?";
}

Hazard hazard_from_abi(const drm_npu_hazard& h) {
  return {static_cast<HazardKind>(h.kind),
          static_cast<MemorySpace>(h.space),
          h.begin,
          h.end,
          {h.first.cmd_index, h.first.engine, h.first.opcode},
          {h.second.cmd_index, h.second.engine, h.second.opcode}};
}

drm_npu_hazard hazard_to_abi(const Hazard& h) {
  drm_npu_hazard a{};
  a.kind = static_cast<uint32_t>(h.kind);
  a.space = static_cast<uint32_t>(h.space);
  a.begin = h.begin;
  a.end = h.end;
  a.first = {h.first.cmd_index, h.first.engine, h.first.opcode};
  a.second = {h.second.cmd_index, h.second.engine, h.second.opcode};
  return a;
}

CommandLabeler marker_labels(std::span<const npu_cmd> commands) {
  // The marker id each command follows (-1: none), computed once.
  auto ids = std::make_shared<std::vector<int64_t>>(commands.size(), -1);
  int64_t last = -1;
  for (size_t i = 0; i < commands.size(); ++i) {
    if (commands[i].hdr.opcode == NPU_OP_MARKER) last = commands[i].marker.id;
    (*ids)[i] = last;
  }
  return [ids](uint32_t index) {
    if (index >= ids->size() || (*ids)[index] < 0) return std::string();
    return fmt::format("marker {}", (*ids)[index]);
  };
}

std::string describe_hazard_command(const HazardCommand& c, const CommandLabeler& label) {
  std::string s = fmt::format("command {} ({} on {}", c.cmd_index,
                              isa::opcode_name(static_cast<uint8_t>(c.opcode)),
                              isa::engine_name(static_cast<uint8_t>(c.engine)));
  if (label) {
    if (std::string l = label(c.cmd_index); !l.empty()) s += ", " + l;
  }
  return s + ")";
}

std::string describe_hazard(const Hazard& h, const CommandLabeler& label) {
  const char* first_does = h.kind == HazardKind::kWar ? "reads" : "writes";
  const char* second_does = h.kind == HazardKind::kRaw ? "reads" : "writes";
  return fmt::format("{} {} [{:#x}, {:#x}): {} {}, {} {}; no semaphore or fence orders them",
                     hazard_kind_name(h.kind), memory_space_name(h.space), h.begin, h.end,
                     describe_hazard_command(h.first, label), first_does,
                     describe_hazard_command(h.second, label), second_does);
}

}  // namespace npu
