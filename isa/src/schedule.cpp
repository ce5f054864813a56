// replay() and replay_to_fault(): the device's virtual-time scheduler
// (emu/device/command_processor.cpp and engine_threads.cpp, docs/timing.md) re-implemented as a
// single-threaded simulation. Engines are advanced lazily,
// only as far as the command processor needs (a full queue or a FENCE) and at the end, which
// gives the same times as the threaded device because every time is a function of the program
// alone. With a FaultModel, a command that faults halts its engine (or the command processor):
// everything that would have waited for it starts at or after its fault, so every time the
// replay does compute before the earliest fault is exact.
#include "npu/isa/schedule.h"

#include <algorithm>
#include <string>

#include "npu/isa/opcodes.h"
#include "npu/isa/timing.h"
#include "npu/isa/validate.h"

namespace npu::isa {
namespace {

struct Item {
  uint32_t index;
  uint64_t dispatch;
};

struct EngineSim {
  std::vector<Item> queue;  // every command dispatched to the engine, in order
  size_t next = 0;          // first command not yet executed
  uint64_t clock = 0;
  std::vector<uint64_t> end_times;
  bool halted = false;  // faulted (fault mode): executes nothing more
};

struct Token {
  uint64_t time;
  uint32_t count;
};

// A semaphore's unconsumed signals in signal order: tokens[head..] (a vector, so a replay
// with no signals allocates nothing; consumed tokens are dropped when the queue empties).
struct SemSim {
  uint64_t value = 0;
  std::vector<Token> tokens;
  size_t head = 0;
};

class Replayer {
 public:
  Replayer(std::span<const npu_cmd> cmds, const DeviceConfig& cfg, const FaultModel* faults)
      : cmds_(cmds), cfg_(cfg), faults_(faults) {
    sems_.resize(cfg.num_semaphores);
    sched_.timeline.assign(cmds.size(), CommandTime{UINT32_MAX, 0, 0, 0, 0});
    if (faults_) cp_time_.reserve(cmds.size());
  }

  Expected<Schedule> run();

 private:
  std::string where(uint32_t i) const {
    return "command " + std::to_string(i) + " (" + opcode_name(cmds_[i].hdr.opcode) + ") on " +
           engine_name(cmds_[i].hdr.engine);
  }
  void record(uint32_t i, uint8_t engine, uint64_t start, uint64_t end) {
    sched_.timeline[i] = {i, engine, cmds_[i].hdr.opcode, start, end};
  }
  /// Fault mode: the first fault in virtual time wins, then the lowest command index (the
  /// device's JobState::fault rule).
  void fault(uint32_t kind, uint32_t engine, uint32_t index, uint64_t address, uint64_t time) {
    if (!fault_ || time < fault_time_ || (time == fault_time_ && index < fault_->cmd_index)) {
      fault_ = drm_npu_fault{kind, engine, index, 0, address};
      fault_time_ = time;
    }
  }
  /// Fault mode: the device's operand checks of a data command starting at `start`.
  bool operands_fault(uint8_t e, uint32_t index, uint64_t start);
  /// Executes engine e's dispatched commands until it blocks; true if any progressed.
  Expected<bool> advance(uint8_t e);
  /// Advances all engines until none progresses.
  Expected<void> settle();
  /// Fault mode: cuts the schedule at the fault.
  void cut();

