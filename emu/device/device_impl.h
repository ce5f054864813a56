// Device::Impl: the state of one device model and the declarations of its parts. The public
// Device (npu/emu/device.h) is a façade over it; the parts live in files named for what they
// hold:
//
//   device.cpp             the façade: Device::run (picks the serial or the threaded way),
//                          reset, scramble_sram; SRAM allocation
//   serial_runner.cpp      a job on run()'s thread in causal order (the default)
//   serial_plan.cpp        the schedules of the programs run last (serial_plan.h)
//   load_memo.cpp          DMA loads whose bytes SRAM already holds (load_memo.h)
//   lane_dispatch.cpp      a serial job's data commands on two host lanes (lanes.h)
//   engine_threads.cpp     the engine threads: start/stop, the ring loop, one command
//   command_processor.cpp  the command processor of a threaded job: dispatch, FENCE, drain
//   data_command.cpp       one data command: operand checks against SRAM and the MMU, kernel
//   replay_account.cpp     what a replay (isa::replay_to_fault) says of a job: the profile of a
//                          serial job, the fault of a faulted one, the blame of a hung one
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
// Threading. run() holds run_mu for the whole job and is the command processor; the per-job
// fields (program, cmds, gate, mmu, options) are set before the first command is dispatched
// (the ring's release/acquire publishes them to the engine threads) and cleared after the
// job drained. `result.profile.timeline[i]` is written by the one thread that ran command i.
// reset() may come from any thread: it takes `mu` and touches only `job` and `progress`.
// Lifetime: one Impl per Device; the engine threads and the lanes start with the first job
// that needs them and end with the Device.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "engine_ring.h"
#include "job_state.h"
#include "lane_choice.h"
#include "lanes.h"
#include "load_memo.h"
#include "npu/emu/device.h"
#include "npu/emu/spin_wait.h"
#include "npu/isa/regions.h"
#include "npu/isa/schedule.h"
#include "racecheck.h"
#include "safe_point_gate.h"
#include "serial_plan.h"
#include "sram_versions.h"

namespace spdlog {
class logger;
}

namespace npu::emu {

/// The device model's logger; like the kernel driver's, quiet below error by default (the
/// kernel's warnings go to dmesg, not the application's stderr).
spdlog::logger& device_log();

struct FreeDeleter {
  void operator()(std::byte* p) const { std::free(p); }
};

struct Device::Impl {
  explicit Impl(const isa::DeviceConfig& c);

  const isa::DeviceConfig& cfg;
  // SRAM reads as zeros at power-up: 2 MiB-aligned memory advised to huge pages (device.cpp).
  // Behind it at sram_bank_stride, when sram_bank_count is 2, the second host lane's bank
  // (sram_banks.h; host pages only once a run writes them): `sram` is bank 0, the device's
  // SRAM, and `sram_banked` both.
  unsigned sram_bank_count;
  uint64_t sram_bank_stride;
  std::unique_ptr<std::byte, FreeDeleter> sram_memory;
  std::span<std::byte> sram;
  std::span<std::byte> sram_banked;
  // Which SRAM pages each command wrote (the matrix kernels reuse what they packed from
  // unchanged SRAM): every data command notes its SRAM write regions after it ran, in any bank.
  kern::SramVersions sram_versions{sram_banked.size()};
  JobState job;

  std::mutex run_mu;  // serialises run()

  std::mutex mu;         // guards `running` (run() against reset())
  bool running = false;  // a job is between the start and the end of run_job()
  // Bumped (and notified) whenever an engine finishes a command or the end-of-job marker, and
  // by reset(): the word the CP parks on.
  alignas(64) WaitWord progress;
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
  // The safe points of the last program with an id (immutable: the same commands whenever it
  // runs again) from the last `base`: finding them reads every command, 6 MB for a model of
  // 48k commands, on each job of a device with preemption on.
  struct GatePoints {
    uint64_t id = 0;
    uint32_t base = 0;
    std::vector<uint32_t> points;
  } gate_points;
  /// SafePointGate::points_of(cmds), kept for a program with an id.
  std::vector<uint32_t> safe_points_of_run();
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
  bool lanes_this_job = false;         // job_uses_lanes() for the running serial job
  std::unique_ptr<Lanes> lanes;
  std::vector<LaneCommand> lane_cmds;
  std::vector<LaneRegion> lane_regions;
  std::vector<uint32_t> lane_timeline;       // the schedule entry of each lane command
  std::vector<std::byte*> lane_dram;         // its DRAM operand's host address, if any
  std::vector<uint8_t> lane_refused;         // not run: the gate stopped the job before it
  std::vector<uint8_t> lane_ran;             // ran to completion (copy_back_banks)
  const SerialPlan* running_plan = nullptr;  // the plan of the running serial job
  std::vector<LaneRegion> serial_regions;    // run_serial_command's, kept to reuse its memory
  // The serial plans of the programs run last (serial_plan.h; under run_mu).
  SerialPlans plans;
  // DMA loads of the running serial job whose bytes SRAM already holds (cleared by run()).
  LoadMemo load_memo;
  VectorClock cp_vc{};
  uint32_t epoch = 0;

