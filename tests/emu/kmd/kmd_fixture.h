// Helpers for the kmd tests: a Kmd with one open file, typed wrappers that return errno
// (0 on success), BO mapping, command-buffer upload and deadline helpers. No test sleeps:
// every wait is a WAIT ioctl with an absolute deadline.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <time.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "npu/emu/kmd.h"
#include "npu/isa/builder.h"
#include "npu/test/raw_file.h"
#include "npu_accel.h"

namespace npu::emu::test {

// The raw-ioctl helpers, deadlines and shared jobs (npu/test/raw_file.h).
using namespace npu::test;  // NOLINT(google-build-using-namespace)
using BoHandle = npu::test::RawBo;

/// Wraps one open file of a Kmd.
class Client : public npu::test::RawFile<Client> {
 public:
  Client(Kmd& kmd) : kmd_(kmd), fd_(kmd.open()) {}
  /// A file opened for `who` (the driver's priority policy: Kmd::Opener).
  Client(Kmd& kmd, const Kmd::Opener& who) : kmd_(kmd), fd_(kmd.open(who)) {}
  ~Client() {
    for (auto& [p, len] : maps_) kmd_.munmap(p, len);
    if (fd_ >= 0) kmd_.close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  int fd() const { return fd_; }
  Kmd& kmd() { return kmd_; }

  /// ioctl returning errno (0 on success).
  int io(unsigned long request, void* arg) {
    return kmd_.ioctl(fd_, request, arg) == 0 ? 0 : errno;
  }

  /// For RawFile::map: the mapping is undone when the client goes away.
  void* map_pages(uint64_t size, uint64_t offset) {
    void* p = kmd_.mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                        static_cast<off_t>(offset));
    if (p != MAP_FAILED) {
      std::lock_guard lk(maps_mu_);  // the stress tests map from several threads on one client
      maps_.push_back({p, size});
    }
    return p;
  }

 private:
  Kmd& kmd_;
  int fd_;
  std::mutex maps_mu_;
  std::vector<std::pair<void*, size_t>> maps_;
};

/// Hung jobs (npu::test::hung_job) are submitted with these flags: unvalidated, the device
/// meets the wait and only the watchdog ends the job.
inline constexpr uint32_t kHangFlags = DRM_NPU_SUBMIT_SKIP_VALIDATION;

/// A device config with a short watchdog for the tests that need one.
inline isa::DeviceConfig config_with_watchdog(uint32_t ms) {
  isa::DeviceConfig cfg;
  cfg.watchdog_ms = ms;
  return cfg;
}

}  // namespace npu::emu::test