  std::span<const npu_cmd> cmds_;
  const DeviceConfig& cfg_;
  const FaultModel* faults_;
  EngineSim eng_[NPU_NUM_ENGINES];
  std::vector<SemSim> sems_;
  Schedule sched_;
  std::vector<Region> regions_;
  std::optional<drm_npu_fault> fault_;
  uint64_t fault_time_ = 0;
  std::vector<uint64_t> cp_time_;  // fault mode: the CP's cycle after processing command i
};

bool Replayer::operands_fault(uint8_t e, uint32_t index, uint64_t start) {
  const npu_cmd& c = cmds_[index];
  if (!find_opcode(c.hdr.opcode)->data) return false;
  regions_.clear();
  if (!command_regions(c, regions_)) {
    fault(DRM_NPU_FAULT_PARSE, e, index, 0, start);
    return true;
  }
  for (const Region& r : regions_) {
    if (r.space == Space::Sram) {
      if (r.end > cfg_.sram_size) {
        fault(DRM_NPU_FAULT_SRAM_RANGE, e, index, std::max<uint64_t>(r.begin, cfg_.sram_size),
              start);
        return true;
      }
    } else if (faults_->dram_fault) {
      if (const auto at = faults_->dram_fault(r)) {
        fault(DRM_NPU_FAULT_MMU, e, index, *at, start);
        return true;
      }
    }
  }
  return false;
}

Expected<bool> Replayer::advance(uint8_t e) {
  EngineSim& en = eng_[e];
  bool progressed = false;
  while (!en.halted && en.next < en.queue.size()) {
    const Item it = en.queue[en.next];
    const npu_cmd& c = cmds_[it.index];
    const uint64_t start = std::max(en.clock, it.dispatch);
    uint64_t end = start;
    if (faults_ && !opcode_allows_engine(c.hdr.opcode, e)) {
      fault(DRM_NPU_FAULT_PARSE, e, it.index, 0, start);
      en.halted = true;
      break;
    }
    if (c.hdr.opcode == NPU_OP_SEM_WAIT) {
      if (c.sem.sem >= sems_.size() || c.sem.count > cfg_.semaphore_max) {
        if (faults_) {
          fault(DRM_NPU_FAULT_SEMAPHORE, e, it.index, c.sem.sem, start);
          en.halted = true;
          break;
        }
        return make_error(EINVAL, where(it.index) + ": semaphore " + std::to_string(c.sem.sem) +
                                      " or count out of range");
      }
      SemSim& s = sems_[c.sem.sem];
      if (s.value < c.sem.count) break;  // blocked until the signaller progresses
      uint64_t satisfied = 0;
      for (uint32_t need = c.sem.count; need > 0;) {
        Token& t = s.tokens[s.head];
        const uint32_t take = std::min(need, t.count);
        satisfied = std::max(satisfied, t.time);
        t.count -= take;
        need -= take;
        if (t.count == 0 && ++s.head == s.tokens.size()) {
          s.tokens.clear();
          s.head = 0;
        }
      }
      s.value -= c.sem.count;
      end = std::max(start, satisfied);
      sched_.stall += end - start;
    } else {
      const uint64_t cost = command_cost(c, cfg_).cycles;
      end = start + cost;
      if (c.hdr.opcode == NPU_OP_SEM_SIGNAL) {
        if (c.sem.sem >= sems_.size() ||
            sems_[c.sem.sem].value + c.sem.count > cfg_.semaphore_max) {
          if (faults_) {
            fault(DRM_NPU_FAULT_SEMAPHORE, e, it.index, c.sem.sem, end);
            en.halted = true;
            break;
          }
          return make_error(EOVERFLOW, where(it.index) + ": semaphore " +
                                           std::to_string(c.sem.sem) + " overflows");
        }
        sems_[c.sem.sem].value += c.sem.count;
        sems_[c.sem.sem].tokens.push_back({end, c.sem.count});
      } else if (faults_ && operands_fault(e, it.index, start)) {
        en.halted = true;
        break;
      }
      sched_.busy[e] += cost;
    }
    ++sched_.commands[e];
    record(it.index, e, start, end);
    en.clock = end;
    en.end_times.push_back(end);
    ++en.next;
    progressed = true;
  }
  return progressed;
}

Expected<void> Replayer::settle() {
  for (bool any = true; any;) {
    any = false;
    for (uint8_t e = 1; e < NPU_NUM_ENGINES; ++e) {
      auto p = advance(e);
      if (!p) return p.error();
      any = any || *p;
    }
  }
  return ok();
}

Expected<Schedule> Replayer::run() {
  uint64_t cp_clock = 0;
  const uint64_t depth = std::max<uint32_t>(1, cfg_.queue_depth);
  bool ended = false;
  // In fault mode, a command the command processor cannot get past stops it (`break`).
  for (uint32_t i = 0; i < cmds_.size(); ++i) {
    const npu_cmd& c = cmds_[i];
    cp_clock += cfg_.cp_cycles_per_cmd;
    sched_.busy[NPU_ENGINE_CP] += cfg_.cp_cycles_per_cmd;
    if (faults_) cp_time_.push_back(cp_clock);
    const uint8_t e = c.hdr.engine;
    if (e >= NPU_NUM_ENGINES) {
      if (!faults_) return make_error(EINVAL, where(i) + ": unknown engine");
      fault(DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, i, 0, cp_clock);
      ended = true;
      break;
    }
    if (faults_ && faults_->check_commands && !check_command(c, i, cfg_)) {
      fault(DRM_NPU_FAULT_PARSE, e, i, 0, cp_clock);
      ended = true;
      break;
    }
    if (e != NPU_ENGINE_CP) {
      EngineSim& en = eng_[e];
      if (en.queue.size() >= depth) {
        const size_t slot = en.queue.size() - depth;  // the command that frees a queue entry
        if (en.end_times.size() <= slot) NPU_TRY(settle());
        if (en.end_times.size() <= slot) {
          if (faults_) {  // waits for a faulted or hung engine: nothing more is dispatched
            ended = true;
            break;
          }
          return make_error(EDEADLK, "replay: deadlock: " + where(i) +
                                         " waits for a full queue whose oldest command (" +
                                         where(en.queue[slot].index) + ") never finishes");
        }
        cp_clock = std::max(cp_clock, en.end_times[slot]);
      }
      en.queue.push_back({i, cp_clock});
      continue;
    }
    if (c.hdr.opcode == NPU_OP_END) {
      record(i, NPU_ENGINE_CP, cp_clock, cp_clock);
      ended = true;
      break;
    }
    if (c.hdr.opcode == NPU_OP_FENCE) {
      const uint64_t start = cp_clock;
      NPU_TRY(settle());
      bool blocked = false;
      for (uint8_t k = 1; k < NPU_NUM_ENGINES; ++k) {
        if (eng_[k].next < eng_[k].queue.size()) {
          if (!faults_)
            return make_error(EDEADLK, "replay: deadlock: " + where(i) + " waits for " +
                                           where(eng_[k].queue[eng_[k].next].index) +
                                           ", which never completes");
          blocked = true;
        }
        if (!eng_[k].end_times.empty()) cp_clock = std::max(cp_clock, eng_[k].end_times.back());
      }
      if (blocked) {
        ended = true;
        break;
      }
      record(i, NPU_ENGINE_CP, start, cp_clock);
      ++sched_.commands[NPU_ENGINE_CP];
      continue;
    }
    if (c.hdr.opcode == NPU_OP_MARKER || c.hdr.opcode == NPU_OP_NOP) {
      const uint64_t cost = command_cost(c, cfg_).cycles;
      record(i, NPU_ENGINE_CP, cp_clock, cp_clock + cost);
      cp_clock += cost;
      sched_.busy[NPU_ENGINE_CP] += cost;
      ++sched_.commands[NPU_ENGINE_CP];
      continue;
    }
    if (!faults_) return make_error(EINVAL, where(i) + ": not a command-processor command");
    fault(DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, i, 0, cp_clock);
    ended = true;
    break;
  }
  // The device faults a program that runs out without END (only possible unvalidated).
  if (faults_ && !ended)
    fault(DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, static_cast<uint32_t>(cmds_.size()) - 1, 0, cp_clock);
  NPU_TRY(settle());
  sched_.cycles = cp_clock;
  for (uint8_t k = 1; k < NPU_NUM_ENGINES; ++k) {
    if (!faults_ && eng_[k].next < eng_[k].queue.size())
      return make_error(EDEADLK, "replay: deadlock: " + where(eng_[k].queue[eng_[k].next].index) +
                                     " waits for a semaphore that is never signalled enough");
    sched_.cycles = std::max(sched_.cycles, eng_[k].clock);
  }
  if (fault_) cut();
  std::erase_if(sched_.timeline, [](const CommandTime& t) { return t.index == UINT32_MAX; });
  return std::move(sched_);
}

void Replayer::cut() {
  const uint64_t at = fault_time_;
  sched_.cycles = at;
  sched_.fault = fault_;
  sched_.busy = {};
  sched_.commands = {};
  sched_.stall = 0;
  for (const uint64_t t : cp_time_)
    if (t <= at) sched_.busy[NPU_ENGINE_CP] += cfg_.cp_cycles_per_cmd;
  for (CommandTime& t : sched_.timeline) {
    if (t.index == UINT32_MAX) continue;
    // Kept: started before the fault and ended by it. A command in flight at the fault did
    // not complete.
    if (t.start >= at || t.end > at) {
      t.index = UINT32_MAX;
      continue;
    }
    const bool cp = t.engine == NPU_ENGINE_CP;
    if (t.opcode == NPU_OP_SEM_WAIT) {
      sched_.stall += t.end - t.start;
    } else if (t.opcode != NPU_OP_FENCE) {
      sched_.busy[t.engine] += t.end - t.start;
    }
    if (!cp || t.opcode != NPU_OP_END) ++sched_.commands[t.engine];
  }
}

}  // namespace

Expected<Schedule> replay(std::span<const npu_cmd> cmds, const DeviceConfig& cfg) {
  return Replayer(cmds, cfg, nullptr).run();
}

Schedule replay_to_fault(std::span<const npu_cmd> cmds, const DeviceConfig& cfg,
                         const FaultModel& model) {
  auto s = Replayer(cmds, cfg, &model).run();
  // Fault mode reports every problem as a fault, so run() cannot fail.
  return s ? std::move(*s) : Schedule{};
}

}  // namespace npu::isa
