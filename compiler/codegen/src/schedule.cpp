// replay(): the device's virtual-time scheduler (emu/device/device.cpp, docs/timing.md)
// re-implemented as a single-threaded simulation. Engines are advanced lazily, only as far as
// the command processor needs (a full queue or a FENCE) and at the end, which gives the same
// times as the threaded device because every time is a function of the program alone.
#include "npu/codegen/schedule.h"

#include <algorithm>
#include <deque>
#include <string>

#include "npu/isa/timing.h"
#include "npu/isa/validate.h"

namespace npu::codegen {
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
};

struct Token {
  uint64_t time;
  uint32_t count;
};

struct SemSim {
  uint64_t value = 0;
  std::deque<Token> tokens;
};

class Replayer {
 public:
  Replayer(std::span<const npu_cmd> cmds, const isa::DeviceConfig& cfg) : cmds_(cmds), cfg_(cfg) {
    sems_.resize(cfg.num_semaphores);
    sched_.timeline.assign(cmds.size(), CommandTime{UINT32_MAX, 0, 0, 0, 0});
  }

  Expected<Schedule> run();

 private:
  std::string where(uint32_t i) const {
    return "command " + std::to_string(i) + " (" + isa::opcode_name(cmds_[i].hdr.opcode) + ") on " +
           isa::engine_name(cmds_[i].hdr.engine);
  }
  void record(uint32_t i, uint8_t engine, uint64_t start, uint64_t end) {
    sched_.timeline[i] = {i, engine, cmds_[i].hdr.opcode, start, end};
  }
  /// Executes engine e's dispatched commands until it blocks; true if any progressed.
  Expected<bool> advance(uint8_t e);
  /// Advances all engines until none progresses.
  Expected<void> settle();

  std::span<const npu_cmd> cmds_;
  const isa::DeviceConfig& cfg_;
  EngineSim eng_[NPU_NUM_ENGINES];
  std::vector<SemSim> sems_;
  Schedule sched_;
};

Expected<bool> Replayer::advance(uint8_t e) {
  EngineSim& en = eng_[e];
  bool progressed = false;
  while (en.next < en.queue.size()) {
    const Item it = en.queue[en.next];
    const npu_cmd& c = cmds_[it.index];
    const uint64_t start = std::max(en.clock, it.dispatch);
    uint64_t end = start;
    if (c.hdr.opcode == NPU_OP_SEM_WAIT) {
      if (c.sem.sem >= sems_.size() || c.sem.count > cfg_.semaphore_max)
        return make_error(EINVAL, where(it.index) + ": semaphore " + std::to_string(c.sem.sem) +
                                      " or count out of range");
      SemSim& s = sems_[c.sem.sem];
      if (s.value < c.sem.count) break;  // blocked until the signaller progresses
      uint64_t satisfied = 0;
      for (uint32_t need = c.sem.count; need > 0;) {
        Token& t = s.tokens.front();
        const uint32_t take = std::min(need, t.count);
        satisfied = std::max(satisfied, t.time);
        t.count -= take;
        need -= take;
        if (t.count == 0) s.tokens.pop_front();
      }
      s.value -= c.sem.count;
      end = std::max(start, satisfied);
      sched_.stall += end - start;
    } else {
      const uint64_t cost = isa::command_cost(c, cfg_).cycles;
      end = start + cost;
      sched_.busy[e] += cost;
      if (c.hdr.opcode == NPU_OP_SEM_SIGNAL) {
        if (c.sem.sem >= sems_.size() || sems_[c.sem.sem].value + c.sem.count > cfg_.semaphore_max)
          return make_error(EOVERFLOW, where(it.index) + ": semaphore " +
                                           std::to_string(c.sem.sem) + " overflows");
        sems_[c.sem.sem].value += c.sem.count;
        sems_[c.sem.sem].tokens.push_back({end, c.sem.count});
      }
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
  for (uint32_t i = 0; i < cmds_.size(); ++i) {
    const npu_cmd& c = cmds_[i];
    cp_clock += cfg_.cp_cycles_per_cmd;
    sched_.busy[NPU_ENGINE_CP] += cfg_.cp_cycles_per_cmd;
    const uint8_t e = c.hdr.engine;
    if (e >= NPU_NUM_ENGINES) return make_error(EINVAL, where(i) + ": unknown engine");
    if (e != NPU_ENGINE_CP) {
      EngineSim& en = eng_[e];
      if (en.queue.size() >= depth) {
        const size_t slot = en.queue.size() - depth;  // the command that frees a queue entry
        if (en.end_times.size() <= slot) NPU_TRY(settle());
        if (en.end_times.size() <= slot)
          return make_error(EDEADLK, "replay: deadlock: " + where(i) +
                                         " waits for a full queue whose oldest command (" +
                                         where(en.queue[slot].index) + ") never finishes");
        cp_clock = std::max(cp_clock, en.end_times[slot]);
      }
      en.queue.push_back({i, cp_clock});
      continue;
    }
    if (c.hdr.opcode == NPU_OP_END) {
      record(i, NPU_ENGINE_CP, cp_clock, cp_clock);
      break;
    }
    if (c.hdr.opcode == NPU_OP_FENCE) {
      const uint64_t start = cp_clock;
      NPU_TRY(settle());
      for (uint8_t k = 1; k < NPU_NUM_ENGINES; ++k) {
        if (eng_[k].next < eng_[k].queue.size())
          return make_error(EDEADLK, "replay: deadlock: " + where(i) + " waits for " +
                                         where(eng_[k].queue[eng_[k].next].index) +
                                         ", which never completes");
        if (!eng_[k].end_times.empty()) cp_clock = std::max(cp_clock, eng_[k].end_times.back());
      }
      record(i, NPU_ENGINE_CP, start, cp_clock);
      ++sched_.commands[NPU_ENGINE_CP];
      continue;
    }
    if (c.hdr.opcode == NPU_OP_MARKER || c.hdr.opcode == NPU_OP_NOP) {
      const uint64_t cost = isa::command_cost(c, cfg_).cycles;
      record(i, NPU_ENGINE_CP, cp_clock, cp_clock + cost);
      cp_clock += cost;
      sched_.busy[NPU_ENGINE_CP] += cost;
      ++sched_.commands[NPU_ENGINE_CP];
      continue;
    }
    return make_error(EINVAL, where(i) + ": not a command-processor command");
  }
  NPU_TRY(settle());
  sched_.cycles = cp_clock;
  for (uint8_t k = 1; k < NPU_NUM_ENGINES; ++k) {
    if (eng_[k].next < eng_[k].queue.size())
      return make_error(EDEADLK, "replay: deadlock: " + where(eng_[k].queue[eng_[k].next].index) +
                                     " waits for a semaphore that is never signalled enough");
    sched_.cycles = std::max(sched_.cycles, eng_[k].clock);
  }
  std::erase_if(sched_.timeline, [](const CommandTime& t) { return t.index == UINT32_MAX; });
  return std::move(sched_);
}

}  // namespace

Expected<Schedule> replay(std::span<const npu_cmd> cmds, const isa::DeviceConfig& cfg) {
  return Replayer(cmds, cfg).run();
}

}  // namespace npu::codegen
