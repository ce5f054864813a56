// Kmd: the mock kernel driver of one NPU device node. It has the shape of the real calls:
// open()/close() give and release a file, ioctl(fd, request, arg) returns 0 or -1 with errno,
// mmap() maps a BO by the offset BO_INFO reported. Below it lives one Device.
// Per open file: BO handles, a device-VA allocator (the file's address space, shared by its
// contexts) and contexts; all freed on close. Jobs from all files are scheduled by context
// priority (round-robin between contexts of one priority, FIFO within a context) and run one
// at a time; a watchdog resets the device when a job runs longer than the configured time and
// bans the guilty context. Jobs with safe points (ISA 1.2) are preempted there for more urgent
// work and resumed later (DeviceConfig::scheduling). Every file is held to the config's quotas
// (BO memory, contexts, jobs in flight: EDQUOT), and REALTIME contexts are for openers with
// CAP_SYS_NICE or on the caller's allow-list (EPERM otherwise).
// Thread-safe: every entry point may be called from any thread.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "npu/isa/device_config.h"

namespace npu::emu {

class Kmd {
 public:
  struct Options {
    /// Follow every user pointer (and the ioctl argument itself) with checked copies, so a
    /// bad address is EFAULT instead of a crash (npu/user_memory.h): for callers that are
    /// programs we did not write (the preload shim). Off for libnpu's own backend.
    bool checked_user_access = false;
  };

  explicit Kmd(isa::DeviceConfig cfg = {});
  Kmd(isa::DeviceConfig cfg, Options options);
  ~Kmd();
  Kmd(const Kmd&) = delete;
  Kmd& operator=(const Kmd&) = delete;

  /// Who opens a file, as far as the driver's policy cares.
  struct Opener {
    /// May create REALTIME contexts: the opener holds CAP_SYS_NICE, or an allow-list (a
    /// daemon's --allow-realtime) says so.
    bool realtime = false;
  };

  /// Opens a file on the device for the calling process (REALTIME if it holds CAP_SYS_NICE);
  /// returns a descriptor, or -1 with errno.
  int open();
  /// Opens a file for `who` (a daemon's client).
  int open(const Opener& who);
  /// Closes a file: aborts its queued jobs, waits for its running job, frees everything.
  int close(int fd);
  /// DRM-style ioctl: 0 on success, -1 with errno (see docs/uapi.md). Answers the driver's
  /// ioctls and the core DRM ones an accel node has (uapi/npu_ioctls.def).
  int ioctl(int fd, unsigned long request, void* arg);
  /// Maps a BO of `fd` at the mmap offset BO_INFO gave; MAP_FAILED with errno on error.
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset);
  /// Unmaps a mapping returned by mmap().
  int munmap(void* addr, size_t length);

  /// The memfd behind the BO of `fd` at mmap `offset`, checked as mmap() checks (length within
  /// the BO, `flags` MAP_SHARED): a new descriptor the caller owns (a daemon passes it to its
  /// client, which maps the same pages), or -1 with errno. The memfd is sealed against
  /// shrinking and growing, so a client cannot pull pages from under the device.
  int export_bo(int fd, uint64_t offset, size_t length, int flags);

  /// What one open file holds.
  struct FileUsage {
    uint32_t bos = 0;
    uint32_t contexts = 0;
    uint64_t bo_bytes = 0;
    uint32_t jobs_in_flight = 0;
    bool realtime = false;  // the file may create REALTIME contexts
  };
  /// The usage of `fd`; all zero for an unknown fd.
  FileUsage usage(int fd) const;
  /// Bytes of BO memory alive in this process (every Kmd's files and jobs; a BO closed while a
  /// job uses it counts until the job retires).
  static uint64_t bo_memory_bytes();

  /// The limits every file of this driver is held to (the config's quotas, resolved).
  struct Limits {
    uint64_t bo_memory = 0;         // per file
    uint64_t device_bo_memory = 0;  // all files together
    uint32_t contexts = 0;          // per file
    uint32_t jobs_in_flight = 0;    // per file
  };
  Limits limits() const;
  /// Bytes of BO memory alive on this device (its files and jobs).
  uint64_t device_bo_memory() const;

  const isa::DeviceConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace npu::emu
