// The plans of the programs run last (serial_plan.h).
#include "serial_plan.h"

namespace npu::emu {

std::shared_ptr<const SerialPlan> SerialPlans::find(uint64_t id, uint32_t begin) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->id != id || it->begin != begin) continue;
    entries_.splice(entries_.begin(), entries_, it);
    return entries_.front().plan;
  }
  return nullptr;
}

void SerialPlans::keep(uint64_t id, uint32_t begin, std::shared_ptr<const SerialPlan> plan) {
  entries_.push_front({id, begin, std::move(plan)});
  if (entries_.size() > kEntries) entries_.pop_back();
}

}  // namespace npu::emu
