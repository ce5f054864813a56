// Predicted vs measured cycles per layer (npu/runtime/layer_timing.h).
#include "npu/runtime/layer_timing.h"

#include <algorithm>
#include <map>
#include <utility>

#include "npu_accel.h"
#include "npu_isa.h"

namespace npu {

std::vector<LayerTiming> layer_timings(const format::PackageMetadata& metadata,
                                       const RunStats& stats) {
  std::vector<const format::Segment*> segs;
  for (const auto& s : metadata.segments) {
    if (s.kind == format::SegmentKind::kDevice) segs.push_back(&s);
  }
  std::vector<LayerTiming> rows;
  size_t next = 0;
  for (const auto& ss : stats.segments) {
    if (ss.kind != format::SegmentKind::kDevice || !ss.profile || next >= segs.size()) continue;
    const format::Segment& ps = *segs[next++];
    std::vector<std::pair<uint32_t, uint64_t>> fences;  // command index, end cycle
    std::map<uint32_t, uint64_t> resumed;  // a preemption at a fence: the cycle the job resumed
    for (const auto& t : ss.profile->timeline) {
      if (t.opcode == NPU_OP_FENCE) fences.emplace_back(t.cmd_index, t.end_cycle);
      if (t.opcode == DRM_NPU_PROFILE_PREEMPT) resumed[t.cmd_index] = t.end_cycle;
    }
    std::sort(fences.begin(), fences.end());
    if (ps.layers.empty() || fences.size() + 1 != ps.layers.size()) continue;
    uint64_t prev = 0;
    for (size_t k = 0; k < ps.layers.size(); ++k) {
      const uint64_t end = k < fences.size() ? fences[k].second : ss.cycles;
      rows.push_back({ps.name, ps.layers[k], end - std::min(prev, end), prev});
      prev = end;
      // A switch at this layer's fence is not the next layer's time.
      if (k < fences.size()) {
        if (const auto r = resumed.find(fences[k].first); r != resumed.end()) prev = r->second;
      }
    }
  }
  return rows;
}

}  // namespace npu
