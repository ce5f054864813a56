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
  const uint32_t n = std::min<uint32_t>(runs[w] - 1, 3);
  uint64_t t[3] = {last[w][0], last[w][1], last[w][2]};
  std::sort(t, t + n);
  return t[(n - 1) / 2];  // of two, the lower: a slowed run is the likelier error
}

bool LaneChoice::lanes(uint64_t key) {
  Job& j = find(key);
  if (j.runs[1] < kFirstRuns && j.runs[1] <= j.runs[0]) return true;
  if (j.runs[0] < kFirstRuns) return false;
  // Lanes unless one thread is clearly faster: within a fifth, the difference is as likely
  // a neighbour's noise, and on a free second core the lanes are the faster way.
  const bool best = j.median(1) * 5 <= j.median(0) * 6;
  if (static_cast<int>(best) != j.choice) {  // the first choice, or the machine changed
    j.choice = best;
    j.probe_every = kProbeEvery;
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
  // The first run of each way is not counted; the others fill a ring of three.
  if (j.runs[w] > 0) j.last[w][(j.runs[w] - 1) % 3] = ns;
  ++j.runs[w];
}

}  // namespace npu::emu
