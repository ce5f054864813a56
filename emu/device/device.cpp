// Device: a command processor (on run()'s thread) and one thread per engine.
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
//
// Host execution (issue 9). Because every time is a function of the program alone, the host
// may execute the commands in any order that respects the edges between them. By default a
// job runs serially on the thread that calls run() (the kernel driver's runner): the schedule
// comes from isa::replay_to_fault() (the same rules, single-threaded), and the data commands
// execute one after another in order of (start, end, index), which puts every command after
// the commands it waits for. A small job costs no thread hand-off at all; a large one (1M
// cycles, 64 data commands) runs its data commands on two host lanes, each after the earlier
// commands it conflicts with (lanes.h); the matrix kernels may also share a GEMM with a
// worker thread (emu/kernels/parallel.h). A job the replay finds faulting or unable to finish, a
// job under the synchronization checker or with a before_command hook, and every job of a
// device configured with "engine_threads" run on engine threads instead, as follows.
//
// Engine threads. The command processor runs on the thread that calls run(), so a job costs no
// hand-off to a CP thread and back. The engine threads start with the first such job. Each engine
// has a single-producer/single-consumer ring (the CP pushes, the engine pops) with no lock: an idle
// engine spins briefly (spin_wait.h) and then parks on the ring's tail counter; the CP wakes it
// only if it parked. An engine publishes each finished command by storing its `finished` count
// (release) after its end cycle, and bumps one device-wide `progress` word; the CP waits for a
// queue slot, a FENCE or the end of the job by polling those counters and parks on `progress` only
// when they do not move for a while. reset() raises the abort flag and bumps `progress`, so a
// waiting CP sees it.
#include "npu/emu/device.h"

#include <spdlog/spdlog.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string_view>
#include <thread>

#include "cpu_isa.h"
#include "job_state.h"
#include "lane_choice.h"
#include "lanes.h"
#include "npu/emu/kernels.h"
#include "npu/emu/spin_wait.h"
#include "npu/isa/opcodes.h"
#include "npu/isa/regions.h"
#include "npu/isa/safe_points.h"
#include "npu/isa/schedule.h"
#include "npu/isa/timing.h"
#include "npu/log.h"
#include "racecheck.h"
#include "safe_point_gate.h"
#include "sram_versions.h"

