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

bool LaneChoice::lanes(uint64_t key) {
  Job& j = find(key);
  // Each way twice first (the first run of a job also pays its page faults), lanes first.
  if (j.runs[1] < 2 && j.runs[1] <= j.runs[0]) return true;
  if (j.runs[0] < 2) return false;
  const bool best = j.avg[1] <= j.avg[0];
  if (++j.since_probe >= kProbeEvery) {
    j.since_probe = 0;
    return !best;
  }
  return best;
}

void LaneChoice::ran(uint64_t key, bool on_lanes, uint64_t ns) {
  Job& j = find(key);
  const int w = on_lanes ? 1 : 0;
  const auto t = static_cast<double>(ns);
  // The second run replaces the first (a cold one); later runs move the average halfway.
  j.avg[w] = j.runs[w] < 2 ? t : (j.avg[w] + t) / 2;
  ++j.runs[w];
}

}  // namespace npu::emu
