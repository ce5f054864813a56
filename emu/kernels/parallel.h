// Both host cores for the matrix engine's arithmetic (issue 9): the blocks of output rows of a
// large GEMM are claimed one at a time, from one atomic counter, by the calling engine thread
// and by one worker thread shared by every device in the process. The caller claims and runs
// blocks from the start and only ever waits for blocks the worker has already claimed and is
// running, so a worker that is runnable but not scheduled (a loaded machine) costs the caller
// a few atomic operations, not a wait: the caller then simply does all the work. Each block is
// computed exactly as the serial loop computes it, so results are bit-identical to a serial
// run (integer and float alike).
//
// Threading: parallel_for may be called from any thread. The worker serves one range at a
// time; a caller that finds it busy with another range runs its whole range alone. The worker
// runs its blocks under the caller's cancellation state (npu/cancel.h): once the command is
// cancelled nobody claims another block. Lifetime: the worker starts on the first split and is
// joined at process exit (later calls run alone).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace npu::emu::kern {

/// GEMMs of at least this many multiply-accumulates are shared with the worker. Below it the
/// wake-up (a futex call, a few microseconds) and the worker's own copy of the scratch blocks
/// are not paid back (bench/kernels_bench.cpp, split:0 vs split:1).
inline constexpr uint64_t kSplitMacs = uint64_t{1} << 21;

/// ... and of at least this many output columns. The compiler cuts convolutions into slices
/// of 16 output channels, where each A element feeds only 16 multiply-adds: sharing such a
/// GEMM cost more than it gave (both threads build im2col rows from the same input tile and
/// the worker's wake-up is paid per command). Measured idle with npu-submit --repeat 8:
/// ResNet-18 58 -> 46 ms, EfficientNet-B0 92 -> 60 ms, ResNet-50 168 -> 157 ms per inference
/// with this gate; MobileNetV2 unchanged (24 ms).
inline constexpr uint64_t kSplitMinN = 64;

/// Sets the threshold (0: split every GEMM of two or more blocks, whatever its width;
/// UINT64_MAX: never split). For tests and benchmarks. The environment sets the start value:
/// NPU_EMU_THREADS=1 gives UINT64_MAX, NPU_EMU_SPLIT_MACS=<n> gives n (0 to exercise the
/// split through whole runs).
void set_split_threshold(uint64_t macs);
uint64_t split_threshold();

/// Chunks the worker has claimed since the process started (tests and benchmarks: did the
/// worker take part?).
uint64_t worker_chunks();

namespace detail {
/// The calling thread's SplitUnlessBusy flag, or nullptr.
inline thread_local const std::atomic<bool>* t_sibling_busy = nullptr;
}  // namespace detail

/// While alive, the GEMMs of the calling thread are not shared with the worker when `busy` is
/// true: a device running a job on two host lanes (emu/device/lanes.h) gives each lane the
/// other's flag, so that two lanes and the worker do not take turns on two cores.
class SplitUnlessBusy {
 public:
  explicit SplitUnlessBusy(const std::atomic<bool>& busy) : saved_(detail::t_sibling_busy) {
    detail::t_sibling_busy = &busy;
  }
  ~SplitUnlessBusy() { detail::t_sibling_busy = saved_; }
  SplitUnlessBusy(const SplitUnlessBusy&) = delete;
  SplitUnlessBusy& operator=(const SplitUnlessBusy&) = delete;

 private:
  const std::atomic<bool>* saved_;
};

/// Whether an m x n x k GEMM is large and wide enough to share (kSplitMacs, kSplitMinN), and
/// the calling thread's sibling lane, if any, is idle.
inline bool worth_splitting(uint64_t m, uint64_t n, uint64_t k) {
  const std::atomic<bool>* sibling = detail::t_sibling_busy;
  if (sibling != nullptr && sibling->load(std::memory_order_relaxed)) return false;
  const uint64_t t = split_threshold();
  return t == 0 || (m * n * k >= t && n >= kSplitMinN);
}

/// Whether the byte ranges [a, a + an) and [b, b + bn) overlap (an in-place command is not
/// shared: its serial order is part of its meaning).
inline bool ranges_overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn) {
  return a < b + bn && b < a + an;
}

class Claims;
namespace detail {
class Worker;
using Participant = void (*)(void* ctx, Claims& claims);
void parallel_for(size_t n, bool split, Participant fn, void* ctx);
}  // namespace detail

/// One thread's share of a parallel_for range: each next() claims a chunk no other thread
/// gets. Not copyable; used by the one thread it was handed to.
class Claims {
 public:
  Claims(const Claims&) = delete;
  Claims& operator=(const Claims&) = delete;

  /// Claims the next chunk [first, last) (normally one index); false once every chunk is
  /// claimed or the calling thread's command is cancelled.
  bool next(size_t& first, size_t& last);

 private:
  friend class detail::Worker;
  friend void detail::parallel_for(size_t, bool, detail::Participant, void*);
  Claims() = default;

  static constexpr size_t kNone = ~size_t{0};
  bool claim(size_t& chunk);

  // Shared range: the packed word (generation | chunks | next chunk) of parallel.cpp; nullptr
  // when the caller runs alone (then next_ counts).
  std::atomic<uint64_t>* word_ = nullptr;
  uint32_t gen_ = 0;
  size_t n_ = 0, per_ = 1, chunks_ = 0, next_ = 0;
  size_t pending_ = kNone;  // a chunk claimed before the participant ran (the worker's first)
  size_t claimed_ = 0;      // chunks this thread claimed
};

/// Calls participant(Claims&) on the calling thread and, with `split` (a range of two or more
/// chunks, a free worker, two or more CPUs, split_threshold() not UINT64_MAX), on the worker
/// once it gets a CPU; between them every index of [0, n) is handed out exactly once (unless
/// the command is cancelled: then the rest are never handed out). Returns when every claimed
/// chunk is done. A participant sets up its scratch, then loops on next().
template <class F>
void parallel_for(size_t n, bool split, F&& participant) {
  using Fn = std::remove_reference_t<F>;
  detail::parallel_for(
      n, split, [](void* ctx, Claims& claims) { (*static_cast<Fn*>(ctx))(claims); },
      const_cast<void*>(static_cast<const void*>(std::addressof(participant))));
}

}  // namespace npu::emu::kern
