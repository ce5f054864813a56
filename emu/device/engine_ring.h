// Engine and its command ring: one engine thread of the device model, the single-producer/
// single-consumer ring the command processor feeds it through, and what the engine publishes
// back (how many commands it finished and their end cycles).
//
// Threading. The command processor (the thread in Device::run) is the ring's only producer: it
// writes ring[tail & mask] and then stores tail + 1 (release). The engine thread is its only
// consumer: it reads items up to tail (acquire). An idle engine spins briefly (spin_wait.h) and
// then parks on `tail`; the producer wakes it only if it parked. The engine publishes each
// finished command by writing end_times[k] and then storing `finished` = k + 1 (release).
// `clock`, `stats` and the racecheck state belong to the engine thread while a job runs; the
// command processor reads them after the job drained (every engine reached the end-of-job
// marker, `done`).
//
// Lifetime. The Engines are members of Device::Impl; their threads start with the first job
// that needs them (Device::Impl::start_engines) and stop when the Device is destroyed (a
// kShutdown item). Per-job state is reset by Device::Impl::prepare_engines.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "npu/emu/wait_word.h"
#include "racecheck.h"

namespace npu::emu {

/// Ring items that are not commands: the end of the job (the engine sets `done`) and the end
/// of the engine thread.
inline constexpr uint32_t kEndOfJob = UINT32_MAX;
inline constexpr uint32_t kShutdown = UINT32_MAX - 1;

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
  // The command ring. A power of two above queue_depth + 1: the CP never has more than
  // queue_depth commands outstanding, plus the end-of-job marker.
  std::vector<QueueItem> ring;
  uint32_t mask = 0;
  alignas(64) WaitWord tail;
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

}  // namespace npu::emu
