// LaneChoice: whether the next run of a large serial job goes on two host lanes (lanes.h) or
// on one thread, chosen by what each way took on the earlier runs of the same job (a model
// runs the same job on every inference). Two lanes pay when the second core is free: an idle
// machine runs ResNet-18 on them about 1.5 times faster. When another process holds that core
// the lanes take turns on one, hand-offs and spinning included, and were up to twice as slow
// as one thread (ResNet-18 int8 at load 3.5: 26 ms against 14 ms per inference). Each way is
// timed at least twice per job, then the faster one (a moving average of its times) runs, the
// other being tried again every kProbeEvery runs, so a machine whose load changes is followed.
// Results and cycles do not depend on the choice (the lanes end as the serial order does).
//
// Threading: used by one thread at a time (the device's run lock). Lifetime: owned by the
// device; it remembers the last kJobs jobs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace npu::emu {

class LaneChoice {
 public:
  static constexpr uint32_t kProbeEvery = 16;
  static constexpr size_t kJobs = 8;

  /// Whether job `key` (anything that tells jobs apart: its modeled cycles and command count)
  /// runs on two lanes next.
  bool lanes(uint64_t key);
  /// Job `key` took `ns` of host time, on two lanes or on one thread.
  void ran(uint64_t key, bool on_lanes, uint64_t ns);

 private:
  struct Job {
    uint64_t key = 0;
    uint64_t last_use = 0;
    double avg[2] = {0, 0};  // [0]: one thread, [1]: two lanes
    uint32_t runs[2] = {0, 0};
    uint32_t since_probe = 0;
  };
  Job& find(uint64_t key);

  std::array<Job, kJobs> jobs_{};
  uint64_t clock_ = 0;
};

}  // namespace npu::emu
