// The shared worker of parallel_for and its claiming protocol (see parallel.h).
//
// A shared range is one 64-bit word: generation (32 bits) | chunks (16) | next chunk (16). A
// claim is a compare-and-swap that adds one to `next` while the generation is the claimer's
// and next < chunks, so a thread that arrives late (the range is finished, or a newer one is
// posted) claims nothing and never reads the range's other fields. A successful claim keeps
// the range open (its caller waits for that chunk), so the fields written before the word was
// published (participant, cancel state, sizes) are stable while the claimer reads them.
//
// The caller takes the worker (busy_), writes the fields, publishes the word (release) and
// posts the generation, which wakes the worker; it runs its own claims; then it closes the
// word (next = chunks), which tells it how many chunks were claimed in all, and waits until
// the worker has reported the rest done. The worker adds its count to done_ once, after its
// participant returned.
#include "parallel.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string_view>
#include <thread>

#include "cancel.h"
#include "npu/emu/spin_wait.h"

namespace npu::emu::kern {

namespace {

constexpr size_t kMaxChunks = 0xFFFF;

/// How long a caller polls for the worker's last chunks before it parks (about a chunk).
constexpr std::chrono::microseconds kPollBudget{200};

constexpr uint64_t pack(uint32_t gen, size_t chunks, size_t next) {
  return uint64_t{gen} << 32 | uint64_t{chunks} << 16 | uint64_t{next};
}
constexpr uint32_t gen_of(uint64_t w) {
  return static_cast<uint32_t>(w >> 32);
}
constexpr size_t chunks_of(uint64_t w) {
  return static_cast<size_t>((w >> 16) & kMaxChunks);
}
constexpr size_t next_of(uint64_t w) {
  return static_cast<size_t>(w & kMaxChunks);
}

std::atomic<uint64_t>& threshold() {
  static std::atomic<uint64_t> t{[] {
    const char* threads = std::getenv("NPU_EMU_THREADS");
    if (threads != nullptr && std::string_view(threads) == "1") return UINT64_MAX;
    const char* macs = std::getenv("NPU_EMU_SPLIT_MACS");  // tests: 0 splits every GEMM
    if (macs != nullptr && *macs != '\0') {
      char* end = nullptr;
      const unsigned long long v = std::strtoull(macs, &end, 10);
      if (*end == '\0') return static_cast<uint64_t>(v);
    }
    return kSplitMacs;
  }()};
  return t;
}

std::atomic<uint64_t> g_worker_chunks{0};

bool two_cpus() {
  static const bool yes = std::thread::hardware_concurrency() >= 2;
  return yes;
}

}  // namespace

void set_split_threshold(uint64_t macs) {
  threshold().store(macs, std::memory_order_relaxed);
}

uint64_t split_threshold() {
  return threshold().load(std::memory_order_relaxed);
}

uint64_t worker_chunks() {
  return g_worker_chunks.load(std::memory_order_relaxed);
}

bool Claims::claim(size_t& chunk) {
  if (word_ == nullptr) {
    if (next_ >= chunks_) return false;
    chunk = next_++;
    return true;
  }
  uint64_t w = word_->load(std::memory_order_relaxed);
  for (;;) {
    if (gen_of(w) != gen_ || next_of(w) >= chunks_of(w)) return false;
    // Acquire: a worker's first claim sees the fields the caller wrote before publishing.
    if (word_->compare_exchange_weak(w, w + 1, std::memory_order_acq_rel,
                                     std::memory_order_relaxed)) {
      chunk = next_of(w);
      return true;
    }
  }
}

bool Claims::next(size_t& first, size_t& last) {
  size_t chunk = 0;
  if (pending_ != kNone) {
    chunk = pending_;
    pending_ = kNone;
    if (cancelled()) return false;
  } else {
    if (cancelled() || !claim(chunk)) return false;
    ++claimed_;
  }
  first = chunk * per_;
  last = std::min(n_, first + per_);
  return true;
}

namespace detail {

class Worker {
 public:
  static Worker& instance() {
    static Worker w;
    return w;
  }

