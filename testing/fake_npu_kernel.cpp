// FakeNpuKernel: default actions that delegate to a real kernel, per-request scripted
// actions, and the SUBMIT recorder.
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "npu/emu/emulator_kernel.h"
#include "npu/testing/mock_kernel.h"

namespace npu::testing {

namespace {

int fail_with(int err) {
  errno = err;
  return -1;
}

}  // namespace

Expected<isa::Program> SubmitRecord::program(const isa::DeviceConfig& config) const {
  return isa::validate(cmd, config);
}

FakeNpuKernel::FakeNpuKernel(isa::DeviceConfig config)
    : real_(std::make_shared<emu::EmulatorKernel>(std::move(config))) {
  install_defaults();
}

FakeNpuKernel::FakeNpuKernel(std::shared_ptr<KernelInterface> real) : real_(std::move(real)) {
  install_defaults();
}

FakeNpuKernel::~FakeNpuKernel() {
  for (int fd : hung_fence_ends_) ::close(fd);  // the hung fences hang up now
}

void FakeNpuKernel::install_defaults() {
  using ::testing::_;
  using ::testing::AnyNumber;
  // Catch-alls: a test's own EXPECT_CALL for one request (newer expectations match first)
  // must not turn every other call into an unexpected one.
  EXPECT_CALL(*this, open(_)).Times(AnyNumber());
  EXPECT_CALL(*this, close(_)).Times(AnyNumber());
  EXPECT_CALL(*this, ioctl(_, _, _)).Times(AnyNumber());
  EXPECT_CALL(*this, mmap(_, _, _, _, _, _)).Times(AnyNumber());
  EXPECT_CALL(*this, munmap(_, _)).Times(AnyNumber());
  ON_CALL(*this, open(_)).WillByDefault([this](std::string_view path) {
    return real_->open(path);
  });
  ON_CALL(*this, close(_)).WillByDefault([this](int fd) { return real_->close(fd); });
  ON_CALL(*this, ioctl(_, _, _)).WillByDefault([this](int fd, unsigned long request, void* arg) {
    return default_ioctl(fd, request, arg);
  });
  ON_CALL(*this, mmap(_, _, _, _, _, _))
      .WillByDefault([this](void* addr, size_t length, int prot, int flags, int fd, off_t off) {
        return default_mmap(addr, length, prot, flags, fd, off);
      });
  ON_CALL(*this, munmap(_, _)).WillByDefault([this](void* addr, size_t length) {
    return real_->munmap(addr, length);
  });
}

void FakeNpuKernel::on_next(unsigned long request, IoctlAction action, int times) {
  std::lock_guard lk(mu_);
  for (int i = 0; i < times; ++i) scripts_[request].push_back(action);
}

void FakeNpuKernel::fail_next(unsigned long request, int err, int times) {
  on_next(
      request, [err](KernelInterface&, int, void*) { return fail_with(err); }, times);
}

void FakeNpuKernel::fail_next_bo_create(int err) {
  fail_next(DRM_IOCTL_NPU_BO_CREATE, err);
}

void FakeNpuKernel::fail_next_mmap(int err) {
  std::lock_guard lk(mu_);
  ++mmap_failures_;
  mmap_errno_ = err;
}

void FakeNpuKernel::timeout_next_wait(int times) {
  on_next(
      DRM_IOCTL_NPU_WAIT,
      [](KernelInterface&, int, void* arg) {
        static_cast<drm_npu_wait*>(arg)->status = DRM_NPU_JOB_TIMEOUT;
        return fail_with(ETIMEDOUT);
      },
      times);
}

void FakeNpuKernel::interrupt_next_wait(int times) {
  fail_next(DRM_IOCTL_NPU_WAIT, EINTR, times);
}

void FakeNpuKernel::fault_next_wait(const Fault& fault) {
  on_next(DRM_IOCTL_NPU_WAIT, [fault](KernelInterface& real, int fd, void* arg) {
    const int ret = real.ioctl(fd, DRM_IOCTL_NPU_WAIT, arg);
    if (ret == 0) {
      auto& w = *static_cast<drm_npu_wait*>(arg);
      w.status = DRM_NPU_JOB_ERROR;
      w.fault = {fault.kind, fault.engine, fault.cmd_index, 0, fault.address};
    }
    return ret;
  });
}

void FakeNpuKernel::report_hazards_next_submit(HazardReport report) {
  std::lock_guard lk(mu_);
  next_hazards_ = std::move(report);
}

void FakeNpuKernel::hang_next_fence() {
  on_next(DRM_IOCTL_NPU_SUBMIT, [this](KernelInterface& real, int fd, void* arg) {
    auto& s = *static_cast<drm_npu_submit*>(arg);
    const int ret = real.ioctl(fd, DRM_IOCTL_NPU_SUBMIT, arg);
    if (ret != 0 || (s.flags & DRM_NPU_SUBMIT_FENCE_OUT) == 0) return ret;
    // Swap the real fence for one end of a pair whose other end nobody ever writes.
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return ret;
    ::close(s.fence_fd);
    s.fence_fd = sv[0];
    std::lock_guard lk(mu_);
    hung_fence_ends_.push_back(sv[1]);
    return ret;
  });
}

void FakeNpuKernel::fail_next_import(int err) {
  fail_next(DRM_IOCTL_NPU_BO_IMPORT, err);
}

void FakeNpuKernel::clear_scripts() {
  std::lock_guard lk(mu_);
  scripts_.clear();
  mmap_failures_ = 0;
  next_hazards_.reset();
}

std::vector<SubmitRecord> FakeNpuKernel::submits() const {
  std::lock_guard lk(mu_);
  return submits_;
}

size_t FakeNpuKernel::calls(unsigned long request) const {
  std::lock_guard lk(mu_);
  const auto it = calls_.find(request);
  return it == calls_.end() ? 0 : it->second;
}

SubmitRecord FakeNpuKernel::capture_submit(int fd, const drm_npu_submit& s) {
  SubmitRecord rec;
  rec.args = s;
  if (s.bos != 0 && s.bo_count <= DRM_NPU_MAX_BO_REFS) {
    const auto* refs = reinterpret_cast<const drm_npu_bo_ref*>(static_cast<uintptr_t>(s.bos));
    rec.bos.assign(refs, refs + s.bo_count);
  }
  // Read the command bytes through a temporary mapping of the command BO.
  drm_npu_bo_info info{};
  info.handle = s.cmd_handle;
  if (real_->ioctl(fd, DRM_IOCTL_NPU_BO_INFO, &info) != 0) return rec;
  if (s.cmd_offset > info.size || s.cmd_size > info.size - s.cmd_offset) return rec;
  void* p = real_->mmap(nullptr, info.size, PROT_READ, MAP_SHARED, fd,
                        static_cast<off_t>(info.mmap_offset));
  if (p == MAP_FAILED) return rec;
  const auto* bytes = static_cast<const std::byte*>(p) + s.cmd_offset;
  rec.cmd.assign(bytes, bytes + s.cmd_size);
  real_->munmap(p, info.size);
  return rec;
}

namespace {

/// QUERY JOB_HAZARDS for a job report_hazards_next_submit() scripted: answered here, size
/// negotiated as the kernel does. False when the query is not for such a job.
bool answer_hazards(const std::map<std::tuple<int, uint32_t, uint64_t>, HazardReport>& scripted,
                    int fd, drm_npu_query& q, int& ret) {
  if (q.type != DRM_NPU_QUERY_JOB_HAZARDS || q.arg0 > UINT32_MAX) return false;
  const auto it = scripted.find({fd, static_cast<uint32_t>(q.arg0), q.arg1});
  if (it == scripted.end()) return false;
  const HazardReport& r = it->second;
  drm_npu_job_hazards h{};
  h.seqno = q.arg1;
  h.flags = (r.checked ? DRM_NPU_HAZARDS_CHECKED : 0u) | (r.partial ? DRM_NPU_HAZARDS_PARTIAL : 0u);
  h.num_hazards = static_cast<uint32_t>(r.hazards.size());
  h.total = std::max<uint64_t>(r.total, r.hazards.size());
  std::vector<std::byte> out(sizeof(h) + r.hazards.size() * sizeof(drm_npu_hazard));
  std::memcpy(out.data(), &h, sizeof(h));
  for (size_t i = 0; i < r.hazards.size(); ++i) {
    const drm_npu_hazard a = hazard_to_abi(r.hazards[i]);
    std::memcpy(out.data() + sizeof(h) + i * sizeof(a), &a, sizeof(a));
  }
  if (q.size != 0) {
    if (q.data == 0) {
      ret = fail_with(EFAULT);
      return true;
    }
    std::memcpy(reinterpret_cast<void*>(static_cast<uintptr_t>(q.data)), out.data(),
                std::min<size_t>(q.size, out.size()));
  }
  q.size = static_cast<uint32_t>(out.size());
  ret = 0;
  return true;
}

}  // namespace

int FakeNpuKernel::default_ioctl(int fd, unsigned long request, void* arg) {
  IoctlAction action;
  {
    std::lock_guard lk(mu_);
    ++calls_[request];
    if (request == DRM_IOCTL_NPU_QUERY && arg != nullptr) {
      int ret = 0;
      if (answer_hazards(hazards_, fd, *static_cast<drm_npu_query*>(arg), ret)) return ret;
    }
    auto it = scripts_.find(request);
    if (it != scripts_.end() && !it->second.empty()) {
      action = std::move(it->second.front());
      it->second.pop_front();
    }
  }
  const bool submit = request == DRM_IOCTL_NPU_SUBMIT && arg != nullptr;
  SubmitRecord rec;
  if (submit) {
    const int saved = errno;
    rec = capture_submit(fd, *static_cast<const drm_npu_submit*>(arg));
    errno = saved;
  }
  const int ret = action ? action(*real_, fd, arg) : real_->ioctl(fd, request, arg);
  const int err = errno;
  if (submit) {
    rec.error = ret == 0 ? 0 : err;
    if (ret == 0) rec.args.seqno = static_cast<const drm_npu_submit*>(arg)->seqno;
    std::lock_guard lk(mu_);
    if (ret == 0 && next_hazards_) {
      hazards_[{fd, rec.args.ctx_id, rec.args.seqno}] = std::move(*next_hazards_);
      next_hazards_.reset();
    }
    submits_.push_back(std::move(rec));
  }
  errno = err;
  return ret;
}

void* FakeNpuKernel::default_mmap(void* addr, size_t length, int prot, int flags, int fd,
                                  off_t offset) {
  {
    std::lock_guard lk(mu_);
    if (mmap_failures_ > 0) {
      --mmap_failures_;
      errno = mmap_errno_;
      return MAP_FAILED;
    }
  }
  return real_->mmap(addr, length, prot, flags, fd, offset);
}

}  // namespace npu::testing
