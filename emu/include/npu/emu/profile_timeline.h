// ProfileTimeline: a job profile's per-command entries (drm_npu_cmd_profile), shared between
// copies until one of them is changed (copy on write). A serial job's complete profile is made
// once per plan (emu/device/serial_plan.h) and every run of the job hands it on: a copy of
// ResNet-50's 33,000 entries per inference was a fresh megabyte whose first touches were
// about 190 page faults on a paravirtualized host, freed again when the kernel driver's window
// of retained jobs moved on; sharing it made ResNet-18 and ResNet-50 fp32 inferences about 4%
// faster there.
//
// Threading: const members may be called from any thread. mutate() on a timeline no other copy
// shares only reads the share count, so the engine threads of one job may each write their own
// entries of the vector it returns at once (the job made it unshared before they started);
// copying or assigning a timeline while another thread uses it is a data race, as for any
// value type. Lifetime: the entries live while a copy that shares them does.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "npu_accel.h"

namespace npu::emu {

class ProfileTimeline {
 public:
  using Entries = std::vector<drm_npu_cmd_profile>;

  ProfileTimeline() = default;

  size_t size() const { return entries_ ? entries_->size() : 0; }
  bool empty() const { return size() == 0; }
  const drm_npu_cmd_profile* data() const { return entries_ ? entries_->data() : nullptr; }
  const drm_npu_cmd_profile* begin() const { return data(); }
  const drm_npu_cmd_profile* end() const { return data() + size(); }
  const drm_npu_cmd_profile& operator[](size_t i) const { return (*entries_)[i]; }
  const drm_npu_cmd_profile& front() const { return entries_->front(); }

  /// The entries to change: this timeline's own (copied first when another copy shares them).
  Entries& mutate() {
    if (!entries_) {
      entries_ = std::make_shared<Entries>();
    } else if (entries_.use_count() > 1) {
      entries_ = std::make_shared<Entries>(*entries_);
    }
    return *entries_;
  }

 private:
  std::shared_ptr<Entries> entries_;
};

}  // namespace npu::emu
