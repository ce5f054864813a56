// Two host lanes for a serial job (see lanes.h).
#include "lanes.h"

#include <chrono>

#include "lane_schedule.h"
#include "npu/emu/spin_wait.h"
#include "parallel.h"

namespace npu::emu {

namespace {

constexpr uint32_t kQuit = UINT32_MAX;

/// The lanes keep both cores busy: a GEMM on a lane is never shared with the kernels' worker
/// (a third thread on two cores). Sharing only while the other lane idled cost more than it
/// gave: ResNet-50 88.8-93.4 ms per inference with it, 84.6-85.9 ms without, alternating.
const std::atomic<bool> kLanesBusy{true};

/// How long a lane polls before it parks when it has nothing to run (and, inside a run, how
/// long it polls between checks of the run's waits): a compiler tile takes tens of
/// microseconds, and a futex wake-up on each hand-off costs more than the spin.
constexpr std::chrono::microseconds kLaneSpin{200};

/// Waits beyond its schedule's makespan a run tolerates before it drains.
constexpr uint64_t kDrainSlack = 2'000'000;

uint64_t ns_since(std::chrono::steady_clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t)
          .count());
}

/// Whether position a is at or past position b (positions wrap around 2^32).
bool reached(uint32_t a, uint32_t b) {
  return static_cast<int32_t>(a - b) >= 0;
}

}  // namespace

Lanes::~Lanes() {
  if (!thread_.joinable()) return;
  push(1, kQuit, 0);
  thread_.join();
}

void Lanes::push(int lane, uint32_t entry, uint32_t dep) {
  Queue& q = q_[lane];
  const uint32_t t = q.tail.load(std::memory_order_relaxed);
  q.entry[t & (kRing - 1)] = entry;
  q.dep[t & (kRing - 1)] = dep;
  // A read-modify-write before the notify, as WaitWord's protocol asks (wait_word.h): then a
  // lane parking at that moment either sees the new tail or is woken.
  q.tail.fetch_add(1, std::memory_order_acq_rel);
  if (lane == 1) q.tail.notify_one();  // a futex wake only when lane 1 parked
}

void Lanes::execute(int lane, uint32_t pos) {
  Queue& q = q_[lane];
  const uint32_t entry = q.entry[pos & (kRing - 1)];
  if (!stop_.load(std::memory_order_relaxed) && !drain_.load(std::memory_order_acquire)) {
    if ((*run_)(entry, lane))
      done_[entry] = 1;
    else
      stop_.store(true, std::memory_order_relaxed);
    if (lane == 1) lane1_total_.fetch_add(1, std::memory_order_relaxed);
  }
  q.completed.fetch_add(1, std::memory_order_acq_rel);  // to pos + 1; a RMW as in push()
  q.completed.notify_one();  // a futex wake only when the other lane parked on it
}

bool Lanes::may_start(int lane, uint32_t dep) const {
  // After a stop nothing runs, and the other lane may never be given the command waited for.
  return reached(q_[1 - lane].completed.load(std::memory_order_acquire), dep) ||
         stop_.load(std::memory_order_acquire);
}

template <class Ready>
void Lanes::wait_in_run(Ready&& ready) {
  if (ready()) return;
  const auto t0 = std::chrono::steady_clock::now();
  while (
      !spin_until([&] { return ready() || drain_.load(std::memory_order_acquire); }, kLaneSpin)) {
    if (waited_ns_.load(std::memory_order_relaxed) + ns_since(t0) > drain_after_ns_) {
      drain_.store(true, std::memory_order_release);
      break;
    }
  }
  waited_ns_.fetch_add(ns_since(t0), std::memory_order_relaxed);
}

void Lanes::finish_alone(std::span<const LaneCommand> cmds) {
  Queue& mine = q_[0];
  while (mine.completed.load(std::memory_order_relaxed) !=
         mine.tail.load(std::memory_order_relaxed))
    execute(0, mine.completed.load(std::memory_order_relaxed));  // hands them back unrun
  const uint32_t all = q_[1].tail.load(std::memory_order_relaxed);
  spin_then_wait(
      q_[1].completed,
      [&] { return reached(q_[1].completed.load(std::memory_order_acquire), all); }, kLaneSpin);
  for (uint32_t i = 0; i < cmds.size() && !stop_.load(std::memory_order_relaxed); ++i) {
    if (done_[i] != 0) continue;
    if ((*run_)(i, 0))
      done_[i] = 1;
    else
      stop_.store(true, std::memory_order_relaxed);
  }
  drained_total_.fetch_add(1, std::memory_order_relaxed);
}

