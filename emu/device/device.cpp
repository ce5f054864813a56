// Device: a command-processor thread and one thread per engine.
//
// Virtual time (docs/timing.md). The CP charges cfg.cp_cycles_per_cmd per command and stamps
// each dispatched command with its dispatch time. An engine starts a command at
// max(engine clock, dispatch time) and ends it cost cycles later (isa::command_cost); a
// SEM_WAIT ends at max(start, time of the signal that completed its count); a FENCE moves
// the CP clock to the latest engine clock once every engine drained; a full engine queue
// stalls the CP until the command queue_depth places earlier on that engine ended. Every one
// of these times is a function of the program alone, so cycle counts do not depend on how
// the host schedules the threads.
//
// Under the synchronization checker (JobOptions::racecheck, racecheck.h) every engine also
// keeps a vector clock: it joins the clock of the signal that completed each SEM_WAIT and,
// for the first command dispatched after a FENCE, the clock the CP formed at the fence (the
// join of every drained engine); each data command is logged with its clock and operand
// regions, and the hazards are found after the job; data commands take turns (data_mu), so a
// racy buffer races on no host memory. None of this touches virtual time.
#include "npu/emu/device.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <thread>

#include "job_state.h"
#include "npu/emu/kernels.h"
#include "npu/isa/opcodes.h"
#include "npu/isa/regions.h"
#include "npu/isa/timing.h"
#include "npu/log.h"
#include "racecheck.h"

namespace npu::emu {

namespace {

/// The device model's logger; like the kernel driver's, quiet below error by default (the
/// kernel's warnings go to dmesg, not the application's stderr).
spdlog::logger& device_log() {
  return npu::logger("npu-device", LogLevel::kError);
}

}  // namespace

namespace {

constexpr uint32_t kEndOfJob = UINT32_MAX;
constexpr uint32_t kShutdown = UINT32_MAX - 1;

struct QueueItem {
  uint32_t index;
  uint32_t epoch;  // FENCEs the CP passed before dispatching it (racecheck)
  uint64_t dispatch;
};

/// Statistics one engine gathers during a job (written by that engine's thread only).
struct EngineStats {
  uint64_t busy = 0;
  uint64_t commands = 0;
  uint64_t dma_in = 0;
  uint64_t dma_out = 0;
  uint64_t macs = 0;
  uint64_t elements = 0;
  uint64_t stall = 0;
};

struct Engine {
  uint32_t id = 0;
  std::thread thread;
  std::condition_variable cv;  // queue not empty
  std::deque<QueueItem> queue;
  // Per-job progress, guarded by Impl::mu.
  uint64_t finished = 0;
  std::vector<uint64_t> end_times;  // end cycle of each finished command, engine order
  bool done = false;
  // Engine thread only.
  uint64_t clock = 0;
  EngineStats stats;
  // Racecheck state (engine thread only): vector clock, commands executed, last fence joined.
  VectorClock vc{};
  uint32_t position = 0;
  uint32_t epoch = 0;
};

}  // namespace

struct Device::Impl {
  explicit Impl(const isa::DeviceConfig& c) : cfg(c), sram(c.sram_size) {}

  const isa::DeviceConfig& cfg;
  std::vector<std::byte> sram;
  JobState job;

  std::mutex run_mu;  // serialises run()

  std::mutex mu;                    // guards everything below and Engine's per-job progress
  std::condition_variable cp_cv;    // engine progress, job hand-off
  std::condition_variable done_cv;  // job finished
  Engine engines[NPU_NUM_ENGINES];
  std::thread cp_thread;
  bool shutdown = false;
  bool running = false;  // a job is between hand-off and completion
  const isa::Program* program = nullptr;
  const Mmu* mmu = nullptr;
  JobResult result;
  bool result_ready = false;
  // The synchronization checker: on for this job; the CP's clock (changed only at a FENCE,
  // while every engine is drained) and its FENCE count.
  bool racecheck = false;
  std::function<void(uint32_t, uint32_t)> before_command;  // JobOptions::before_command
  RaceChecker race;
  std::mutex data_mu;  // under racecheck, held while a data command touches SRAM and DRAM
  VectorClock cp_vc{};
  uint32_t epoch = 0;

  void start() {
    for (uint32_t e = 1; e < NPU_NUM_ENGINES; ++e) {
      engines[e].id = e;
      engines[e].thread = std::thread([this, e] { engine_loop(engines[e]); });
    }
    cp_thread = std::thread([this] { cp_loop(); });
  }

