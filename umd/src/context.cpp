// Context: CTX_CREATE / CTX_DESTROY, SUBMIT and QUERY CONTEXT_STATE.
#include "npu/context.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "state.h"

namespace npu {

namespace detail {

ContextHandle::~ContextHandle() {
  drm_npu_ctx_destroy d{};
  d.ctx_id = id;
  if (auto r =
          dev->ioctl(DRM_IOCTL_NPU_CTX_DESTROY, &d, fmt::format("destroy context: ctx {}", id));
      !r) {
    log().warn("{}", r.error().message);
  }
}

}  // namespace detail

namespace {

std::string_view submit_detail(int err) {
  switch (err) {
    case ECANCELED:
      return "context banned";
    case EFAULT:
      return "a command reaches outside its referenced buffers";
    case EINVAL:
      return "command buffer or arguments rejected";
    case ENOMEM:
      return "queue full";
    case EBADF:
      return "an in-fence is not an open descriptor";
    default:
      return {};
  }
}

}  // namespace

const char* priority_name(Priority p) {
  switch (p) {
    case Priority::kLow:
      return "low";
    case Priority::kNormal:
      return "normal";
    case Priority::kHigh:
      return "high";
    case Priority::kRealtime:
      return "realtime";
  }
  return "?";
}

std::optional<Priority> parse_priority(std::string_view name) {
  for (Priority p : {Priority::kLow, Priority::kNormal, Priority::kHigh, Priority::kRealtime}) {
    if (name == priority_name(p)) return p;
  }
  return std::nullopt;
}

Expected<Context> Context::create(const Device& device, Priority priority) {
  drm_npu_ctx_create c{};
  c.priority = static_cast<uint32_t>(priority);
  NPU_TRY(device.state()->ioctl(
      DRM_IOCTL_NPU_CTX_CREATE, &c,
      fmt::format("create context: priority {}", static_cast<uint32_t>(priority))));
  return Context(std::make_shared<detail::ContextHandle>(device.state(), c.ctx_id, priority));
}

uint32_t Context::id() const {
  return ctx_->id;
}

Priority Context::priority() const {
  return ctx_->priority;
}

Device Context::device() const {
  return Device(ctx_->dev);
}

Expected<Job> Context::submit(CommandBuffer& cmdbuf, const SubmitOptions& options) {
  if (cmdbuf.device().state() != ctx_->dev) {
    return make_error(EXDEV, fmt::format("submit: ctx {}: command buffer belongs to device {}",
                                         ctx_->id, cmdbuf.device().path()));
  }
  if (options.racecheck && !ctx_->dev->params.has(DRM_NPU_CAP_RACECHECK)) {
    return make_error(EOPNOTSUPP, fmt::format("submit: ctx {}: racecheck: the device has no "
                                              "synchronization checker (capability racecheck)",
                                              ctx_->id));
  }
  const bool fences = options.fence_out || !options.after.empty();
  if (fences && !ctx_->dev->params.has(DRM_NPU_CAP_FENCES)) {
    return make_error(EOPNOTSUPP, fmt::format("submit: ctx {}: fences: the device has none "
                                              "(API 1.3, capability fences)",
                                              ctx_->id));
  }
  if (options.after.size() > DRM_NPU_MAX_IN_FENCES) {
    return make_error(EINVAL, fmt::format("submit: ctx {}: {} in-fences, at most {}", ctx_->id,
                                          options.after.size(), DRM_NPU_MAX_IN_FENCES));
  }
  std::vector<int32_t> in_fences;
  for (const Fence& f : options.after) {
    if (!f) return make_error(EBADF, fmt::format("submit: ctx {}: an empty in-fence", ctx_->id));
    in_fences.push_back(f.fd());
  }
  if (!cmdbuf.finalized()) NPU_TRY(cmdbuf.finalize());

  std::vector<drm_npu_bo_ref> refs;
  refs.reserve(cmdbuf.uses().size() + 1);
  refs.push_back({cmdbuf.bo()->handle(), DRM_NPU_ACCESS_READ});
  for (const BufferUse& u : cmdbuf.uses()) refs.push_back({u.handle, u.access});

  drm_npu_submit s{};
  s.ctx_id = ctx_->id;
  s.flags = cmdbuf.submit_flags() | (options.racecheck ? DRM_NPU_SUBMIT_RACECHECK : 0u) |
            (options.fence_out ? DRM_NPU_SUBMIT_FENCE_OUT : 0u);
  s.in_fences = reinterpret_cast<uintptr_t>(in_fences.data());
  s.in_fence_count = static_cast<uint32_t>(in_fences.size());
  s.cmd_handle = cmdbuf.bo()->handle();
  s.bo_count = static_cast<uint32_t>(refs.size());
  s.cmd_offset = 0;
  s.cmd_size = cmdbuf.bytes().size();
  s.bos = reinterpret_cast<uintptr_t>(refs.data());
  if (const int err = ctx_->dev->do_ioctl(DRM_IOCTL_NPU_SUBMIT, &s); err != 0) {
    // The kernel's own reason (command index and field) beats the errno's generic meaning.
    const std::string why = err == EINVAL || err == EFAULT || err == EOVERFLOW || err == EDQUOT
                                ? ctx_->dev->last_kernel_error()
                                : std::string();
    return detail::ioctl_error(fmt::format("submit: ctx {}", ctx_->id), DRM_IOCTL_NPU_SUBMIT, err,
                               why.empty() ? submit_detail(err) : std::string_view(why));
  }
  Job job(ctx_, s.seqno);
  if (options.fence_out) job.fence_ = std::make_shared<const Fence>(UniqueFd(s.fence_fd));
  return job;
}

Expected<UniqueFd> Context::event_fd() const {
  if (!ctx_->dev->params.has(DRM_NPU_CAP_CTX_EVENTS)) {
    return make_error(EOPNOTSUPP, fmt::format("event fd: ctx {}: the device has no context "
                                              "events (API 1.3)",
                                              ctx_->id));
  }
  drm_npu_ctx_events e{};
  e.ctx_id = ctx_->id;
  NPU_TRY(
      ctx_->dev->ioctl(DRM_IOCTL_NPU_CTX_EVENTS, &e, fmt::format("event fd: ctx {}", ctx_->id)));
  return UniqueFd(e.fd);
}

Expected<ContextState> Context::state() const {
  drm_npu_context_state s{};
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_CONTEXT_STATE;
  q.size = sizeof(s);
  q.arg0 = ctx_->id;
  q.data = reinterpret_cast<uintptr_t>(&s);
  NPU_TRY(
      ctx_->dev->ioctl(DRM_IOCTL_NPU_QUERY, &q, fmt::format("context state: ctx {}", ctx_->id)));
  ContextState out;
  out.banned = s.state == DRM_NPU_CTX_STATE_BANNED;
  out.priority = static_cast<Priority>(s.priority);
  out.reset_count = s.reset_count;
  out.last_submitted = s.last_submitted;
  out.last_completed = s.last_completed;
  out.fault_seqno = s.fault_seqno;
  out.last_fault = {s.last_fault.kind, s.last_fault.engine, s.last_fault.cmd_index,
                    s.last_fault.address};
  return out;
}

}  // namespace npu
