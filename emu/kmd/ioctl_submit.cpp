// SUBMIT: check the arguments, resolve the referenced BOs, copy and validate the command
// buffer, build the job's Mmu from exactly the referenced BOs, queue the job. Checks run in
// the order of docs/uapi.md so that a call with several problems gets a predictable errno.
#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

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

}  // namespace

int ioctl_submit(Driver& drv, File& file, void* data) {
  auto& s = *static_cast<drm_npu_submit*>(data);
  if ((s.flags & ~DRM_NPU_SUBMIT_FLAGS_VALID) != 0) return -EINVAL;

  // Scratch buffers reused by every submit of this thread (no allocation once warm).
  thread_local std::vector<drm_npu_bo_ref> user_refs;
  thread_local std::vector<std::byte> cmd_bytes;
  // ...but do not keep a huge command buffer's copy alive for the life of the thread.
  struct TrimScratch {
    ~TrimScratch() {
      if (cmd_bytes.capacity() > (16u << 20)) cmd_bytes = {};
    }
  } trim;
  std::vector<Ref> refs;

  auto job = std::make_shared<Job>();
  std::shared_ptr<Context> ctx;
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
    // Copy the command stream now: later writes to the BO do not affect the job.
    const std::byte* src = cmd_ref->bo->mem->host() + s.cmd_offset;
    cmd_bytes.assign(src, src + s.cmd_size);

    job->bos.reserve(refs.size());
    for (const Ref& r : refs) {
      if (!job->mmu.map(Mapping{r.bo->va, r.bo->size, r.bo->mem->host(), r.access})) {
        return -EINVAL;  // cannot happen: the VA allocator never overlaps BOs
      }
      job->bos.push_back(r.bo->mem);
    }
  }
  refs = {};  // drop the Bo references (the job keeps the memory)

  const std::span<const std::byte> bytes(cmd_bytes.data(), cmd_bytes.size());
  if ((s.flags & DRM_NPU_SUBMIT_SKIP_VALIDATION) != 0) {
    auto program = parse_unvalidated(bytes);
    if (!program) return reject(file, program.error().code, program.error().message);
    job->program = std::move(*program);
  } else {
    auto program = isa::validate(bytes, drv.cfg);
    if (!program) return reject(file, program.error().code, program.error().message);
    job->program = std::move(*program);
    if (auto r = check_dram_ranges(job->program, job->mmu); !r) {
      return reject(file, r.error().code, r.error().message);
    }
  }

  // A caller that asked reads the hazards itself; for one that did not (the device config or
  // NPU_RACECHECK asked), the scheduler logs what the checker found.
  job->racecheck = (s.flags & DRM_NPU_SUBMIT_RACECHECK) != 0 || drv.cfg.racecheck;
  job->log_hazards = job->racecheck && (s.flags & DRM_NPU_SUBMIT_RACECHECK) == 0;
  log().trace("submit: ctx {}: {} commands, {} bos{}", s.ctx_id, job->program.cmds.size(),
              s.bo_count, job->racecheck ? ", racecheck" : "");
  // From here on the runner owns the job's inputs.
  if (const int r = drv.scheduler->submit(*ctx, job); r < 0) return r;
  s.seqno = job->seqno;
  return 0;
}

}  // namespace npu::emu::kmd
