// Two host lanes or one thread, by measurement (lane_choice.h).
#include "lane_choice.h"

#include <algorithm>

namespace npu::emu {

LaneChoice::Job& LaneChoice::find(uint64_t key) {
  ++clock_;
  Job* oldest = &jobs_[0];
  for (Job& j : jobs_) {
    if (j.last_use != 0 && j.key == key) {
      j.last_use = clock_;
      return j;
    }
    if (j.last_use < oldest->last_use) oldest = &j;
  }
  *oldest = Job{};  // a new job takes the least recently used place
  oldest->key = key;
  oldest->last_use = clock_;
  return *oldest;
}

uint64_t LaneChoice::Job::median(int w) const {
  const uint32_t n = std::min<uint32_t>(counted[w], 3);
  uint64_t t[3] = {last[w][0], last[w][1], last[w][2]};
  std::sort(t, t + n);
  return t[(n - 1) / 2];  // of two, the lower: a slowed run is the likelier error
}

bool LaneChoice::lanes(uint64_t key) {
  Job& j = find(key);
  if (!j.ran_once) return true;  // the cold first run
  if (j.counted[0] < kFirstRuns[0]) return false;
  if (j.counted[1] < kFirstRuns[1]) return true;
  // Lanes unless one thread is clearly faster: within a fifth, the difference is as likely
  // a neighbour's noise, and on a free second core the lanes are the faster way.
  const bool best = j.median(1) * 5 <= j.median(0) * 6;
  if (static_cast<int>(best) != j.choice) {  // the first choice, or the machine changed
    // The first runs tried both ways, as a probe does that confirms the choice.
    j.probe_every = j.choice < 0 ? 2 * kProbeEvery : kProbeEvery;
    j.choice = best;
    j.since_probe = 0;
  } else if (j.probed) {  // the other way was tried and is still the slower
    j.probe_every = std::min(2 * j.probe_every, kProbeMax);
  }
  j.probed = false;
  if (++j.since_probe >= j.probe_every) {
    j.since_probe = 0;
    j.probed = true;
    return !best;
  }
  return best;
}

void LaneChoice::ran(uint64_t key, bool on_lanes, uint64_t ns) {
  Job& j = find(key);
  const int w = on_lanes ? 1 : 0;
  // The job's first run is not counted; the others fill a ring of three per way.
  if (!j.ran_once) {
    j.ran_once = true;
    return;
  }
  j.last[w][j.counted[w] % 3] = ns;
  ++j.counted[w];
}

}  // namespace npu::emu