  void stop() {
    {
      std::lock_guard lk(mu);
      shutdown = true;
      for (uint32_t e = 1; e < NPU_NUM_ENGINES; ++e) {
        engines[e].queue.push_back({kShutdown, 0, 0});
        engines[e].cv.notify_all();
      }
    }
    cp_cv.notify_all();
    cp_thread.join();
    for (uint32_t e = 1; e < NPU_NUM_ENGINES; ++e) engines[e].thread.join();
  }

  // ---- engines ------------------------------------------------------------------------

  void engine_loop(Engine& eng) {
    std::vector<isa::Region> regions;
    for (;;) {
      QueueItem item;
      {
        std::unique_lock lk(mu);
        eng.cv.wait(lk, [&] { return !eng.queue.empty(); });
        item = eng.queue.front();
        eng.queue.pop_front();
        if (item.index == kShutdown) return;
        if (item.index == kEndOfJob) {
          eng.done = true;
          cp_cv.notify_all();
          continue;
        }
      }
      uint64_t start = std::max(eng.clock, item.dispatch);
      uint64_t end = start;
      if (racecheck && item.epoch != eng.epoch) {  // first command after a FENCE
        join(eng.vc, cp_vc);
        eng.epoch = item.epoch;
      }
      if (before_command) before_command(eng.id, item.index);
      if (!job.aborted()) end = execute(eng, item.index, start, regions);
      if (racecheck) eng.vc[eng.id] = ++eng.position;
      eng.clock = end;
      {
        std::lock_guard lk(mu);
        eng.end_times.push_back(end);
        ++eng.finished;
      }
      cp_cv.notify_all();
    }
  }

  void raise(uint32_t kind, uint32_t engine, uint32_t index, uint64_t address, uint64_t time) {
    job.fault({kind, engine, index, 0, address}, time);
  }

  /// Runs one command on `eng`; returns its end cycle.
  uint64_t execute(Engine& eng, uint32_t index, uint64_t start, std::vector<isa::Region>& regions) {
    const npu_cmd& c = program->cmds[index];
    const uint8_t op = c.hdr.opcode;
    if (!isa::opcode_allows_engine(op, static_cast<uint8_t>(eng.id))) {
      raise(DRM_NPU_FAULT_PARSE, eng.id, index, 0, start);
      return start;
    }
    uint64_t end = start;
    if (op == NPU_OP_SEM_WAIT) {
      uint32_t signal = 0;
      if (job.wait(eng.id, index, c.sem.sem, c.sem.count, end, signal)) {
        if (racecheck) join(eng.vc, race.clock_of_signal(signal));
        eng.stats.stall += end - start;
        record(index, eng.id, op, start, end);
        ++eng.stats.commands;
      }
      return end;
    }
    const isa::CommandCost cost = isa::command_cost(c, cfg);
    end = start + cost.cycles;
    if (op == NPU_OP_SEM_SIGNAL) {
      if (racecheck) {  // the waiter learns everything up to and including this signal
        VectorClock sent = eng.vc;
        sent[eng.id] = eng.position + 1;
        race.signal_sent(index, sent);
      }
      if (!job.signal(eng.id, index, c.sem.sem, c.sem.count, end)) return start;
    } else if (isa::find_opcode(op)->data) {
      if (!run_data_command(eng.id, index, c, start, regions)) return start;
      if (job.aborted()) return start;  // cancelled mid-command: it did not complete
      if (racecheck) race.log(eng.id).record(index, op, eng.position, eng.vc, regions);
    }
    eng.stats.busy += cost.cycles;
    ++eng.stats.commands;
    eng.stats.macs += cost.macs;
    eng.stats.elements += cost.elements;
    if (eng.id == NPU_ENGINE_DMA_IN) eng.stats.dma_in += cost.bytes;
    if (eng.id == NPU_ENGINE_DMA_OUT) eng.stats.dma_out += cost.bytes;
    record(index, eng.id, op, start, end);
    return end;
  }

  /// Checks a data command's operands against SRAM and the MMU, then executes it.
  bool run_data_command(uint32_t engine, uint32_t index, const npu_cmd& c, uint64_t start,
                        std::vector<isa::Region>& regions) {
    regions.clear();
    if (!isa::command_regions(c, regions)) {
      raise(DRM_NPU_FAULT_PARSE, engine, index, 0, start);
      return false;
    }
    std::byte* dram = nullptr;
    for (const isa::Region& r : regions) {
      if (r.space == isa::Space::Sram) {
        if (r.end > sram.size()) {
          raise(DRM_NPU_FAULT_SRAM_RANGE, engine, index, std::max<uint64_t>(r.begin, sram.size()),
                start);
          return false;
        }
      } else {
        dram = mmu->translate(r.begin, r.end - r.begin, r.access);
        if (!dram) {
          raise(DRM_NPU_FAULT_MMU, engine, index,
                mmu->fault_address(r.begin, r.end - r.begin, r.access), start);
          return false;
        }
      }
    }
    if (racecheck) {  // one data command at a time: a racy buffer races on no host memory
      std::lock_guard lk(data_mu);
      run_command(c, sram, dram, &job.abort_flag());
    } else {
      run_command(c, sram, dram, &job.abort_flag());
    }
    return true;
  }