namespace npu::emu {

namespace {

/// The device model's logger; like the kernel driver's, quiet below error by default (the
/// kernel's warnings go to dmesg, not the application's stderr).
spdlog::logger& device_log() {
  static spdlog::logger& l = npu::logger("npu-device", LogLevel::kError);  // see kmd::log()
  return l;
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
  // The command ring: the CP writes ring[tail & mask] and then stores tail + 1 (release); the
  // engine reads items up to tail (acquire). A power of two above queue_depth + 1: the CP
  // never has more than queue_depth commands outstanding, plus the end-of-job marker.
  std::vector<QueueItem> ring;
  uint32_t mask = 0;
  alignas(64) std::atomic<uint32_t> tail{0};
  // Per-job progress: end_times[k] is written before finished is stored as k + 1 (release).
  alignas(64) std::atomic<uint32_t> finished{0};
  std::atomic<bool> done{false};
  std::vector<uint64_t> end_times;  // end cycle of each finished command, engine order
  // Engine thread only.
  uint64_t clock = 0;
  EngineStats stats;
  // Racecheck state (engine thread only): vector clock, commands executed, last fence joined.
  VectorClock vc{};
  uint32_t position = 0;
  uint32_t epoch = 0;
};

/// Minimum modeled cycles and data commands of a job run on two host lanes: below them the
/// lane thread's wake-up and the hazard bookkeeping cost more than the second core gives (a
/// Fashion-MNIST image is 8,743 cycles, the GPT-style decoder 61k, ResNet-18 7.9M).
constexpr uint64_t kLanesMinCycles = 1'000'000;
constexpr size_t kLanesMinCommands = 64;

/// An estimate of a data command's host time in nanoseconds, for the lanes' planner: the
/// kernels' rates on this class of machine (a GEMM tile at kern::matrix_macs_per_ns of its
/// dtype, e.g. fp32 about 40 GMAC/s and int8 on AMX about 160; a DMA copy about 20 GB/s, a
/// vector element about 0.3 ns) plus a fixed cost per command.
uint64_t host_cost(const npu_cmd& cmd, const isa::CommandCost& c) {
  uint64_t rate = 40;
  if (cmd.hdr.opcode == NPU_OP_CONV2D) rate = kern::matrix_macs_per_ns(cmd.conv2d.in_dtype);
  if (cmd.hdr.opcode == NPU_OP_MATMUL) rate = kern::matrix_macs_per_ns(cmd.matmul.a_dtype);
  return c.macs / rate + c.bytes / 20 + c.elements * 3 / 10 + 200;
}

/// How serial jobs may use two host lanes: 0 never (NPU_EMU_LANES=0, NPU_EMU_THREADS=1, one
/// CPU), 1 always (NPU_EMU_LANES=1, tests), 2 by size and then by measurement (LaneChoice).
int lanes_mode() {
  static const int mode = [] {
    const char* threads = std::getenv("NPU_EMU_THREADS");
    if (threads != nullptr && std::string_view(threads) == "1") return 0;
    const char* lanes = std::getenv("NPU_EMU_LANES");
    if (lanes != nullptr && std::string_view(lanes) == "0") return 0;
    if (lanes != nullptr && std::string_view(lanes) == "1") return 1;
    return std::thread::hardware_concurrency() >= 2 ? 2 : 0;
  }();
  return mode;
}

/// Whether a serial job of `cycles` and `data` data commands may run on two host lanes.
bool use_lanes(uint64_t cycles, size_t data) {
  const int mode = lanes_mode();
  return mode == 1 || (mode == 2 && cycles >= kLanesMinCycles && data >= kLanesMinCommands);
}

}  // namespace

namespace {

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};

/// Zeroed memory for the SRAM: 2 MiB-aligned and advised to transparent huge pages, so that
/// the kernels and the DMA, which sweep it constantly, take one TLB entry per 2 MiB instead of
/// one per 4 KiB (the default 2 MiB SRAM is one page).
std::unique_ptr<std::byte, FreeDeleter> zeroed_bytes(uint64_t size) {
  constexpr uint64_t kHuge = uint64_t{2} << 20;
  const uint64_t bytes = std::max<uint64_t>((size + kHuge - 1) / kHuge * kHuge, kHuge);
  void* p = std::aligned_alloc(kHuge, bytes);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  (void)::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: a refusal keeps 4 KiB pages
#endif
  std::memset(p, 0, bytes);
  return std::unique_ptr<std::byte, FreeDeleter>(static_cast<std::byte*>(p));
}

}  // namespace

struct Device::Impl {
  explicit Impl(const isa::DeviceConfig& c)
      : cfg(c), sram_memory(zeroed_bytes(c.sram_size)), sram(sram_memory.get(), c.sram_size) {}

  const isa::DeviceConfig& cfg;
  // SRAM reads as zeros at power-up. calloc gives a large block as fresh zero pages, so opening
  // a device costs no memset and a job faults in only the SRAM pages it touches (a forking test
  // runner opens a device per test).
  std::unique_ptr<std::byte, FreeDeleter> sram_memory;
  std::span<std::byte> sram;
  // Which SRAM pages each command wrote (the matrix kernels reuse what they packed from
  // unchanged SRAM): every data command notes its SRAM write regions after it ran.
  kern::SramVersions sram_versions{cfg.sram_size};
  JobState job;

  std::mutex run_mu;  // serialises run()

  std::mutex mu;         // guards `running` (run() against reset())
  bool running = false;  // a job is between the start and the end of run_job()
  // Bumped (and notified) whenever an engine finishes a command or the end-of-job marker, and
  // by reset(): the word the CP parks on.
  alignas(64) std::atomic<uint32_t> progress{0};
  Engine engines[NPU_NUM_ENGINES];
  bool engines_started = false;  // start_engines() ran (under run_mu)
  // Set by run() before the CP dispatches (the ring's release/acquire publishes them).
  const isa::Program* program = nullptr;
  uint32_t base = 0;  // JobOptions::begin
  // The commands this run() executes: the program from JobOptions::begin on (a job resumed
  // after a safe point). Indices inside the Impl are relative to it; run() shifts the
  // profile's back (shift_indices).
  std::span<const npu_cmd> cmds;
  // The safe points of `cmds` and the decision to stop at one (JobOptions::yield).
  std::unique_ptr<SafePointGate> gate;
  const Mmu* mmu = nullptr;
  JobResult result;
  // The synchronization checker: on for this job; the CP's clock (changed only at a FENCE,
  // while every engine is drained) and its FENCE count.
  bool racecheck = false;
  std::function<void(uint32_t, uint32_t)> before_command;  // JobOptions::before_command
  RaceChecker race;
  std::mutex data_mu;  // under racecheck, held while a data command touches SRAM and DRAM
  // Serial jobs on two host lanes (run_on_lanes; under run_mu): the lanes, made by the first
  // job that uses them, and the per-job lists, kept to reuse their memory.
  HostLanes host_lanes = HostLanes::Auto;  // JobOptions::host_lanes of this job
  LaneChoice lane_choice;  // lanes or one thread for a large job, by measurement (mode 2)
  std::optional<uint64_t> chosen_key;  // this job's LaneChoice key, when it made the choice
  std::unique_ptr<Lanes> lanes;
  std::vector<LaneCommand> lane_cmds;
  std::vector<LaneRegion> lane_regions;
  std::vector<uint32_t> lane_timeline;  // the schedule entry of each lane command
  std::vector<std::byte*> lane_dram;    // its DRAM operand's host address, if any
  VectorClock cp_vc{};
  uint32_t epoch = 0;

