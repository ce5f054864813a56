// npu::cancelled and CancelScope (npu/cancel.h): thread-local state, saved and restored by
// each scope.
#include "npu/cancel.h"

namespace npu {

namespace {
thread_local CancelScope::State tl_state;
}  // namespace

bool cancelled() {
  const CancelScope::State& s = tl_state;
  if (s.flag != nullptr && s.flag->load(std::memory_order_relaxed)) return true;
  return s.deadline != CancelScope::Clock::time_point::max() &&
         CancelScope::Clock::now() >= s.deadline;
}

CancelScope::CancelScope(const std::atomic<bool>* flag) : previous_(tl_state) {
  tl_state = State{flag, Clock::time_point::max()};
}

CancelScope::CancelScope(Clock::time_point deadline) : previous_(tl_state) {
  tl_state = State{nullptr, deadline};
}

CancelScope::State CancelScope::current() {
  return tl_state;
}

CancelScope::CancelScope(const State& state) : previous_(tl_state) {
  tl_state = state;
}

CancelScope::~CancelScope() {
  tl_state = previous_;
}

}  // namespace npu
