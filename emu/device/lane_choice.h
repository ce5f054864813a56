// LaneChoice: whether the next run of a large serial job goes on two host lanes (lanes.h) or
// on one thread, chosen by what each way took on the earlier runs of the same job (a model
// runs the same job on every inference). Two lanes pay when the second core is free: an idle
// machine runs ResNet-18 on them about 1.5 times faster. When another process holds that core
// the lanes take turns on one, hand-offs and spinning included, and were up to twice as slow
// as one thread (ResNet-18 int8 at load 3.5: 26 ms against 14 ms per inference). The job's
// first run goes on the lanes and is not counted (it pays the job's first page faults and
// packing); then one thread runs once and the lanes twice, and the way with the lower median of
// its last three counted times runs (the lanes unless one thread is faster by more than a
// fifth; of two times the lower, so one slowed lanes run does not pick one thread), the other
// being tried again after kProbeEvery runs, so a machine whose load changes is followed. One
// thread is tried second, not last: `npu-submit --warmup 2` then times only chosen runs, where
// three one-thread runs among the first six (the earlier rule) put two into the timed ten
// (ResNet-50 and ResNet-18 fp32 took 0.966 and 0.965 of the time with this order). A probe that
// leaves the choice as it was doubles the runs to the next one, up to kProbeMax (the first runs
// count as one: the first probe comes after 2 * kProbeEvery runs); a choice that changes (by a
// probe or by the chosen way's own times) brings them back to kProbeEvery. Each probe of the slower
// way costs what that way is slower (ResNet-18 fp32: one thread about 64 ms against 40 on the
// lanes, so every eighth run paid a twelfth of the job's time again); a machine whose load holds
// still now pays for about one probe in 64 runs. A median, not an average: on a shared virtual
// machine one run in a few is slowed by a neighbour, and an average of two runs (the earlier rule)
// then picked one thread for ResNet-50 fp32 (115 ms per inference against 82 ms on the lanes).
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
  static constexpr uint32_t kProbeEvery = 8;
  static constexpr uint32_t kProbeMax = 64;
  /// Counted runs of each way before the first choice: one thread, the lanes.
  static constexpr uint32_t kFirstRuns[2] = {1, 2};
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
    uint64_t last[2][3] = {};      // [0]: one thread, [1]: two lanes; the last three counted times
    uint32_t counted[2] = {0, 0};  // counted runs of each way
    bool ran_once = false;         // the job's first run (not counted) is over
    uint32_t since_probe = 0;
    uint32_t probe_every = kProbeEvery;  // runs from one probe of the other way to the next
    int choice = -1;                     // the way chosen last: 0 one thread, 1 lanes; -1 none yet
    bool probed = false;                 // the last run was a probe
    /// The median of way w's counted times (of those there are, up to three; of two, the lower).
    uint64_t median(int w) const;
  };
  Job& find(uint64_t key);

  std::array<Job, kJobs> jobs_{};
  uint64_t clock_ = 0;
};

}  // namespace npu::emu