  /// Starts the engine threads on the first job that needs them (run_mu held).
  void start_engines() {
    if (engines_started) return;
    engines_started = true;
    const uint32_t capacity = std::bit_ceil(std::max<uint32_t>(1, cfg.queue_depth) + 2);
    for (uint32_t e = 1; e < NPU_NUM_ENGINES; ++e) {
      engines[e].id = e;
      engines[e].ring.resize(capacity);
      engines[e].mask = capacity - 1;
      engines[e].thread = std::thread([this, e] { engine_loop(engines[e]); });
    }
  }

  void stop() {
    if (!engines_started) return;
    // No job runs (run() holds run_mu and the Device is being destroyed): the rings are empty.
    for (uint32_t e = 1; e < NPU_NUM_ENGINES; ++e) push(engines[e], {kShutdown, 0, 0});
    for (uint32_t e = 1; e < NPU_NUM_ENGINES; ++e) engines[e].thread.join();
  }

  /// CP side of an engine's ring (the CP is its only producer).
  static void push(Engine& eng, const QueueItem& item) {
    const uint32_t t = eng.tail.load(std::memory_order_relaxed);
    eng.ring[t & eng.mask] = item;
    eng.tail.store(t + 1, std::memory_order_release);
    eng.tail.notify_one();  // a futex wake only when the engine parked
  }

  void bump_progress() {
    progress.fetch_add(1, std::memory_order_release);
    progress.notify_all();  // a futex wake only when the CP parked
  }

  /// The CP waits until ready() (which must also turn true when the job aborts).
  template <typename Ready>
  void cp_wait(Ready&& ready) {
    spin_then_wait(progress, ready);
  }

  // ---- engines ------------------------------------------------------------------------

  void engine_loop(Engine& eng) {
    std::vector<isa::Region> regions;
    uint32_t head = 0;
    for (;;) {
      spin_then_wait(eng.tail, [&] { return eng.tail.load(std::memory_order_acquire) != head; });
      const QueueItem item = eng.ring[head & eng.mask];
      ++head;
      if (item.index == kShutdown) return;
      if (item.index == kEndOfJob) {
        eng.done.store(true, std::memory_order_release);
        bump_progress();
        continue;
      }
      uint64_t start = std::max(eng.clock, item.dispatch);
      uint64_t end = start;
      if (racecheck && item.epoch != eng.epoch) {  // first command after a FENCE
        join(eng.vc, cp_vc);
        eng.epoch = item.epoch;
      }
      if (before_command) before_command(eng.id, item.index + base);
      if (!job.aborted()) end = execute(eng, item.index, start, regions);
      if (racecheck) eng.vc[eng.id] = ++eng.position;
      eng.clock = end;
      const uint32_t n = eng.finished.load(std::memory_order_relaxed);
      eng.end_times[n] = end;
      eng.finished.store(n + 1, std::memory_order_release);
      bump_progress();
    }
  }

  void raise(uint32_t kind, uint32_t engine, uint32_t index, uint64_t address, uint64_t time) {
    job.fault({kind, engine, index, 0, address}, time);
  }

