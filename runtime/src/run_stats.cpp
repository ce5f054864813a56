// RunStats: the device segments' profiles merged into one timeline (npu/runtime/run_stats.h).
#include "npu/runtime/run_stats.h"

#include <algorithm>
#include <memory>

namespace npu {

JobProfile RunStats::merged_profile() const {
  return merged_profile_with_host(0, nullptr);
}

JobProfile RunStats::merged_profile_with_host(uint64_t clock_hz,
                                              std::vector<HostSpan>* spans) const {
  JobProfile p;
  uint32_t cmd_base = 0;
  uint64_t host_cycles = 0;  // host time before the current point, in cycles
  for (const auto& s : segments) {
    if (s.kind != format::SegmentKind::kDevice) {
      if (spans == nullptr || clock_hz == 0) continue;
      const auto len = static_cast<uint64_t>(static_cast<double>(s.host_ns) *
                                             static_cast<double>(clock_hz) / 1e9);
      const uint64_t at = p.cycles + host_cycles;
      spans->push_back({s.name + " (" + s.op_type + ")", at, at + std::max<uint64_t>(len, 1)});
      host_cycles += std::max<uint64_t>(len, 1);
      continue;
    }
    if (s.profile) {
      const JobProfile& q = *s.profile;
      for (size_t e = 0; e < p.busy_cycles.size(); ++e) p.busy_cycles[e] += q.busy_cycles[e];
      p.dma_bytes_in += q.dma_bytes_in;
      p.dma_bytes_out += q.dma_bytes_out;
      p.macs += q.macs;
      p.vector_elements += q.vector_elements;
      p.semaphore_stall_cycles += q.semaphore_stall_cycles;
      p.preemptions += q.preemptions;
      p.preempt_cycles += q.preempt_cycles;
      for (CommandTiming t : q.timeline) {
        t.cmd_index += cmd_base;
        t.start_cycle += p.cycles + host_cycles;
        t.end_cycle += p.cycles + host_cycles;
        p.timeline.push_back(t);
      }
      p.seqno = q.seqno;
    }
    p.cycles += s.cycles;
    cmd_base += static_cast<uint32_t>(s.commands().size());
  }
  return p;
}

std::vector<npu_cmd> RunStats::merged_commands() const {
  std::vector<npu_cmd> cmds;
  for (const auto& s : segments) cmds.insert(cmds.end(), s.commands().begin(), s.commands().end());
  return cmds;
}

}  // namespace npu

namespace npu {

uint64_t RunStats::hazard_count() const {
  uint64_t n = 0;
  for (const auto& s : segments) {
    if (s.hazards) n += s.hazards->total;
  }
  return n;
}

HazardReport RunStats::merged_hazards() const {
  HazardReport r;
  r.checked = true;
  uint32_t cmd_base = 0;
  for (const auto& s : segments) {
    if (s.kind == format::SegmentKind::kDevice) {
      if (!s.hazards || !s.hazards->checked) r.checked = false;
      if (s.hazards) {
        r.partial = r.partial || s.hazards->partial;
        r.total += s.hazards->total;
        for (Hazard h : s.hazards->hazards) {
          h.first.cmd_index += cmd_base;
          h.second.cmd_index += cmd_base;
          r.hazards.push_back(h);
        }
      }
    }
    cmd_base += static_cast<uint32_t>(s.commands().size());
  }
  return r;
}

CommandLabeler RunStats::hazard_labels(const format::PackageMetadata& metadata) const {
  // Per device segment: where its commands start in merged_commands(), its name, and the
  // layer each FENCE-separated run of its commands belongs to.
  struct Part {
    uint32_t base = 0;
    std::string name;
    std::vector<uint32_t> fences;  // positions of the FENCEs in the segment
    std::vector<std::string> layers;
  };
  auto parts = std::make_shared<std::vector<Part>>();
  uint32_t cmd_base = 0;
  for (const auto& s : segments) {
    if (s.kind == format::SegmentKind::kDevice && !s.commands().empty()) {
      Part p;
      p.base = cmd_base;
      p.name = s.name;
      for (uint32_t i = 0; i < s.commands().size(); ++i) {
        if (s.commands()[i].hdr.opcode == NPU_OP_FENCE) p.fences.push_back(i);
      }
      if (s.index < metadata.segments.size()) {
        const auto& layers = metadata.segments[s.index].layers;
        if (layers.size() == p.fences.size() + 1) {
          for (const auto& l : layers) p.layers.push_back(l.name);
        }
      }
      parts->push_back(std::move(p));
    }
    cmd_base += static_cast<uint32_t>(s.commands().size());
  }
  return [parts](uint32_t index) -> std::string {
    auto it = std::upper_bound(parts->begin(), parts->end(), index,
                               [](uint32_t i, const Part& p) { return i < p.base; });
    if (it == parts->begin()) return {};
    const Part& p = *std::prev(it);
    std::string label = "segment '" + p.name + "'";
    if (!p.layers.empty()) {
      const uint32_t local = index - p.base;
      const size_t layer =
          std::lower_bound(p.fences.begin(), p.fences.end(), local) - p.fences.begin();
      if (layer < p.layers.size()) label += ", layer '" + p.layers[layer] + "'";
    }
    return label;
  };
}

}  // namespace npu