  // ---- device.cpp ---------------------------------------------------------------------

  /// Turns the indices of a run that began at command `base` into the program's.
  void shift_indices();

  // ---- engine_threads.cpp -------------------------------------------------------------

  /// Starts the engine threads on the first job that needs them (run_mu held).
  void start_engines();
  /// Ends the engine threads (no job runs).
  void stop();
  /// Resets the per-job state of the engines and the checker for `count` commands (the engines
  /// are idle: the previous job drained them).
  void prepare_engines(size_t count);
  /// An engine thread: pops its ring until kShutdown.
  void engine_loop(Engine& eng);
  /// Runs one command on `eng`; returns its end cycle.
  uint64_t execute(Engine& eng, uint32_t index, uint64_t start, std::vector<isa::Region>& regions);

  /// CP side of an engine's ring (the CP is its only producer).
  static void push(Engine& eng, const QueueItem& item) {
    const uint32_t t = eng.tail.load(std::memory_order_relaxed);
    eng.ring[t & eng.mask] = item;
    // A read-modify-write before the notify, as WaitWord's protocol asks (wait_word.h): then
    // an engine parking at that moment either sees the new tail or is woken.
    eng.tail.fetch_add(1, std::memory_order_acq_rel);
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

  // ---- command_processor.cpp ----------------------------------------------------------

  /// Runs the job on the engine threads, this thread being the command processor.
  void run_job();
  /// The CP at FENCE `i`: waits for every engine to drain; false when the job aborted.
  bool cp_fence(uint32_t i, const npu_cmd& c, uint64_t& cp_clock,
                const uint32_t (&dispatched)[NPU_NUM_ENGINES]);
  /// After the last dispatch: every engine reaches the end-of-job marker.
  void cp_drain(const uint32_t (&dispatched)[NPU_NUM_ENGINES]);
  /// The profile and fault of a threaded job, after it drained.
  void finish(uint64_t cp_clock, uint64_t cp_busy);

  // ---- data_command.cpp ---------------------------------------------------------------

  /// A data command's operand check that failed: the fault it raises.
  struct OperandFault {
    uint32_t kind;
    uint64_t address;
  };
  /// Checks a data command's operands against SRAM and the MMU: its regions into `regions`,
  /// its DRAM operand's host address (if any) into `dram`; the fault when one fails.
  std::optional<OperandFault> check_operands(const npu_cmd& c, std::vector<isa::Region>& regions,
                                             std::byte*& dram) const;
  /// check_operands(); when one fails, raises its fault on `engine` at command `index`, `start`,
  /// and returns false.
  bool operands_or_raise(uint32_t engine, uint32_t index, const npu_cmd& c, uint64_t start,
                         std::vector<isa::Region>& regions, std::byte*& dram);
  /// Checks a data command's operands against SRAM and the MMU, then executes it (the engine
  /// threads: every command runs).
  bool run_data_command(uint32_t engine, uint32_t index, const npu_cmd& c, uint64_t start,
                        std::vector<isa::Region>& regions);
  /// The same for a serial job on run()'s thread: through execute().
  bool run_serial_command(uint32_t engine, uint32_t index, const npu_cmd& c, uint64_t start,
                          std::vector<isa::Region>& regions);
  /// A data command's operands as the lanes and the load memo see them (SRAM offsets, the DRAM
  /// operand's host bytes `dram`, with its rows), appended to `out`.
  static void host_regions(std::span<const isa::Region> regions, const std::byte* dram,
                           std::vector<LaneRegion>& out);
  /// Executes a serial job's data command whose operands passed their checks, unless the load
  /// memo shows it would change nothing; notes its SRAM writes. Any thread of the job.
  void execute(const npu_cmd& c, std::byte* dram, std::span<const LaneRegion> regions);

  void raise(uint32_t kind, uint32_t engine, uint32_t index, uint64_t address, uint64_t time) {
    job.fault({kind, engine, index, 0, address}, time);
  }

  /// Notes a command of a threaded job in the timeline. Each command index is written by
  /// exactly one thread; the CP reads after the job.
  void record(uint32_t index, uint32_t engine, uint8_t op, uint64_t start, uint64_t end) {
    drm_npu_cmd_profile& p = result.profile.timeline.mutate()[index];  // unshared: run_job
    p.cmd_index = index;
    p.engine = static_cast<uint16_t>(engine);
    p.opcode = op;
    p.start_cycle = start;
    p.end_cycle = end;
  }

  // ---- replay_account.cpp -------------------------------------------------------------

  /// What the device checks while it runs this job, for isa::replay_to_fault().
  isa::FaultModel fault_model() const;
  /// Appends a replayed timeline to `p` with what it implies (FENCE interrupts, MACs, ...).
  void add_timeline(JobProfile& p, std::span<const isa::CommandTime> timeline) const;
  /// Sets `p` to what replayed schedule `s` says: cycles, per-engine busy cycles and commands,
  /// semaphore stalls, and its timeline (add_timeline).
  void add_schedule(JobProfile& p, const isa::Schedule& s) const;
  /// The fault and profile of a faulted job, from isa::replay_to_fault().
  void account_fault();
  /// Names the command a watchdog reset blames (the oldest wait the program never satisfies).
  void blame_hang();

  // ---- serial_runner.cpp --------------------------------------------------------------

  /// Runs the job on this thread in causal order; false, having executed nothing, when the
  /// replay finds a fault or a program that cannot finish.
  bool run_serial();
  /// The job's plan: the one kept for its program (isa::Program::id) when its DRAM maps in
  /// this job's Mmu (`reused`), else a new one (kept when the program has an id and can run
  /// serially).
  std::shared_ptr<const SerialPlan> serial_plan(bool& reused);
  /// Every DRAM range of the program maps in the job's Mmu with its access.
  bool dram_maps() const;
  /// Runs `range` (a stretch of the causal order) on the lanes when worth it, else one
  /// command after another; returns how many of its commands ran.
  size_t run_range(std::span<const uint32_t> range, const isa::Schedule& s, bool& on_lanes_ran);
  /// Commands from which run_segments() puts no further safe-point segment in a stretch run
  /// on the lanes (ResNet-18 fp32: 13,626 commands, 4,080 of them data commands).
  static constexpr size_t kLanesStretch = 4096;
  /// Runs `order` in stretches of whole safe-point segments (one segment each when not on the
  /// lanes), every command asking the gate before it starts.
  size_t run_segments(std::span<const uint32_t> order, const isa::Schedule& s, bool& on_lanes_ran);
  /// The profile of a serial job of which `ran` commands of the plan's order ran.
  void serial_profile(const SerialPlan& plan, size_t ran);
  /// A data command (not the command processor's, and the opcode moves or computes data), told
  /// from the schedule's entry alone (its opcode is the command's): the command's own 128 bytes
  /// are not read for the semaphores and fences between the data commands.
  static bool is_data(const isa::CommandTime& t);
  /// The completion cycle of a safe point from the schedule `s` (timeline by index), as the
  /// gate's admit() asks for it.
  static std::function<uint64_t(uint32_t)> fence_end(const isa::Schedule& s);

  // ---- lane_dispatch.cpp --------------------------------------------------------------

  /// Runs the data commands of `order` on two host lanes when the job is worth it; returns how
  /// many commands of `order` ran, or nullopt when nothing ran.
  std::optional<size_t> run_on_lanes(std::span<const uint32_t> order, const isa::Schedule& s);
  /// Whether the job of `plan` runs its data commands on the lanes: decided once per job (its
  /// size, then LaneChoice in mode 2, which this sets chosen_key for), so that every
  /// safe-point segment of it runs the same way and the job's time says which way was faster.
  bool job_uses_lanes(const SerialPlan& plan);
  /// The lanes' schedule of a stretch of `plan`'s order from timeline entry `first`, of
  /// `stretch` entries (kept in the plan): of lane_cmds and lane_regions, which are kept with
  /// it, unless this run `reused` the kept inputs; host_ns: where this run is to measure each
  /// command's host time (the plan's SerialPlan::host_ns), or nullptr.
  const LaneSchedule& lane_schedule(const SerialPlan& plan, uint32_t first, size_t stretch,
                                    bool reused, uint32_t*& host_ns);
  /// After a run of kept.renamed's commands (done: Lanes::run's flags): the SRAM bytes whose
  /// last version is in bank 1 copied back to bank 0 (sram_banks.h).
  void copy_back_banks(const KeptLaneSchedule& kept, std::span<const uint8_t> done);
};

}  // namespace npu::emu