  /// Runs one command on `eng`; returns its end cycle.
  uint64_t execute(Engine& eng, uint32_t index, uint64_t start, std::vector<isa::Region>& regions) {
    const npu_cmd& c = cmds[index];
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

  /// A data command's operand check that failed: the fault it raises.
  struct OperandFault {
    uint32_t kind;
    uint64_t address;
  };

  /// Checks a data command's operands against SRAM and the MMU: its regions into `regions`,
  /// its DRAM operand's host address (if any) into `dram`; the fault when one fails.
  std::optional<OperandFault> check_operands(const npu_cmd& c, std::vector<isa::Region>& regions,
                                             std::byte*& dram) const {
    regions.clear();
    dram = nullptr;
    if (!isa::command_regions(c, regions)) return OperandFault{DRM_NPU_FAULT_PARSE, 0};
    for (const isa::Region& r : regions) {
      if (r.space == isa::Space::Sram) {
        if (r.end > sram.size())
          return OperandFault{DRM_NPU_FAULT_SRAM_RANGE, std::max<uint64_t>(r.begin, sram.size())};
        continue;
      }
      dram = mmu->translate(r.begin, r.end - r.begin, r.access);
      if (!dram)
        return OperandFault{DRM_NPU_FAULT_MMU,
                            mmu->fault_address(r.begin, r.end - r.begin, r.access)};
    }
    return std::nullopt;
  }

  /// Checks a data command's operands against SRAM and the MMU, then executes it.
  bool run_data_command(uint32_t engine, uint32_t index, const npu_cmd& c, uint64_t start,
                        std::vector<isa::Region>& regions) {
    std::byte* dram = nullptr;
    if (const std::optional<OperandFault> f = check_operands(c, regions, dram)) {
      raise(f->kind, engine, index, f->address, start);
      return false;
    }
    const kern::SramVersionsScope scope(&sram_versions);
    if (racecheck) {  // one data command at a time: a racy buffer races on no host memory
      std::lock_guard lk(data_mu);
      run_command(c, sram, dram, &job.abort_flag());
    } else {
      run_command(c, sram, dram, &job.abort_flag());
    }
    for (const isa::Region& r : regions)
      if (r.space == isa::Space::Sram && (r.access & isa::kWrite) != 0)
        sram_versions.wrote(r.begin, r.end);
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

  void run_job() {
    result = JobResult{};
    result.profile.timeline.assign(cmds.size(), drm_npu_cmd_profile{UINT32_MAX, 0, 0, 0, 0});
    uint64_t cp_clock = 0;
    uint64_t cp_busy = 0;
    uint32_t dispatched[NPU_NUM_ENGINES] = {};
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
        if (dispatched[e] >= depth) {
          const uint64_t slot = dispatched[e] - depth;  // command that frees a queue entry
          cp_wait(
              [&] { return eng.finished.load(std::memory_order_acquire) > slot || job.aborted(); });
          if (job.aborted()) break;
          cp_clock = std::max(cp_clock, eng.end_times[slot]);
        }
        push(eng, {i, epoch, cp_clock});
        ++dispatched[e];
        continue;
      }
      switch (c.hdr.opcode) {
        case NPU_OP_END:
          record(i, NPU_ENGINE_CP, NPU_OP_END, cp_clock, cp_clock);
          ended = true;
          break;
        case NPU_OP_FENCE: {
          const uint64_t start = cp_clock;
          cp_wait([&] {
            if (job.aborted()) return true;
            for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k)
              if (engines[k].finished.load(std::memory_order_acquire) < dispatched[k]) return false;
            return true;
          });
          if (job.aborted()) break;
          for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) {
            const uint32_t n = engines[k].finished.load(std::memory_order_acquire);
            if (n > 0) cp_clock = std::max(cp_clock, engines[k].end_times[n - 1]);
          }
          if (racecheck) {  // every later command happens after everything before the fence
            for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) join(cp_vc, engines[k].vc);
            ++epoch;
          }
          if (c.hdr.flags & NPU_FENCE_FLAG_IRQ) result.profile.irq_values.push_back(c.fence.value);
          record(i, NPU_ENGINE_CP, NPU_OP_FENCE, start, cp_clock);
          ++result.profile.commands[NPU_ENGINE_CP];
          if (gate && gate->stop_at(i, cp_clock)) {  // preempted: every engine has drained
            result.resume_at = i + 1;
            ended = true;
          }
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
    for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) {
      if (dispatched[k] == 0) {  // an engine the job never used needs no wake-up
        engines[k].done.store(true, std::memory_order_relaxed);
        continue;
      }
      push(engines[k], {kEndOfJob, 0, 0});
    }
    cp_wait([&] {
      for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k)
        if (!engines[k].done.load(std::memory_order_acquire)) return false;
      return true;
    });
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
    // A faulted job ends at its first fault in virtual time. How far the command processor
    // and the other engines got on the host before they saw the abort is not part of the
    // model (and which of several faults the threads hit first is a race), so the fault and
    // the profile come from a replay of the device's checks (issue 14: 6 vs 134 cycles from
    // run to run). A watchdog or a reset has no cycle in the program: those keep the run's.
    if (job.fault_time()) account_fault();
    if (result.fault.kind == DRM_NPU_FAULT_WATCHDOG) blame_hang();
    result.status = result.fault.kind == DRM_NPU_FAULT_NONE ? DRM_NPU_JOB_OK : DRM_NPU_JOB_ERROR;
    if (racecheck) {
      const auto t0 = std::chrono::steady_clock::now();
      p.race = race.find_hazards(result.status != DRM_NPU_JOB_OK);
      device_log().debug("racecheck: {} hazards among {} commands, pass {} us", p.race.total,
                         cmds.size(),
                         std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::steady_clock::now() - t0)
                             .count());
    }
  }

  /// What the device checks while it runs this job, for isa::replay_to_fault(): commands are
  /// parsed when the program was not validated, DRAM operands go through the job's MMU.
  isa::FaultModel fault_model() const {
    isa::FaultModel model;
    model.check_commands = !program->validated;
    model.dram_fault = [this](const isa::Region& r) -> std::optional<uint64_t> {
      if (mmu->translate(r.begin, r.end - r.begin, r.access)) return std::nullopt;
      return mmu->fault_address(r.begin, r.end - r.begin, r.access);
    };
    return model;
  }

  /// Appends a replayed timeline to `p` with what it implies: FENCE interrupts, MACs, vector
  /// elements and DMA bytes (the statistics the engines gather when they run the commands).
  void add_timeline(JobProfile& p, std::span<const isa::CommandTime> timeline) const {
    p.timeline.reserve(p.timeline.size() + timeline.size());
    for (const isa::CommandTime& t : timeline) {
      p.timeline.push_back({t.index, t.engine, t.opcode, t.start, t.end});
      const npu_cmd& c = cmds[t.index];
      if (t.engine == NPU_ENGINE_CP) {
        if (t.opcode == NPU_OP_FENCE && (c.hdr.flags & NPU_FENCE_FLAG_IRQ))
          p.irq_values.push_back(c.fence.value);
        continue;
      }
      if (t.opcode == NPU_OP_SEM_WAIT) continue;
      const isa::CommandCost cost = isa::command_cost(c, cfg);
      p.macs += cost.macs;
      p.vector_elements += cost.elements;
      if (t.engine == NPU_ENGINE_DMA_IN) p.dma_bytes_in += cost.bytes;
      if (t.engine == NPU_ENGINE_DMA_OUT) p.dma_bytes_out += cost.bytes;
    }
  }

  /// The fault and profile of a faulted job, from isa::replay_to_fault(): the first fault in
  /// virtual time and the commands that completed before it. The data the engines wrote is
  /// whatever they wrote before they stopped (a faulted job's outputs are undefined).
  void account_fault() {
    const isa::Schedule s = isa::replay_to_fault(cmds, cfg, fault_model());
    if (!s.fault) {  // cannot happen: every fault the device raises, the replay raises
      device_log().error("faulted job: the replay finds no fault (kept the run's profile)");
      return;
    }
    result.fault = *s.fault;
    JobProfile& p = result.profile;
    RaceReport hazards = std::move(p.race);
    p = JobProfile{};
    p.race = std::move(hazards);
    p.cycles = s.cycles;
    for (uint32_t k = 0; k < NPU_NUM_ENGINES; ++k) {
      p.busy_cycles[k] = s.busy[k];
      p.commands[k] = s.commands[k];
    }
    p.semaphore_stall_cycles = s.stall;
    add_timeline(p, s.timeline);
  }

  /// Names the command a watchdog reset blames: in a job that hangs, the oldest wait that is
  /// never satisfied. Which engines sit in a SEM_WAIT when the reset comes depends on the host
  /// threads (two waiters racing for one semaphore's count, an engine that has not reached its
  /// wait yet), so the blame comes from isa::replay_to_fault(), a function of the program alone:
  /// the lowest command index the replay leaves unexecuted, which is a SEM_WAIT that its engine
  /// reached (every earlier command ran, so the command processor dispatched it). A job the
  /// replay finishes was only slow (or held by a before_command hook): the reset keeps
  /// blaming the command processor, as a serial job's reset does.
  void blame_hang() {
    const isa::Schedule s = isa::replay_to_fault(cmds, cfg, fault_model());
    if (s.fault) return;  // a fault the threads did not reach before the reset
    uint32_t next = 0;    // the replay's timeline is by index: its first gap
    for (const isa::CommandTime& t : s.timeline) {
      if (t.index != next) break;
      if (t.engine == NPU_ENGINE_CP && t.opcode == NPU_OP_END) return;  // it finishes
      ++next;
    }
    if (next >= cmds.size() || cmds[next].hdr.opcode != NPU_OP_SEM_WAIT) return;
    result.fault.engine = cmds[next].hdr.engine;
    result.fault.cmd_index = next;
  }

  // ---- serial execution ---------------------------------------------------------------

  /// Runs the job on this thread (see the file comment): the virtual-time schedule comes from
  /// isa::replay_to_fault() with the device's checks, and the commands execute one after
  /// another in causal order. Returns false, having executed nothing, when the replay finds a
  /// fault or a program that cannot finish: such a job runs on the engine threads, which raise
  /// the fault (or hang until the watchdog) as the device does.
  static bool is_data(const isa::CommandTime& t, const npu_cmd& c) {
    return t.engine != NPU_ENGINE_CP && isa::find_opcode(c.hdr.opcode)->data;
  }

  /// Runs the data commands of `order` on two host lanes (lanes.h) when the job is worth it
  /// (use_lanes) and every command passes its SRAM and MMU checks; returns how many commands
  /// of `order` ran, counted as the serial loop counts them. nullopt: nothing ran (the serial
  /// loop then runs the job, and raises the fault if there is one).
  std::optional<size_t> run_on_lanes(std::span<const uint32_t> order, const isa::Schedule& s) {
    if (host_lanes == HostLanes::Off) return std::nullopt;
    if (host_lanes == HostLanes::Auto) {
      if (!use_lanes(s.cycles, SIZE_MAX)) return std::nullopt;  // small: no need to count
      size_t data = 0;
      for (const uint32_t k : order) data += is_data(s.timeline[k], cmds[s.timeline[k].index]);
      if (!use_lanes(s.cycles, data)) return std::nullopt;
      if (lanes_mode() == 2) {  // large enough: the way that ran it faster before
        chosen_key = s.cycles * 1000003 + cmds.size();
        if (!lane_choice.lanes(*chosen_key)) return std::nullopt;
      }
    }
    lane_cmds.clear();
    lane_regions.clear();
    lane_timeline.clear();
    lane_dram.clear();
    std::vector<isa::Region> regions;
    for (const uint32_t k : order) {
      const isa::CommandTime& t = s.timeline[k];
      const npu_cmd& c = cmds[t.index];
      if (!is_data(t, c)) continue;
      std::byte* dram = nullptr;
      if (check_operands(c, regions, dram)) return std::nullopt;  // the serial loop faults
      LaneCommand lc;
      lc.first = static_cast<uint32_t>(lane_regions.size());
      lc.cost = host_cost(c, isa::command_cost(c, cfg));
      for (const isa::Region& r : regions) {
        const bool write = (r.access & isa::kWrite) != 0;
        if (r.space == isa::Space::Sram) {
          lane_regions.push_back({r.begin, r.end, true, write});
        } else {  // its host bytes (the one DRAM operand, `dram`): aliases conflict too
          const auto host = reinterpret_cast<uintptr_t>(dram);
          lane_regions.push_back({host, host + (r.end - r.begin), false, write});
        }
      }
      lc.count = static_cast<uint32_t>(lane_regions.size()) - lc.first;
      lane_cmds.push_back(lc);
      lane_timeline.push_back(k);
      lane_dram.push_back(dram);
    }
    if (!lanes) lanes = std::make_unique<Lanes>(sram.size());
    const std::span<const uint8_t> done =
        lanes->run(lane_cmds, lane_regions, [&](uint32_t i, int /*lane*/) {
          const isa::CommandTime& t = s.timeline[lane_timeline[i]];
          const kern::SramVersionsScope scope(&sram_versions);
          run_command(cmds[t.index], sram, lane_dram[i], &job.abort_flag());
          const LaneCommand& lc = lane_cmds[i];
          for (uint32_t r = lc.first; r < lc.first + lc.count; ++r)
            if (lane_regions[r].sram && lane_regions[r].write)
              sram_versions.wrote(lane_regions[r].begin, lane_regions[r].end);
          return !job.aborted();
        });
    size_t ran = 0, i = 0;
    for (const uint32_t k : order) {
      if (is_data(s.timeline[k], cmds[s.timeline[k].index]) && done[i++] == 0) break;
      ++ran;
    }
    return ran;
  }

  /// The completion cycle of a safe point, from a complete schedule (timeline by index).
  static std::function<uint64_t(uint32_t)> fence_end(const isa::Schedule& s) {
    return [&s](uint32_t point) { return s.timeline[point].end; };
  }

  bool run_serial() {
    isa::Schedule s = isa::replay_to_fault(cmds, cfg, fault_model());
    // Complete: no fault, and every command up to END ran (the timeline is by index).
    if (s.fault || s.timeline.empty() || s.timeline.back().opcode != NPU_OP_END ||
        s.timeline.back().engine != NPU_ENGINE_CP ||
        s.timeline.size() != s.timeline.back().index + 1)
      return false;

    // Causal order: a command that waits for another (same engine, a semaphore, a FENCE) starts
    // at or after its end, so (start, end, index) orders every such pair.
    std::vector<uint32_t> order(s.timeline.size());
    for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      const isa::CommandTime& x = s.timeline[a];
      const isa::CommandTime& y = s.timeline[b];
      if (x.start != y.start) return x.start < y.start;
      if (x.end != y.end) return x.end < y.end;
      return x.index < y.index;
    });

    result = JobResult{};
    JobProfile& p = result.profile;
    size_t ran = 0;
    chosen_key.reset();
    const auto t0 = std::chrono::steady_clock::now();
    bool on_lanes_ran = false;
    // Runs `range` (a stretch of `order`) on the lanes when worth it, else one command after
    // another; returns how many of its commands ran.
    auto run_range = [&](std::span<const uint32_t> range) -> size_t {
      if (const std::optional<size_t> on_lanes = run_on_lanes(range, s)) {
        on_lanes_ran = true;
        return *on_lanes;
      }
      size_t n = 0;
      std::vector<isa::Region> regions;
      for (const uint32_t k : range) {
        if (job.aborted()) break;
        const isa::CommandTime& t = s.timeline[k];
        const npu_cmd& c = cmds[t.index];
        if (is_data(t, c)) {
          run_data_command(t.engine, t.index, c, t.start, regions);
          if (job.aborted()) break;  // cancelled mid-command: it did not complete
        }
        ++n;
      }
      return n;
    };
    if (!gate) {
      ran = run_range(order);
    } else {
      // One segment (the commands up to and including a safe point) at a time: a safe point is
      // a FENCE, so each segment is a contiguous stretch of the causal order, and the lanes
      // plan one segment, not the whole rest of the job, each time. Entering the next segment
      // asks the gate, which may stop the job at the safe point before it.
      const auto point_end = fence_end(s);
      const std::span<const uint32_t> all(order);
      for (size_t from = 0; from < all.size() && !job.aborted();) {
        const uint32_t seg = gate->segment(s.timeline[all[from]].index);
        size_t to = from;
        while (to < all.size() && gate->segment(s.timeline[all[to]].index) == seg) ++to;
        if (!gate->admit(s.timeline[all[from]].index, point_end)) break;
        const size_t n = run_range(all.subspan(from, to - from));
        ran += n;
        if (n != to - from) break;
        from = to;
      }
    }

    const std::optional<uint32_t> stop = gate ? gate->stopped_at() : std::nullopt;
    // A part stopped at a safe point ran only some of the commands: its time says nothing
    // about which way runs the whole job faster.
    if (chosen_key && ran == order.size() && !job.aborted() && !stop)
      lane_choice.ran(*chosen_key, on_lanes_ran,
                      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::steady_clock::now() - t0)
                                                .count()));
    if (ran == order.size() && !stop) {
      p.cycles = s.cycles;
      for (uint32_t e = 0; e < NPU_NUM_ENGINES; ++e) {
        p.busy_cycles[e] = s.busy[e];
        p.commands[e] = s.commands[e];
      }
      p.semaphore_stall_cycles = s.stall;
    } else {  // stopped at a safe point, or reset mid-job: the profile of the commands that ran
      std::vector<isa::CommandTime> kept;
      if (stop && !job.aborted()) {  // the commands up to the safe point, which ends the part
        kept.assign(s.timeline.begin(), s.timeline.begin() + *stop + 1);
        p.cycles = s.timeline[*stop].end;
        result.resume_at = *stop + 1;
      } else {
        p.cycles = ran ? s.timeline[order[ran - 1]].end : 0;
        for (size_t r = 0; r < ran; ++r) kept.push_back(s.timeline[order[r]]);
        std::sort(kept.begin(), kept.end(),
                  [](const auto& a, const auto& b) { return a.index < b.index; });
      }
      p.busy_cycles[NPU_ENGINE_CP] = uint64_t{cfg.cp_cycles_per_cmd} * kept.size();
      s.timeline = std::move(kept);
      for (const isa::CommandTime& t : s.timeline) {
        if (t.opcode == NPU_OP_SEM_WAIT) {
          p.semaphore_stall_cycles += t.end - t.start;
        } else if (t.opcode != NPU_OP_FENCE) {
          p.busy_cycles[t.engine] += t.end - t.start;
        }
        if (t.engine != NPU_ENGINE_CP || t.opcode != NPU_OP_END) ++p.commands[t.engine];
      }
    }
    add_timeline(p, s.timeline);
    result.fault = job.result_fault();
    result.status = result.fault.kind == DRM_NPU_FAULT_NONE ? DRM_NPU_JOB_OK : DRM_NPU_JOB_ERROR;
    return true;
  }

  /// Turns the indices of a run that began at command `base` into the program's.
  void shift_indices() {
    if (base == 0) return;
    for (drm_npu_cmd_profile& e : result.profile.timeline) e.cmd_index += base;
    for (drm_npu_hazard& h : result.profile.race.hazards) {
      h.first.cmd_index += base;
      h.second.cmd_index += base;
    }
    if (result.fault.kind != DRM_NPU_FAULT_NONE) result.fault.cmd_index += base;
    if (result.resume_at != 0) result.resume_at += base;
  }

  /// Resets the per-job state of the engines and the checker for `count` commands (the engines
  /// are idle: the previous job drained them).
  void prepare_engines(size_t count) {
    for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) {
      Engine& eng = engines[k];
      eng.finished.store(0, std::memory_order_relaxed);
      if (eng.end_times.size() < count) eng.end_times.resize(count);
      eng.done.store(false, std::memory_order_relaxed);
      eng.clock = 0;
      eng.stats = {};
      eng.vc = {};
      eng.position = 0;
      eng.epoch = 0;
    }
    cp_vc = {};
    epoch = 0;
    if (racecheck) race.begin(count);
  }
};

