// Two host lanes for a serial job (see lanes.h).
#include "lanes.h"

#include <algorithm>

#include "npu/emu/spin_wait.h"
#include "parallel.h"

namespace npu::emu {

namespace {

constexpr uint32_t kQuit = UINT32_MAX;

/// The lanes keep both cores busy: a GEMM on a lane is never shared with the kernels' worker
/// (a third thread on two cores). Sharing only while the other lane idled cost more than it
/// gave: ResNet-50 88.8-93.4 ms per inference with it, 84.6-85.9 ms without, alternating.
const std::atomic<bool> kLanesBusy{true};

/// How long a lane polls before it parks: a compiler tile takes tens of microseconds, and a
/// futex wake-up on each hand-off costs more than the spin.
constexpr std::chrono::microseconds kLaneSpin{200};

bool conflict(const LaneRegion& a, const LaneRegion& b) {
  return a.sram == b.sram && (a.write || b.write) && a.begin < b.end && b.begin < a.end;
}

/// Whether position a is at or past position b (positions wrap around 2^32).
bool reached(uint32_t a, uint32_t b) {
  return static_cast<int32_t>(a - b) >= 0;
}

}  // namespace

Lanes::Lanes(uint64_t sram_size)
    : writer_((sram_size >> kPageShift) + 1, int8_t{-1}),
      toucher_((sram_size >> kPageShift) + 1, int8_t{-1}) {}

Lanes::~Lanes() {
  if (!thread_.joinable()) return;
  push(1, kQuit, 0, 0);
  thread_.join();
}

void Lanes::push(int lane, uint32_t entry, uint32_t dep, uint64_t finish) {
  Queue& q = q_[lane];
  const uint32_t t = q.tail.load(std::memory_order_relaxed);
  q.entry[t & (kRing - 1)] = entry;
  q.dep[t & (kRing - 1)] = dep;
  q.finish[t & (kRing - 1)] = finish;
  q.tail.store(t + 1, std::memory_order_release);
  if (lane == 1) q.tail.notify_one();  // a futex wake only when lane 1 parked
}

void Lanes::execute(int lane, uint32_t pos) {
  Queue& q = q_[lane];
  const uint32_t entry = q.entry[pos & (kRing - 1)];
  if (!stop_.load(std::memory_order_relaxed)) {
    if ((*run_)(entry, lane))
      done_[entry] = 1;
    else
      stop_.store(true, std::memory_order_relaxed);
    if (lane == 1) lane1_total_.fetch_add(1, std::memory_order_relaxed);
  }
  q.completed.store(pos + 1, std::memory_order_release);
  q.completed.notify_one();  // a futex wake only when the other lane parked on it
}

void Lanes::loop() {
  const kern::SplitUnlessBusy no_split(kLanesBusy);
  Queue& q = q_[1];
  for (uint32_t head = q.completed.load(std::memory_order_relaxed);; ++head) {
    spin_then_wait(
        q.tail, [&] { return q.tail.load(std::memory_order_acquire) != head; }, kLaneSpin);
    if (q.entry[head & (kRing - 1)] == kQuit) return;
    const uint32_t dep = q.dep[head & (kRing - 1)];
    spin_then_wait(
        q_[0].completed,
        [&] { return reached(q_[0].completed.load(std::memory_order_acquire), dep); }, kLaneSpin);
    execute(1, head);
  }
}

Lanes::Choice Lanes::pick(const LaneCommand& c) const {
  // Pages the other core holds: read pages it wrote last (their lines are modified there) and
  // written pages it touched last (its copies must be invalidated).
  uint64_t remote[2] = {0, 0};  // pages lane l would pull from the other lane
  for (uint32_t r = c.first; r < c.first + c.count; ++r) {
    const LaneRegion& g = regions_[r];
    if (!g.sram || g.end <= g.begin) continue;
    const std::vector<int8_t>& owner = g.write ? toucher_ : writer_;
    for (uint64_t p = g.begin >> kPageShift; p <= (g.end - 1) >> kPageShift; ++p) {
      const int8_t o = owner[p];
      if (o >= 0) ++remote[1 - o];
    }
  }
  Choice best;
  for (int lane = 0; lane < 2; ++lane) {
    Choice ch;
    ch.lane = lane;
    ch.dep = dependency(c, lane);
    // It starts when its lane is free and the other lane's command it waits for has ended.
    uint64_t start = free_at_[lane];
    const Queue& other = q_[1 - lane];
    if (ch.dep != other.completed.load(std::memory_order_relaxed))
      start = std::max(start, other.finish[(ch.dep - 1) & (kRing - 1)]);
    ch.finish = start + c.cost + remote[lane] * kRemotePageCost;
    if (lane == 0 || ch.finish < best.finish) best = ch;
  }
  return best;
}

void Lanes::commit(const LaneCommand& c, const Choice& ch) {
  const auto lane = static_cast<int8_t>(ch.lane);
  for (uint32_t r = c.first; r < c.first + c.count; ++r) {
    const LaneRegion& g = regions_[r];
    if (!g.sram || g.end <= g.begin) continue;
    for (uint64_t p = g.begin >> kPageShift; p <= (g.end - 1) >> kPageShift; ++p) {
      toucher_[p] = lane;
      if (g.write) writer_[p] = lane;
    }
  }
  free_at_[ch.lane] = ch.finish;
}

uint32_t Lanes::dependency(const LaneCommand& c, int lane) const {
  const Queue& other = q_[1 - lane];
  // The other lane's planned commands not yet known finished (the planner wrote them all).
  const uint32_t fin = other.completed.load(std::memory_order_acquire);
  for (uint32_t pos = other.tail.load(std::memory_order_relaxed); pos != fin; --pos) {
    const LaneCommand& q = cmds_[other.entry[(pos - 1) & (kRing - 1)]];
    for (uint32_t a = c.first; a < c.first + c.count; ++a)
      for (uint32_t b = q.first; b < q.first + q.count; ++b)
        if (conflict(regions_[a], regions_[b])) return pos;
  }
  return fin;
}

std::span<const uint8_t> Lanes::run(std::span<const LaneCommand> cmds,
                                    std::span<const LaneRegion> regions,
                                    const std::function<bool(uint32_t, int)>& run) {
  // Lane 1 is idle here (the previous run waited for it): the run's fields may change.
  cmds_ = cmds;
  regions_ = regions;
  run_ = &run;
  done_.assign(cmds.size(), 0);
  stop_.store(false, std::memory_order_relaxed);
  free_at_[0] = free_at_[1] = 0;
  std::fill(writer_.begin(), writer_.end(), int8_t{-1});
  std::fill(toucher_.begin(), toucher_.end(), int8_t{-1});
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });

  const kern::SplitUnlessBusy no_split(kLanesBusy);
  Queue& mine = q_[0];
  const auto n = static_cast<uint32_t>(cmds.size());
  uint32_t planned = 0;
  for (;;) {
    // Plan ahead while both rings have room.
    while (planned < n && !stop_.load(std::memory_order_relaxed)) {
      const LaneCommand& c = cmds[planned];
      const Choice ch = pick(c);
      const Queue& q = q_[ch.lane];
      if (q.tail.load(std::memory_order_relaxed) - q.completed.load(std::memory_order_acquire) >=
          kRing)
        break;
      commit(c, ch);
      push(ch.lane, planned, ch.dep, ch.finish);
      ++planned;
    }
    const uint32_t head = mine.completed.load(std::memory_order_relaxed);
    if (head != mine.tail.load(std::memory_order_relaxed)) {  // run lane 0's next command
      const uint32_t dep = mine.dep[head & (kRing - 1)];
      spin_then_wait(
          q_[1].completed,
          [&] { return reached(q_[1].completed.load(std::memory_order_acquire), dep); }, kLaneSpin);
      execute(0, head);
      continue;
    }
    if (planned == n || stop_.load(std::memory_order_relaxed)) break;
    // Lane 0 has nothing and lane 1's ring is full: wait for a free place.
    const uint32_t room = q_[1].tail.load(std::memory_order_relaxed) - kRing + 1;
    spin_then_wait(
        q_[1].completed,
        [&] { return reached(q_[1].completed.load(std::memory_order_acquire), room); }, kLaneSpin);
  }
  const uint32_t all = q_[1].tail.load(std::memory_order_relaxed);
  spin_then_wait(
      q_[1].completed,
      [&] { return reached(q_[1].completed.load(std::memory_order_acquire), all); }, kLaneSpin);
  return done_;
}

}  // namespace npu::emu
