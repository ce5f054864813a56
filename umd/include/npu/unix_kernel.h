// UnixKernel: the kernel seam over a UNIX socket to npu-daemon — the backend of "unix:PATH"
// device strings (built into libnpu, registered next to "file"; the emulator is not linked).
//
// Semantics: open() connects to the daemon's socket and shakes hands (uapi/npu_daemon.h,
// docs/daemon.md); the returned descriptor is the connected socket and stands for one open
// file of the daemon's driver: its BO handles, contexts and address space belong to this
// connection alone, and closing it (or the process dying) frees them in the daemon. ioctl()
// sends the argument struct (and the bytes behind its user pointers: SUBMIT's BO list, QUERY's
// data) and copies the daemon's answer back, so results and errno are the driver's own.
// mmap() asks the daemon for the BO's memfd and maps it: the client and the device share the
// pages, no buffer contents travel over the socket. A daemon that goes away makes every call
// fail with EIO (mmap with MAP_FAILED/EIO).
//
// Threading: every call may come from any thread; calls on one descriptor from several threads
// are in flight together (a WAIT does not hold up a SUBMIT on the same descriptor): replies are
// matched to callers by sequence number (npu/daemon_channel.h, the transport).
// Lifetime: a UnixKernel holds its connections; destroying it closes those left open.
#pragma once

#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "npu/daemon_channel.h"
#include "npu/expected.h"
#include "npu/kernel.h"
#include "npu_daemon.h"

namespace npu {

/// The daemon serving `socket_path` as another client sees it: STATUS asked over a connection
/// of its own, which it leaves out of `clients` and of `summary.num_clients`.
Expected<DaemonStatus> daemon_status_of_others(const std::string& socket_path);

/// `st` (from daemon_status_of_others) as text: a summary line ("daemon PATH: 2 client(s)
/// besides this one, 7 served, 12288 bytes of BO memory") and one line per client with its
/// BOs, their bytes and its contexts.
std::string format_daemon_status(const std::string& socket_path, const DaemonStatus& st);

/// daemon_status_of_others() formatted: what `npu-daemon --status` and `npu-info --device
/// unix:PATH` print.
Expected<std::string> daemon_status_report(const std::string& socket_path);

class UnixKernel final : public KernelInterface {
 public:
  explicit UnixKernel(std::string socket_path);
  ~UnixKernel() override;
  UnixKernel(const UnixKernel&) = delete;
  UnixKernel& operator=(const UnixKernel&) = delete;

  /// Parses "unix:PATH" (EINVAL for another scheme or an empty path).
  static Expected<std::shared_ptr<UnixKernel>> create(std::string_view device);

  /// Connects to the socket (the `path` argument is ignored: the socket is the device).
  int open(std::string_view path) override;
  int close(int fd) override;
  int ioctl(int fd, unsigned long request, void* arg) override;
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override;
  int munmap(void* addr, size_t length) override;

  /// The daemon's STATUS over the connection `fd` (from open()).
  Expected<DaemonStatus> status(int fd);
  /// The daemon's id for connection `fd` (from its HELLO reply); 0 for an unknown fd.
  uint32_t client_id(int fd);

  const std::string& socket_path() const { return path_; }

 private:
  std::shared_ptr<DaemonChannel> find(int fd);

  std::string path_;
  std::shared_mutex mu_;
  std::unordered_map<int, std::shared_ptr<DaemonChannel>> conns_;
};

}  // namespace npu