Device::Device(isa::DeviceConfig cfg) : cfg_(std::move(cfg)), impl_(std::make_unique<Impl>(cfg_)) {}

Device::~Device() {
  impl_->stop();
}

JobResult Device::run(const isa::Program& program, const Mmu& mmu, const JobOptions& options) {
  std::lock_guard run_lk(impl_->run_mu);
  Impl& d = *impl_;
  if (program.cmds.empty() || options.begin >= program.cmds.size()) {
    JobResult r;
    r.status = DRM_NPU_JOB_ERROR;
    r.fault = {DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, 0, 0, 0};
    return r;
  }
  d.job.begin(cfg_.num_semaphores, cfg_.semaphore_max);
  d.racecheck = options.racecheck;
  d.host_lanes = options.host_lanes;
  d.before_command = options.before_command;
  d.program = &program;
  d.base = options.begin;
  d.cmds = std::span<const npu_cmd>(program.cmds).subspan(options.begin);
  if (options.yield) d.gate = std::make_unique<SafePointGate>(d.cmds, options.yield);
  if (d.gate && d.gate->empty()) d.gate.reset();
  d.mmu = &mmu;
  {
    std::lock_guard lk(d.mu);
    d.running = true;
  }
  // Serial unless the job needs the engine threads: the checker's vector clocks and the
  // before_command hook are per engine thread.
  const bool serial = !cfg_.engine_threads && !options.racecheck && !options.before_command;
  if (!serial || !d.run_serial()) {
    d.start_engines();
    d.prepare_engines(d.cmds.size());
    d.run_job();  // the command processor runs on this thread
  }
  {
    std::lock_guard lk(d.mu);
    d.running = false;
  }
  d.shift_indices();
  d.program = nullptr;
  d.cmds = {};
  d.gate.reset();
  d.mmu = nullptr;
  d.before_command = nullptr;
  return std::move(d.result);
}

void Device::scramble_sram(uint64_t seed) {
  std::lock_guard run_lk(impl_->run_mu);
  Impl& d = *impl_;
  // A fixed xorshift stream: enough to make any read of SRAM left over from before a safe
  // point produce a different result, deterministic for a given seed.
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i + 8 <= d.sram.size(); i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(d.sram.data() + i, &x, 8);
  }
  d.sram_versions.wrote(0, d.sram.size());
}

void Device::reset() {
  Impl& d = *impl_;
  std::lock_guard lk(d.mu);
  if (!d.running) return;  // only the running job is affected
  device_log().warn("reset while a job is running");
  d.job.reset();
  d.bump_progress();  // a CP parked on engine progress sees the abort
}

}  // namespace npu::emu
