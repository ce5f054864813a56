// The shared worker of parallel_for2() (see parallel.h).
#include "parallel.h"

#include <atomic>
#include <thread>

#include "cancel.h"
#include "npu/emu/spin_wait.h"

namespace npu::emu::kern {

namespace {

class Worker {
 public:
  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    busy_.store(true, std::memory_order_acquire);  // no new splits (a running one finished)
    stop_ = true;
    posted_.fetch_add(1, std::memory_order_release);
    posted_.notify_one();
    thread_.join();
  }

  /// Claims the worker; false when another caller holds it.
  bool claim() { return !busy_.exchange(true, std::memory_order_acquire); }

  void run(size_t n, const std::function<void(size_t, size_t)>& body) {
    const size_t mid = n / 2;
    body_ = &body;
    begin_ = mid;
    end_ = n;
    cancel_ = cancel_flag();
    const uint32_t ticket = posted_.load(std::memory_order_relaxed) + 1;
    posted_.store(ticket, std::memory_order_release);
    posted_.notify_one();
    body(0, mid);
    spin_then_wait(completed_,
                   [&] { return completed_.load(std::memory_order_acquire) == ticket; });
    busy_.store(false, std::memory_order_release);
  }

 private:
  void loop() {
    uint32_t seen = 0;
    for (;;) {
      spin_then_wait(posted_, [&] { return posted_.load(std::memory_order_acquire) != seen; });
      seen = posted_.load(std::memory_order_acquire);
      if (stop_) return;
      {
        const CancelScope scope(cancel_);
        (*body_)(begin_, end_);
      }
      completed_.store(seen, std::memory_order_release);
      completed_.notify_one();
    }
  }

  std::atomic<bool> busy_{false};
  alignas(64) std::atomic<uint32_t> posted_{0};
  alignas(64) std::atomic<uint32_t> completed_{0};
  // The posted task: written by the claiming caller before posted_ (release), read by the
  // worker after it (acquire).
  const std::function<void(size_t, size_t)>* body_ = nullptr;
  size_t begin_ = 0, end_ = 0;
  const std::atomic<bool>* cancel_ = nullptr;
  bool stop_ = false;
  std::thread thread_;
};

Worker& worker() {
  static Worker w;
  return w;
}

}  // namespace

void parallel_for2(size_t n, bool split, const std::function<void(size_t, size_t)>& body) {
  if (!split || n < 2 || std::thread::hardware_concurrency() < 2) {
    body(0, n);
    return;
  }
  Worker& w = worker();
  if (!w.claim()) {
    body(0, n);
    return;
  }
  w.run(n, body);
}

}  // namespace npu::emu::kern
