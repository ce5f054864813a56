// npu::testing: the device mock users link into their gtest binaries (CMake: npu::testing).
//
// MockKernel is a plain gmock mock of npu::KernelInterface, one MOCK_METHOD per call, for
// tests that want to script everything themselves. FakeNpuKernel is a MockKernel whose
// default actions (ON_CALL ... WillByDefault) delegate to a real kernel — by default an
// in-process emu::EmulatorKernel (npu::testing links npu::emu) — so a test scripts only what
// it cares about: EXPECT_CALL still works for counting and ordering (an EXPECT_CALL without
// an action keeps the delegating default), and the helpers below inject the failures drivers
// must survive:
//
//   auto kernel = std::make_shared<::testing::NiceMock<npu::testing::FakeNpuKernel>>();
//   auto dev = npu::Device::open_with(kernel);
//   kernel->fail_next(DRM_IOCTL_NPU_SUBMIT, EINVAL);   // next SUBMIT: -1, errno EINVAL
//   kernel->interrupt_next_wait(3);                    // next 3 WAITs: EINTR, then real
//   kernel->report_hazards_next_submit(report);        // that job's QUERY JOB_HAZARDS
//   kernel->hang_next_fence();                         // next out-fence never signals
//   EXPECT_CALL(*kernel, ioctl(_, DRM_IOCTL_NPU_BO_CLOSE, _)).Times(2);
//
// FakeNpuKernel also installs catch-all expectations (EXPECT_CALL(...).Times(AnyNumber()))
// for every method, so a test's own EXPECT_CALL for one request (newer expectations match
// first) does not make the other calls unexpected.
// Scripted actions are consumed in order, per request, by the calls that reach the default
// action (an EXPECT_CALL with its own action bypasses them). Every SUBMIT that reaches the
// default action is recorded (bytes of the command buffer, the BO list, result) for
// inspection, whether it was scripted to fail or forwarded.
//
// Threading: the mock may be called from several threads (gmock is thread-safe; the scripts
// and records are guarded by a mutex). Lifetime: hold it in a std::shared_ptr and pass it to
// Device::open_with(); libnpu objects keep it alive. gmock verifies expectations when the
// last reference goes, so release the libnpu objects before the end of the test body when
// EXPECT_CALLs should be checked there.
#pragma once

#include <gmock/gmock.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "npu/expected.h"
#include "npu/hazard.h"
#include "npu/isa/device_config.h"
#include "npu/isa/validate.h"
#include "npu/job.h"
#include "npu/kernel.h"
#include "npu_accel.h"

namespace npu::testing {

class MockKernel : public KernelInterface {
 public:
  MOCK_METHOD(int, open, (std::string_view path), (override));
  MOCK_METHOD(int, close, (int fd), (override));
  MOCK_METHOD(int, ioctl, (int fd, unsigned long request, void* arg), (override));
  MOCK_METHOD(void*, mmap, (void* addr, size_t length, int prot, int flags, int fd, off_t offset),
              (override));
  MOCK_METHOD(int, munmap, (void* addr, size_t length), (override));
};

/// One SUBMIT as the fake saw it.
struct SubmitRecord {
  drm_npu_submit args{};            // as passed in; seqno filled on success
  std::vector<std::byte> cmd;       // the command buffer bytes (cmd_size bytes at cmd_offset)
  std::vector<drm_npu_bo_ref> bos;  // the BO list
  int error = 0;                    // 0, or the errno the call failed with

  /// The command buffer decoded and validated (isa::validate) against `config`.
  Expected<isa::Program> program(const isa::DeviceConfig& config = {}) const;
  /// Whether the job was submitted under the synchronization checker.
  bool racecheck() const { return (args.flags & DRM_NPU_SUBMIT_RACECHECK) != 0; }
};

/// What a scripted call does instead of (or around) the real one: returns the call's result
/// with errno set, like the real call. `real` is the kernel the fake delegates to.
using IoctlAction = std::function<int(KernelInterface& real, int fd, void* arg)>;

class FakeNpuKernel : public MockKernel {
 public:
  /// Delegates to a new in-process emulator with `config`.
  explicit FakeNpuKernel(isa::DeviceConfig config = {});
  /// Delegates to `real` (any backend).
  explicit FakeNpuKernel(std::shared_ptr<KernelInterface> real);
  ~FakeNpuKernel() override;

  /// The kernel the default actions delegate to.
  KernelInterface& real() const { return *real_; }

  /// The next `times` calls of `request` run `action` instead of the default.
  void on_next(unsigned long request, IoctlAction action, int times = 1);
  /// The next `times` calls of `request` fail with -1 / `err` without reaching the kernel.
  void fail_next(unsigned long request, int err, int times = 1);
  /// The next BO_CREATE fails with `err` (ENOMEM: device memory exhausted).
  void fail_next_bo_create(int err = ENOMEM);
  /// The next mmap fails with `err`.
  void fail_next_mmap(int err = ENOMEM);
  /// The next `times` WAITs report ETIMEDOUT (status TIMEOUT) at once, the job untouched.
  void timeout_next_wait(int times = 1);
  /// The next `times` WAITs fail with EINTR (a signal arrived) before reaching the kernel.
  void interrupt_next_wait(int times);
  /// The next WAIT runs for real, then reports status ERROR with `fault` (the emulator's
  /// context is not banned by this: only the reported result changes).
  void fault_next_wait(const Fault& fault);
  /// The job of the next successful SUBMIT reports `report` from QUERY JOB_HAZARDS (as if the
  /// synchronization checker had found these hazards), whatever the device found; the job
  /// itself runs for real.
  void report_hazards_next_submit(HazardReport report);
  /// The next SUBMIT asking for an out-fence (API 1.3) runs for real, but hands back a fence
  /// that never signals (a descriptor the fake keeps unsignalled until it is destroyed): for
  /// testing what a driver does with a dependency that never completes.
  void hang_next_fence();
  /// The next BO_IMPORT fails with `err` (EINVAL: not an exported BO of this device).
  void fail_next_import(int err = EINVAL);
  /// Drops every pending scripted action.
  void clear_scripts();

  /// Every SUBMIT that reached the default action, in order.
  std::vector<SubmitRecord> submits() const;
  /// How many calls of `request` reached the default action.
  size_t calls(unsigned long request) const;

 private:
  int default_ioctl(int fd, unsigned long request, void* arg);
  void* default_mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset);
  SubmitRecord capture_submit(int fd, const drm_npu_submit& s);
  void install_defaults();

  std::shared_ptr<KernelInterface> real_;
  mutable std::mutex mu_;
  std::map<unsigned long, std::deque<IoctlAction>> scripts_;
  int mmap_failures_ = 0;
  int mmap_errno_ = 0;
  std::vector<SubmitRecord> submits_;
  std::map<unsigned long, size_t> calls_;
  std::optional<HazardReport> next_hazards_;
  std::map<std::tuple<int, uint32_t, uint64_t>, HazardReport> hazards_;  // (fd, ctx, seqno)
  std::vector<int> hung_fence_ends_;  // the kept ends of hang_next_fence()'s fences
};

}  // namespace npu::testing
