// Job: WAIT (with the result cached once the job retired), QUERY JOB_PROFILE and QUERY
// JOB_HAZARDS.
#include "npu/job.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "npu/fence.h"
#include "npu/isa/validate.h"
#include "state.h"

namespace npu {

const char* to_string(JobStatus status) {
  switch (status) {
    case JobStatus::kOk:
      return "ok";
    case JobStatus::kError:
      return "error";
    case JobStatus::kAborted:
      return "aborted";
    case JobStatus::kTimeout:
      return "timeout";
  }
  return "unknown";
}

const char* fault_kind_name(uint32_t kind) {
  return isa::fault_kind_name(kind);
}

int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

Job::Job(std::shared_ptr<detail::ContextHandle> ctx, uint64_t seqno)
    : ctx_(std::move(ctx)), seqno_(seqno), cache_(std::make_shared<detail::JobCache>()) {}

uint32_t Job::context_id() const {
  return ctx_->id;
}

Expected<JobResult> Job::wait(std::chrono::nanoseconds timeout) const {
  if (timeout == kForever) return wait_until(std::numeric_limits<int64_t>::max());
  if (timeout.count() <= 0) return wait_until(0);
  const int64_t now = monotonic_ns();
  const int64_t max = std::numeric_limits<int64_t>::max();
  return wait_until(timeout.count() > max - now ? max : now + timeout.count());
}

Expected<JobResult> Job::wait_until(int64_t deadline_ns) const {
  {
    std::lock_guard lk(cache_->mu);
    if (cache_->result) return *cache_->result;
  }
  drm_npu_wait w{};
  w.ctx_id = ctx_->id;
  w.seqno = seqno_;
  w.timeout_ns = deadline_ns;
  if (const int err = ctx_->dev->do_ioctl(DRM_IOCTL_NPU_WAIT, &w); err != 0) {
    std::string_view detail;
    if (err == ETIMEDOUT) detail = "deadline passed, job still pending";
    if (err == EBUSY) detail = "polled, job still pending";
    if (err == ENOENT) detail = "job no longer retained or context gone";
    return detail::ioctl_error(fmt::format("wait: ctx {} seqno {}", ctx_->id, seqno_),
                               DRM_IOCTL_NPU_WAIT, err, detail);
  }
  JobResult r;
  r.status = static_cast<JobStatus>(w.status);
  r.fault = {w.fault.kind, w.fault.engine, w.fault.cmd_index, w.fault.address};
  r.submit_ns = w.submit_ns;
  r.start_ns = w.start_ns;
  r.end_ns = w.end_ns;
  r.cycles = w.cycles;
  std::lock_guard lk(cache_->mu);
  cache_->result = r;
  return r;
}

namespace {

/// A size-negotiated QUERY of this job (`type`): asks for the size, then reads header and
/// entries; at least `header` bytes or EPROTO.
Expected<std::vector<std::byte>> query_job(const detail::ContextHandle& ctx, uint64_t seqno,
                                           uint32_t type, size_t header, const std::string& who) {
  drm_npu_query q{};
  q.type = type;
  q.arg0 = ctx.id;
  q.arg1 = seqno;
  NPU_TRY(ctx.dev->ioctl(DRM_IOCTL_NPU_QUERY, &q, who));  // size only
  std::vector<std::byte> raw(q.size);
  if (raw.size() < header) {
    return make_error(EPROTO,
                      fmt::format("{}: kernel reported {} bytes, less than the {}-byte header", who,
                                  raw.size(), header));
  }
  q.data = reinterpret_cast<uintptr_t>(raw.data());
  NPU_TRY(ctx.dev->ioctl(DRM_IOCTL_NPU_QUERY, &q, who));
  raw.resize(std::min<size_t>(raw.size(), q.size));
  return raw;
}

/// A QUERY reply: header `H`, then `count` entries `E` (EPROTO when fewer are present).
template <typename H, typename E>
Expected<std::pair<H, std::vector<E>>> split_reply(const std::vector<std::byte>& raw,
                                                   uint32_t H::*count, const std::string& who,
                                                   const char* what) {
  std::pair<H, std::vector<E>> out{};
  if (raw.size() < sizeof(H)) {
    return make_error(
        EPROTO, fmt::format("{}: reply of {} bytes, shorter than its header", who, raw.size()));
  }
  std::memcpy(&out.first, raw.data(), sizeof(H));
  const uint32_t n = out.first.*count;
  const size_t room = (raw.size() - sizeof(H)) / sizeof(E);
  if (n > room) {
    return make_error(EPROTO, fmt::format("{}: {} {} announced, {} present", who, n, what, room));
  }
  out.second.resize(n);
  if (n != 0) std::memcpy(out.second.data(), raw.data() + sizeof(H), n * sizeof(E));
  return out;
}

}  // namespace

Expected<JobProfile> Job::profile() const {
  const std::string who = fmt::format("profile: ctx {} seqno {}", ctx_->id, seqno_);
  auto bytes =
      query_job(*ctx_, seqno_, DRM_NPU_QUERY_JOB_PROFILE, sizeof(drm_npu_job_profile), who);
  if (!bytes) return bytes.error();
  auto reply = split_reply<drm_npu_job_profile, drm_npu_cmd_profile>(
      *bytes, &drm_npu_job_profile::num_cmds, who, "timeline entries");
  if (!reply) return reply.error();
  const auto& [h, entries] = *reply;
  JobProfile p;
  p.seqno = h.seqno;
  p.cycles = h.cycles;
  std::copy(std::begin(h.busy_cycles), std::end(h.busy_cycles), p.busy_cycles.begin());
  p.dma_bytes_in = h.dma_bytes_in;
  p.dma_bytes_out = h.dma_bytes_out;
  p.macs = h.macs;
  p.vector_elements = h.vector_elements;
  p.semaphore_stall_cycles = h.semaphore_stall_cycles;
  p.timeline.reserve(entries.size());
  for (const drm_npu_cmd_profile& c : entries) {
    p.timeline.push_back({c.cmd_index, c.engine, c.opcode, c.start_cycle, c.end_cycle});
    if (c.opcode == DRM_NPU_PROFILE_PREEMPT) p.preempt_cycles += c.end_cycle - c.start_cycle;
  }
  p.preemptions = h.preemptions;
  return p;
}

size_t JobProfile::commands_executed() const {
  return static_cast<size_t>(std::count_if(timeline.begin(), timeline.end(), [](const auto& t) {
    return t.opcode != DRM_NPU_PROFILE_PREEMPT;
  }));
}

Expected<HazardReport> Job::hazards() const {
  const std::string who = fmt::format("hazards: ctx {} seqno {}", ctx_->id, seqno_);
  if (!ctx_->dev->params.has(DRM_NPU_CAP_RACECHECK)) {
    return make_error(EOPNOTSUPP, fmt::format("{}: the device has no synchronization checker "
                                              "(capability racecheck)",
                                              who));
  }
  auto bytes =
      query_job(*ctx_, seqno_, DRM_NPU_QUERY_JOB_HAZARDS, sizeof(drm_npu_job_hazards), who);
  if (!bytes) return bytes.error();
  auto reply = split_reply<drm_npu_job_hazards, drm_npu_hazard>(
      *bytes, &drm_npu_job_hazards::num_hazards, who, "hazards");
  if (!reply) return reply.error();
  const auto& [h, entries] = *reply;
  HazardReport r;
  r.checked = (h.flags & DRM_NPU_HAZARDS_CHECKED) != 0;
  r.partial = (h.flags & DRM_NPU_HAZARDS_PARTIAL) != 0;
  r.total = h.total;
  r.hazards.reserve(entries.size());
  for (const drm_npu_hazard& e : entries) r.hazards.push_back(hazard_from_abi(e));
  return r;
}

Expected<std::vector<JobRace>> Job::races() const {
  const std::string who = fmt::format("races: ctx {} seqno {}", ctx_->id, seqno_);
  if (!ctx_->dev->params.has(DRM_NPU_CAP_FENCES)) {
    return make_error(EOPNOTSUPP, who + ": the device has no cross-job checker (API 1.3)");
  }
  auto bytes = query_job(*ctx_, seqno_, DRM_NPU_QUERY_JOB_RACES, sizeof(drm_npu_job_races), who);
  if (!bytes) return bytes.error();
  auto reply = split_reply<drm_npu_job_races, drm_npu_job_race>(
      *bytes, &drm_npu_job_races::num_races, who, "races");
  if (!reply) return reply.error();
  const auto& [h, entries] = *reply;
  if ((h.flags & DRM_NPU_HAZARDS_CHECKED) == 0) {
    return make_error(EINVAL, who + ": the job was not submitted with racecheck");
  }
  std::vector<JobRace> out;
  for (const drm_npu_job_race& e : entries) {
    JobRace r;
    r.kind = e.kind;
    r.other_file = (e.flags & DRM_NPU_RACE_OTHER_FILE) != 0;
    r.other_ctx = e.other_ctx;
    r.other_seqno = e.other_seqno;
    r.bo_handle = e.bo_handle;
    r.begin = e.begin;
    r.end = e.end;
    r.other_cmd = e.first.cmd_index;
    r.this_cmd = e.second.cmd_index;
    out.push_back(r);
  }
  return out;
}

Expected<Fence> Job::fence() const {
  if (fence_ == nullptr) {
    return make_error(ENOENT, fmt::format("fence: ctx {} seqno {}: submitted without fence_out",
                                          ctx_->id, seqno_));
  }
  return fence_->dup();
}

std::string describe_race(const JobRace& race) {
  auto cmd = [](uint32_t c) {
    return c == 0xffffffffu ? std::string("a command") : fmt::format("command {}", c);
  };
  const char* kind = race.kind == DRM_NPU_HAZARD_RAW   ? "RAW"
                     : race.kind == DRM_NPU_HAZARD_WAR ? "WAR"
                                                       : "WAW";
  const std::string other = race.other_file
                                ? std::string("a job of another file")
                                : fmt::format("ctx {} seqno {}", race.other_ctx, race.other_seqno);
  return fmt::format("{} on bo {} [{:#x}, {:#x}): {} {} -> {}, with nothing ordering them", kind,
                     race.bo_handle, race.begin, race.end, other, cmd(race.other_cmd),
                     cmd(race.this_cmd));
}

}  // namespace npu