  ~Worker() {
    // Wait out a range in flight, then keep the worker taken: later callers run alone.
    while (busy_.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
    stop_.store(true, std::memory_order_relaxed);
    posted_.fetch_add(1, std::memory_order_release);
    posted_.notify_one();
    thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Takes the worker for one range; false when another caller has it.
  bool try_acquire() { return !busy_.exchange(true, std::memory_order_acquire); }

  /// Runs [0, n) with the worker (taken by try_acquire) and gives it back.
  void run(size_t n, Participant fn, void* ctx) {
    const size_t per = n <= kMaxChunks ? 1 : (n + kMaxChunks - 1) / kMaxChunks;
    const size_t chunks = (n + per - 1) / per;
    fn_ = fn;
    ctx_ = ctx;
    cancel_ = CancelScope::current();
    n_ = n;
    per_ = per;
    const uint32_t gen = ++gen_;
    done_.store(0, std::memory_order_relaxed);
    word_.store(pack(gen, chunks, 0), std::memory_order_release);
    posted_.exchange(gen, std::memory_order_acq_rel);  // a RMW before the notify (wait_word.h)
    posted_.notify_one();

    Claims mine;
    mine.word_ = &word_;
    mine.gen_ = gen;
    mine.n_ = n;
    mine.per_ = per;
    fn(ctx, mine);

    const size_t total =
        next_of(word_.exchange(pack(gen, chunks, chunks), std::memory_order_acq_rel));
    const auto theirs = static_cast<uint32_t>(total - mine.claimed_);
    if (theirs != 0) wait_done(theirs);
    busy_.store(false, std::memory_order_release);
  }

 private:
  Worker() : thread_([this] { loop(); }) {}

  /// Waits until the worker reported `count` chunks done. The wait is for at most the rest of
  /// one chunk the worker is running, so it polls without yielding the CPU (a yield on a busy
  /// machine hands the CPU to another process for a whole time slice) for a while, then parks.
  void wait_done(uint32_t count) {
    const auto ready = [&] { return done_.load(std::memory_order_acquire) == count; };
    const auto deadline = std::chrono::steady_clock::now() + kPollBudget;
    do {
      for (int i = 0; i < 64; ++i) {
        if (ready()) return;
        cpu_relax();
      }
    } while (std::chrono::steady_clock::now() < deadline);
    for (;;) {
      const uint32_t seen = done_.load(std::memory_order_acquire);
      if (seen == count) return;
      done_.wait(seen);
    }
  }

  void loop() {
    uint32_t seen = 0;
    for (;;) {
      spin_then_wait(posted_, [&] { return posted_.load(std::memory_order_acquire) != seen; });
      seen = posted_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_relaxed)) return;
      Claims mine;
      mine.word_ = &word_;
      mine.gen_ = seen;
      size_t chunk = 0;
      if (!mine.claim(chunk)) continue;  // the caller was quicker, or a newer range is up
      // The claim holds the range open: its fields stay as they are until done_ says so.
      mine.pending_ = chunk;
      mine.claimed_ = 1;
      mine.n_ = n_;
      mine.per_ = per_;
      {
        const CancelScope scope(cancel_);
        fn_(ctx_, mine);
      }
      g_worker_chunks.fetch_add(mine.claimed_, std::memory_order_relaxed);
      done_.fetch_add(static_cast<uint32_t>(mine.claimed_), std::memory_order_release);
      done_.notify_one();
    }
  }

  std::atomic<bool> busy_{false};
  std::atomic<bool> stop_{false};
  // The range: written by the caller holding busy_ before it publishes word_.
  Participant fn_ = nullptr;
  void* ctx_ = nullptr;
  CancelScope::State cancel_;
  size_t n_ = 0, per_ = 1;
  uint32_t gen_ = 0;  // the caller's: last generation posted
  alignas(64) std::atomic<uint64_t> word_{0};
  alignas(64) WaitWord posted_;
  alignas(64) WaitWord done_;
  std::thread thread_;  // last: starts once the members above exist
};

void parallel_for(size_t n, bool split, Participant fn, void* ctx) {
  if (split && n >= 2 && split_threshold() != UINT64_MAX && two_cpus()) {
    Worker& w = Worker::instance();
    if (w.try_acquire()) {
      w.run(n, fn, ctx);
      return;
    }
  }
  Claims alone;
  alone.n_ = n;
  alone.chunks_ = n;
  fn(ctx, alone);
}

}  // namespace detail
}  // namespace npu::emu::kern
