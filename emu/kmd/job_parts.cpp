// add_part() and add_switch() (job_parts.h).
#include "job_parts.h"

#include <algorithm>
#include <iterator>

namespace npu::emu::kmd {

void add_part(JobProfile& job, JobProfile&& part) {
  const uint64_t at = job.cycles;
  job.cycles += part.cycles;
  add_statistics(job, part);
  ProfileTimeline::Entries& timeline = job.timeline.mutate();
  timeline.reserve(timeline.size() + part.timeline.size());
  for (drm_npu_cmd_profile e : part.timeline) {
    e.start_cycle += at;
    e.end_cycle += at;
    timeline.push_back(e);
  }
  job.irq_values.insert(job.irq_values.end(), part.irq_values.begin(), part.irq_values.end());
  // A safe point is a FENCE: no hazard pairs a command before it with one after it, so the
  // parts' lists, each sorted, concatenate in order.
  RaceReport& r = job.race;
  r.checked = r.checked || part.race.checked;
  r.partial = r.partial || part.race.partial;
  r.total += part.race.total;
  const size_t room = DRM_NPU_MAX_HAZARDS - std::min<size_t>(DRM_NPU_MAX_HAZARDS, r.hazards.size());
  const size_t n = std::min(room, part.race.hazards.size());
  r.hazards.insert(r.hazards.end(), part.race.hazards.begin(),
                   part.race.hazards.begin() + static_cast<std::ptrdiff_t>(n));
  job.preemptions += part.preemptions;
  job.preempt_cycles += part.preempt_cycles;
}

void add_switch(JobProfile& job, uint32_t safe_point, uint64_t cycles) {
  drm_npu_cmd_profile e{};
  e.cmd_index = safe_point;
  e.engine = NPU_ENGINE_CP;
  e.opcode = DRM_NPU_PROFILE_PREEMPT;
  e.start_cycle = job.cycles;
  e.end_cycle = job.cycles + cycles;
  job.timeline.mutate().push_back(e);
  job.cycles += cycles;
  ++job.preemptions;
  job.preempt_cycles += cycles;
}

}  // namespace npu::emu::kmd
