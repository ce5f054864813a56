// RunStats: the device segments' profiles merged into one timeline (npu/runtime/run_stats.h).
#include "npu/runtime/run_stats.h"

#include <algorithm>

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
      for (CommandTiming t : q.timeline) {
        t.cmd_index += cmd_base;
        t.start_cycle += p.cycles + host_cycles;
        t.end_cycle += p.cycles + host_cycles;
        p.timeline.push_back(t);
      }
      p.seqno = q.seqno;
    }
    p.cycles += s.cycles;
    cmd_base += static_cast<uint32_t>(s.commands.size());
  }
  return p;
}

std::vector<npu_cmd> RunStats::merged_commands() const {
  std::vector<npu_cmd> cmds;
  for (const auto& s : segments) cmds.insert(cmds.end(), s.commands.begin(), s.commands.end());
  return cmds;
}

}  // namespace npu