  void record(uint32_t index, uint32_t engine, uint8_t op, uint64_t start, uint64_t end) {
    // Each command index is written by exactly one thread; the CP reads after the job.
    drm_npu_cmd_profile& p = result.profile.timeline[index];
    p.cmd_index = index;
    p.engine = static_cast<uint16_t>(engine);
    p.opcode = op;
    p.start_cycle = start;
    p.end_cycle = end;
  }

  // ---- command processor --------------------------------------------------------------

  void cp_loop() {
    for (;;) {
      {
        std::unique_lock lk(mu);
        cp_cv.wait(lk, [&] { return shutdown || (running && !result_ready && program); });
        if (shutdown) return;
      }
      run_job();
      {
        std::lock_guard lk(mu);
        result_ready = true;
      }
      done_cv.notify_all();
    }
  }

  void run_job() {
    const auto& cmds = program->cmds;
    result = JobResult{};
    result.profile.timeline.assign(cmds.size(), drm_npu_cmd_profile{UINT32_MAX, 0, 0, 0, 0});
    uint64_t cp_clock = 0;
    uint64_t cp_busy = 0;
    uint64_t dispatched[NPU_NUM_ENGINES] = {};
    const uint64_t depth = std::max<uint32_t>(1, cfg.queue_depth);
    bool ended = false;

    for (uint32_t i = 0; i < cmds.size() && !ended && !job.aborted(); ++i) {
      const npu_cmd& c = cmds[i];
      cp_clock += cfg.cp_cycles_per_cmd;
      cp_busy += cfg.cp_cycles_per_cmd;
      const uint32_t e = c.hdr.engine;
      if (e >= NPU_NUM_ENGINES) {
        raise(DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, i, 0, cp_clock);
        break;
      }
      // An unvalidated program (SKIP_VALIDATION) is parsed here, command by command, so the
      // engines only ever see well-formed commands.
      if (!program->validated) {
        if (auto ok = isa::check_command(c, i, cfg); !ok) {
          device_log().debug("parse fault: {}", ok.error().message);
          raise(DRM_NPU_FAULT_PARSE, e, i, 0, cp_clock);
          break;
        }
      }
      if (e != NPU_ENGINE_CP) {
        Engine& eng = engines[e];
        std::unique_lock lk(mu);
        if (dispatched[e] >= depth) {
          const uint64_t slot = dispatched[e] - depth;  // command that frees a queue entry
          cp_cv.wait(lk, [&] { return eng.finished > slot || job.aborted(); });
          if (job.aborted()) break;
          cp_clock = std::max(cp_clock, eng.end_times[slot]);
        }
        eng.queue.push_back({i, epoch, cp_clock});
        ++dispatched[e];
        eng.cv.notify_one();
        continue;
      }
      switch (c.hdr.opcode) {
        case NPU_OP_END:
          record(i, NPU_ENGINE_CP, NPU_OP_END, cp_clock, cp_clock);
          ended = true;
          break;
        case NPU_OP_FENCE: {
          const uint64_t start = cp_clock;
          std::unique_lock lk(mu);
          cp_cv.wait(lk, [&] {
            if (job.aborted()) return true;
            for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k)
              if (engines[k].finished < dispatched[k]) return false;
            return true;
          });
          if (job.aborted()) break;
          for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k)
            if (!engines[k].end_times.empty())
              cp_clock = std::max(cp_clock, engines[k].end_times.back());
          if (racecheck) {  // every later command happens after everything before the fence
            for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) join(cp_vc, engines[k].vc);
            ++epoch;
          }
          if (c.hdr.flags & NPU_FENCE_FLAG_IRQ) result.profile.irq_values.push_back(c.fence.value);
          record(i, NPU_ENGINE_CP, NPU_OP_FENCE, start, cp_clock);
          ++result.profile.commands[NPU_ENGINE_CP];
          break;
        }
        case NPU_OP_MARKER:
        case NPU_OP_NOP: {
          const uint64_t cost = isa::command_cost(c, cfg).cycles;
          record(i, NPU_ENGINE_CP, c.hdr.opcode, cp_clock, cp_clock + cost);
          cp_clock += cost;
          cp_busy += cost;
          ++result.profile.commands[NPU_ENGINE_CP];
          break;
        }
        default:
          raise(DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, i, 0, cp_clock);
          break;
      }
    }
    if (!ended && !job.aborted())  // only reachable without validation
      raise(DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, static_cast<uint32_t>(cmds.size()) - 1, 0,
            cp_clock);

    // Drain: every engine reaches the end-of-job marker (aborted jobs skip their commands).
    {
      std::unique_lock lk(mu);
      for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) {
        if (dispatched[k] == 0) {  // an engine the job never used needs no wake-up
          engines[k].done = true;
          continue;
        }
        engines[k].queue.push_back({kEndOfJob, 0, 0});
        engines[k].cv.notify_one();
      }
      cp_cv.wait(lk, [&] {
        for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k)
          if (!engines[k].done) return false;
        return true;
      });
    }
    finish(cp_clock, cp_busy);
  }

  void finish(uint64_t cp_clock, uint64_t cp_busy) {
    JobProfile& p = result.profile;
    p.cycles = cp_clock;
    p.busy_cycles[NPU_ENGINE_CP] = cp_busy;
    for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) {
      const Engine& eng = engines[k];
      p.cycles = std::max(p.cycles, eng.clock);
      p.busy_cycles[k] = eng.stats.busy;
      p.commands[k] = eng.stats.commands;
      p.dma_bytes_in += eng.stats.dma_in;
      p.dma_bytes_out += eng.stats.dma_out;
      p.macs += eng.stats.macs;
      p.vector_elements += eng.stats.elements;
      p.semaphore_stall_cycles += eng.stats.stall;
    }
    std::erase_if(p.timeline,
                  [](const drm_npu_cmd_profile& e) { return e.cmd_index == UINT32_MAX; });
    result.fault = job.result_fault();
    // A faulted job ends at its fault, in virtual time: how far the command processor and the
    // other engines got on the host before they saw the abort is not part of the model, so
    // the job's cycles do not depend on it (issue 14: 6 vs 134 cycles from run to run).
    if (const auto at = job.fault_time()) p.cycles = *at;
    result.status = result.fault.kind == DRM_NPU_FAULT_NONE ? DRM_NPU_JOB_OK : DRM_NPU_JOB_ERROR;
    if (racecheck) {
      const auto t0 = std::chrono::steady_clock::now();
      p.race = race.find_hazards(result.status != DRM_NPU_JOB_OK);
      device_log().debug("racecheck: {} hazards among {} commands, pass {} us", p.race.total,
                         program->cmds.size(),
                         std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::steady_clock::now() - t0)
                             .count());
    }
  }

  /// Resets the per-job state of the engines and the checker for `cmds` commands (mu held).
  void prepare_engines_locked(size_t cmds) {
    for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) {
      Engine& eng = engines[k];
      eng.finished = 0;
      eng.end_times.clear();
      eng.done = false;
      eng.clock = 0;
      eng.stats = {};
      eng.vc = {};
      eng.position = 0;
      eng.epoch = 0;
    }
    cp_vc = {};
    epoch = 0;
    if (racecheck) race.begin(cmds);
  }
};

