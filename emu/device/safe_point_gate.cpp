// SafePointGate (safe_point_gate.h).
#include "safe_point_gate.h"

#include <algorithm>

#include "npu/isa/safe_points.h"

namespace npu::emu {

std::vector<uint32_t> SafePointGate::points_of(std::span<const npu_cmd> cmds) {
  std::vector<uint32_t> points;
  for (const uint32_t p : isa::safe_points(cmds)) {
    if (p + 1 < cmds.size() && cmds[p + 1].hdr.opcode != NPU_OP_END) points.push_back(p);
  }
  return points;
}

SafePointGate::SafePointGate(std::vector<uint32_t> points, std::function<bool(uint64_t)> yield)
    : points_(std::move(points)), yield_(std::move(yield)) {
  if (!points_.empty()) open_through_.store(points_[0], std::memory_order_relaxed);
}

uint32_t SafePointGate::segment(uint32_t index) const {
  return static_cast<uint32_t>(std::lower_bound(points_.begin(), points_.end(), index) -
                               points_.begin());
}

bool SafePointGate::admit(uint32_t index, const std::function<uint64_t(uint32_t)>& fence_end) {
  if (index <= open_through_.load(std::memory_order_acquire)) return true;
  const uint32_t seg = segment(index);
  std::lock_guard lk(mu_);
  for (uint32_t a = admitted_; a < seg; ++a) {
    if (stop_) return false;
    if (yield_(fence_end(points_[a]))) {
      stop_ = a;
      return false;
    }
    admitted_ = a + 1;
    open_through_.store(a + 1 < points_.size() ? points_[a + 1] : UINT32_MAX,
                        std::memory_order_release);
  }
  return true;
}

bool SafePointGate::stop_at(uint32_t index, uint64_t cycle) {
  if (!std::binary_search(points_.begin(), points_.end(), index)) return false;
  std::lock_guard lk(mu_);
  if (!yield_(cycle)) return false;
  stop_ = segment(index);
  return true;
}

std::optional<uint32_t> SafePointGate::stopped_at() const {
  std::lock_guard lk(mu_);
  if (!stop_) return std::nullopt;
  return points_[*stop_];
}

}  // namespace npu::emu