void Lanes::loop() {
  const kern::SplitUnlessBusy no_split(kLanesBusy);
  Queue& q = q_[1];
  for (uint32_t head = q.completed.load(std::memory_order_relaxed);; ++head) {
    spin_then_wait(
        q.tail, [&] { return q.tail.load(std::memory_order_acquire) != head; }, kLaneSpin);
    if (q.entry[head & (kRing - 1)] == kQuit) return;
    const uint32_t dep = q.dep[head & (kRing - 1)];
    wait_in_run([&] { return may_start(1, dep); });
    execute(1, head);
  }
}

std::span<const uint8_t> Lanes::run(std::span<const LaneCommand> cmds,
                                    std::span<const LaneRegion> regions,
                                    const std::function<bool(uint32_t, int)>& run,
                                    const LaneSchedule* schedule) {
  LaneSchedule own;
  if (schedule == nullptr) {
    own = schedule_lanes(cmds, regions);
    schedule = &own;
  }
  // Lane 1 is idle here (the previous run waited for it): the run's fields may change.
  run_ = &run;
  done_.assign(cmds.size(), 0);
  stop_.store(false, std::memory_order_relaxed);
  drain_.store(false, std::memory_order_relaxed);
  waited_ns_.store(0, std::memory_order_relaxed);
  drain_after_ns_ = schedule->makespan + kDrainSlack;
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });

  const kern::SplitUnlessBusy no_split(kLanesBusy);
  // The schedule counts each lane's commands from 0; the rings count from the Lanes' start.
  const uint32_t base[2] = {q_[0].tail.load(std::memory_order_relaxed),
                            q_[1].tail.load(std::memory_order_relaxed)};
  size_t next[2] = {0, 0};
  Queue& mine = q_[0];
  while (!drain_.load(std::memory_order_acquire)) {
    for (int lane = 0; lane < 2 && !stop_.load(std::memory_order_relaxed); ++lane) {
      const Queue& q = q_[lane];
      const std::vector<uint32_t>& order = schedule->order[lane];
      while (next[lane] < order.size() &&
             q.tail.load(std::memory_order_relaxed) - q.completed.load(std::memory_order_acquire) <
                 kRing) {
        push(lane, order[next[lane]], base[1 - lane] + schedule->wait[lane][next[lane]]);
        ++next[lane];
      }
    }
    const uint32_t head = mine.completed.load(std::memory_order_relaxed);
    const bool all = stop_.load(std::memory_order_relaxed) ||
                     (next[0] == schedule->order[0].size() && next[1] == schedule->order[1].size());
    if (head != mine.tail.load(std::memory_order_relaxed)) {
      const uint32_t dep = mine.dep[head & (kRing - 1)];
      // Run lane 0's next command once lane 1 has the one it waits for and ran it; while that
      // one is not in lane 1's ring yet, wait for room there (its earlier commands wait only
      // for lane 0's that are done) and fill it.
      if (all || reached(q_[1].tail.load(std::memory_order_relaxed), dep)) {
        wait_in_run([&] { return may_start(0, dep); });
        execute(0, head);
        continue;
      }
    } else if (all) {
      break;
    }
    // Lane 1's ring is full (with what lane 0 runs next waiting for a command behind them,
    // or with lane 0 having nothing): wait for a free place.
    const uint32_t room = q_[1].tail.load(std::memory_order_relaxed) - kRing + 1;
    wait_in_run([&] {
      return reached(q_[1].completed.load(std::memory_order_acquire), room) ||
             stop_.load(std::memory_order_acquire);
    });
  }
  const uint32_t all = q_[1].tail.load(std::memory_order_relaxed);
  wait_in_run([&] { return reached(q_[1].completed.load(std::memory_order_acquire), all); });
  if (drain_.load(std::memory_order_acquire)) finish_alone(cmds);
  return done_;
}

}  // namespace npu::emu