Device::Device(isa::DeviceConfig cfg) : cfg_(std::move(cfg)), impl_(std::make_unique<Impl>(cfg_)) {
  impl_->start();
}

Device::~Device() {
  impl_->stop();
}

JobResult Device::run(const isa::Program& program, const Mmu& mmu, const JobOptions& options) {
  std::lock_guard run_lk(impl_->run_mu);
  Impl& d = *impl_;
  if (program.cmds.empty()) {
    JobResult r;
    r.status = DRM_NPU_JOB_ERROR;
    r.fault = {DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, 0, 0, 0};
    return r;
  }
  d.job.begin(cfg_.num_semaphores, cfg_.semaphore_max, NPU_NUM_ENGINES);
  {
    std::lock_guard lk(d.mu);
    d.racecheck = options.racecheck;
    d.before_command = options.before_command;
    d.prepare_engines_locked(program.cmds.size());
    d.program = &program;
    d.mmu = &mmu;
    d.result_ready = false;
    d.running = true;
  }
  d.cp_cv.notify_all();
  JobResult out;
  {
    std::unique_lock lk(d.mu);
    d.done_cv.wait(lk, [&] { return d.result_ready; });
    d.running = false;
    d.program = nullptr;
    d.mmu = nullptr;
    d.before_command = nullptr;
    out = std::move(d.result);
  }
  return out;
}

void Device::reset() {
  Impl& d = *impl_;
  std::lock_guard lk(d.mu);
  if (!d.running || d.result_ready) return;  // only the running job is affected
  device_log().warn("reset while a job is running");
  d.job.reset();
  d.cp_cv.notify_all();
}

}  // namespace npu::emu
