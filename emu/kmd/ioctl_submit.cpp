// SUBMIT: check the arguments, resolve the referenced BOs, copy and validate the command
// buffer, build the job's Mmu from exactly the referenced BOs, queue the job. Checks run in
// the order of docs/uapi.md so that a call with several problems gets a predictable errno.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "cmdbuf.h"
#include "driver.h"
#include "log.h"
#include "uaccess.h"

namespace npu::emu::kmd {
namespace {

static_assert(DRM_NPU_ACCESS_READ == isa::kRead && DRM_NPU_ACCESS_WRITE == isa::kWrite);

struct Ref {
  std::shared_ptr<Bo> bo;
  uint8_t access;
};

int reject(File& file, int err, const std::string& message) {
  log().warn("submit: {}", message);
  std::lock_guard lk(file.mu);
  file.last_error = message;
  return -err;
}

// The in-fences named at `s.in_fences`: the fences of this device they are, or an errno
// (EINVAL count or a descriptor that is no fence, EBADF not open, EFAULT unreadable).
int read_in_fences(Driver& drv, const drm_npu_submit& s,
                   std::vector<std::shared_ptr<SyncFence>>& out) {
  if (s.in_fence_count == 0) return 0;
  if (s.in_fence_count > DRM_NPU_MAX_IN_FENCES) return -EINVAL;
  std::array<int32_t, DRM_NPU_MAX_IN_FENCES> fds{};
  if (const int r = drv.uaccess.copy_from(fds.data(), s.in_fences, s.in_fence_count * 4); r < 0) {
    return r;
  }
  for (uint32_t i = 0; i < s.in_fence_count; ++i) {
    int err = 0;
    auto f = drv.fences.find(fds[i], err);
    if (f == nullptr) {
      log().debug("submit: in-fence {} (fd {}) is {}", i, fds[i],
                  err == EBADF ? "not open" : "no fence of this device");
      return -err;
    }
    out.push_back(std::move(f));
  }
  return 0;
}

// The job's footprint for the cross-job race checker: the BOs it lists, and with the checker
// every command's bytes (from the validator's DRAM accesses).
void record_footprint(Job& job, const std::vector<Ref>& refs) {
  job.bo_uses.reserve(refs.size());
  for (const Ref& r : refs) {
    job.bo_uses.push_back({r.bo->mem->id(), r.bo->size, r.bo->handle, r.access});
  }
  if (!job.racecheck) return;
  for (const isa::DramAccess& d : job.program->dram) {
    if (d.end <= d.begin) continue;
    // refs are sorted by VA: the last BO starting at or before the access holds it.
    auto it = std::upper_bound(refs.begin(), refs.end(), d.begin,
                               [](uint64_t va, const Ref& r) { return va < r.bo->va; });
    if (it == refs.begin()) continue;
    const Bo& bo = *std::prev(it)->bo;
    if (d.end > bo.va + bo.size) continue;
    const uint8_t op =
        d.cmd_index < job.program->cmds.size() ? job.program->cmds[d.cmd_index].hdr.opcode : 0;
    const uint8_t engine =
        d.cmd_index < job.program->cmds.size() ? job.program->cmds[d.cmd_index].hdr.engine : 0;
    job.touches.push_back({bo.mem->id(),
                           d.begin - bo.va,
                           d.end - bo.va,
                           static_cast<uint8_t>(d.access),
                           {d.cmd_index, engine, op}});
  }
}

}  // namespace

int ioctl_submit(Driver& drv, File& file, void* data) {
  auto& s = *static_cast<drm_npu_submit*>(data);
  s.fence_fd = -1;
  if ((s.flags & ~DRM_NPU_SUBMIT_FLAGS_VALID) != 0) return -EINVAL;

  // Reused by every submit of this thread (no allocation once warm).
  thread_local std::vector<drm_npu_bo_ref> user_refs;
  std::vector<Ref> refs;

  auto job = std::make_shared<Job>();
  std::shared_ptr<Context> ctx;
  std::shared_ptr<const isa::Program> kept;  // the command buffer's program, validated before
  std::shared_ptr<const BoMemory> cmd_mem;   // keeps cmd_src alive once the lock is released
  std::span<const std::byte> cmd_src;        // the command buffer where it lies
  {
    std::lock_guard lk(file.mu);
    if (file.closed) return -EBADF;
    file.last_error.clear();  // QUERY LAST_ERROR reports this submit's reason, or nothing
    ctx = file.find_context_locked(s.ctx_id);
    if (ctx == nullptr) return -ENOENT;
    if (ctx->banned.load(std::memory_order_relaxed)) return -ECANCELED;
    if (s.bo_count == 0 || s.bo_count > DRM_NPU_MAX_BO_REFS) return -EINVAL;
    user_refs.resize(s.bo_count);
    if (const int r =
            drv.uaccess.copy_from(user_refs.data(), s.bos, s.bo_count * sizeof(drm_npu_bo_ref));
        r < 0) {
      return r;
    }

    const Ref* cmd_ref = nullptr;
    for (const drm_npu_bo_ref& u : user_refs) {
      if (u.access == 0 || (u.access & ~(DRM_NPU_ACCESS_READ | DRM_NPU_ACCESS_WRITE)) != 0) {
        return -EINVAL;
      }
      auto bo = file.find_bo_locked(u.handle);
      if (bo == nullptr) return -ENOENT;
      if ((bo->flags & DRM_NPU_BO_DEVICE_READ_ONLY) && (u.access & DRM_NPU_ACCESS_WRITE)) {
        file.last_error = "submit: bo " + std::to_string(u.handle) +
                          " is device read-only but referenced with write access";
        log().debug("{}", file.last_error);
        return -EINVAL;
      }
      refs.push_back({std::move(bo), static_cast<uint8_t>(u.access)});
    }
    std::sort(refs.begin(), refs.end(),
              [](const Ref& a, const Ref& b) { return a.bo->va < b.bo->va; });
    for (size_t i = 0; i < refs.size(); ++i) {
      if (i > 0 && refs[i].bo == refs[i - 1].bo) {
        file.last_error = "submit: bo " + std::to_string(refs[i].bo->handle) + " listed twice";
        log().debug("{}", file.last_error);
        return -EINVAL;
      }
      if (refs[i].bo->handle == s.cmd_handle) cmd_ref = &refs[i];
    }

    if (cmd_ref == nullptr) {
      return file.find_bo_locked(s.cmd_handle) == nullptr ? -ENOENT : -EINVAL;
    }
    if ((cmd_ref->access & DRM_NPU_ACCESS_READ) == 0) return -EINVAL;
    if (s.cmd_offset % 8 != 0 || s.cmd_size == 0) return -EINVAL;
    const uint64_t cmd_bo_size = cmd_ref->bo->size;
    if (s.cmd_offset > cmd_bo_size || s.cmd_size > cmd_bo_size - s.cmd_offset) {
      return -EOVERFLOW;
    }
    if (s.cmd_size > sizeof(npu_cmdbuf_header) + uint64_t{NPU_MAX_CMDS} * NPU_CMD_SIZE) {
      file.last_error = "header: cmd_size " + std::to_string(s.cmd_size) +
                        " is larger than a command buffer of " + std::to_string(NPU_MAX_CMDS) +
                        " commands may be";
      log().warn("submit: {}", file.last_error);
      return -EINVAL;
    }
    // The job runs copies of the commands, so later writes to the BO do not affect it. The
    // buffer is read where it lies: the program cache compares it, and validate() and
    // parse_unvalidated() read its header once and copy each command once, checking (or
    // running) only their copies (program_cache.h).
    cmd_mem = cmd_ref->bo->mem;
    cmd_src = {cmd_mem->host() + s.cmd_offset, static_cast<size_t>(s.cmd_size)};
    if ((s.flags & DRM_NPU_SUBMIT_SKIP_VALIDATION) == 0) kept = file.programs.find(cmd_src);

    job->bos.reserve(refs.size());
    for (const Ref& r : refs) {
      if (!job->mmu.map(Mapping{r.bo->va, r.bo->size, r.bo->mem->host(), r.access})) {
        return -EINVAL;  // cannot happen: the VA allocator never overlaps BOs
      }
      job->bos.push_back(r.bo->mem);
    }
  }

  if ((s.flags & DRM_NPU_SUBMIT_SKIP_VALIDATION) != 0) {
    auto program = parse_unvalidated(cmd_src);
    if (!program) return reject(file, program.error().code, program.error().message);
    job->program = std::make_shared<const isa::Program>(std::move(*program));
  } else {
    auto program = kept != nullptr ? std::move(kept) : file.programs.validate(cmd_src, drv.cfg);
    if (!program) return reject(file, program.error().code, program.error().message);
    job->program = std::move(*program);
    if (auto r = check_dram_ranges(*job->program, job->mmu); !r) {
      return reject(file, r.error().code, r.error().message);
    }
  }

  // A caller that asked reads the hazards itself; for one that did not (the device config or
  // NPU_RACECHECK asked), the scheduler logs what the checker found.
  job->racecheck = (s.flags & DRM_NPU_SUBMIT_RACECHECK) != 0 || drv.cfg.racecheck;
  job->log_hazards = job->racecheck && (s.flags & DRM_NPU_SUBMIT_RACECHECK) == 0;
  record_footprint(*job, refs);
  refs = {};  // drop the Bo references (the job keeps the memory)
  if (const int r = read_in_fences(drv, s, job->deps); r < 0) return r;

  // The out-fence exists before the job is queued: the job may retire at once.
  PeerTable<SyncFence>::Handed handed;
  if ((s.flags & DRM_NPU_SUBMIT_FENCE_OUT) != 0) {
    job->out_fence = std::make_shared<SyncFence>();
    if (const int r = drv.fences.hand_out(job->out_fence, /*cloexec=*/true, handed); r < 0) {
      return r == -EMFILE || r == -ENFILE ? -EMFILE : r;
    }
    job->out_fence->kernel_fd = handed.kernel_fd;
  }
  log().trace("submit: ctx {}: {} commands, {} bos, {} in-fences{}{}", s.ctx_id,
              job->program->cmds.size(), s.bo_count, job->deps.size(),
              job->racecheck ? ", racecheck" : "", job->out_fence ? ", fence out" : "");
  // From here on the runner owns the job's inputs.
  if (const int r = drv.scheduler->submit(*ctx, job); r < 0) {
    if (job->out_fence != nullptr) {  // never queued: the fence dies with the job
      job->out_fence->signal(DRM_NPU_JOB_ABORTED);
      ::close(handed.user_fd);
    }
    if (r == -EDQUOT) {
      const JobAccount& jobs = ctx->jobs();
      reject(file, EDQUOT,
             quota_message(fmt::format("ctx {}: job {} in flight", s.ctx_id,
                                       jobs.in_flight.load(std::memory_order_relaxed) + 1),
                           "the file's limit of jobs in flight", jobs.limit));
    }
    return r;
  }
  s.seqno = job->seqno;
  if (job->out_fence != nullptr) s.fence_fd = handed.user_fd;
  return 0;
}

}  // namespace npu::emu::kmd
