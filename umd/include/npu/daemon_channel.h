// DaemonChannel: one connection to npu-daemon, i.e. one open file of its driver (or, attached,
// a second channel to a file another connection opened). The transport under libnpu's
// "unix:" backend (UnixKernel) and the preload shim's daemon device.
//
// Semantics: connect() connects and shakes hands (HELLO, uapi/npu_daemon.h); with
// `shareable` the daemon notes the identity of this process's end of the socket, so that a
// process which holds that end later (a forked child) can attach() to the same file over a
// channel of its own. ioctl() carries any ioctl of the table (npu/ioctl_marshal.h): results
// and errno are the driver's own. map() returns the memfd behind a BO's mmap offset (the
// caller maps it). A daemon that goes away makes every call fail with EIO.
//
// Threading: every call may come from any thread; calls from several threads are in flight
// together (a WAIT does not hold up a SUBMIT): whichever caller finds nobody reading the
// socket reads it and hands replies to their callers by sequence number.
// Lifetime: the channel owns its socket; destroying it (or shutdown()) ends the callers
// still waiting, which then fail with EIO.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "npu/daemon_wire.h"
#include "npu/expected.h"
#include "npu_daemon.h"

namespace npu {

/// What STATUS reports: the daemon's clients and the BO memory alive in it; from a protocol 3
/// daemon also each client's credentials (SO_PEERCRED), jobs in flight and the limits (the
/// fields a version 1-2 daemon does not send are 0).
struct DaemonStatus {
  uint32_t version = 0;  // the protocol version of the reply
  npu_daemon_status summary{};
  std::vector<npu_daemon_client> clients;
};

class DaemonChannel {
 public:
  /// Connects to the daemon at `socket_path` and opens a file of its driver. Errors carry
  /// the errno of connect() (ENOENT, ECONNREFUSED, ...) or EPROTO for a failed handshake.
  static Expected<std::unique_ptr<DaemonChannel>> connect(const std::string& socket_path,
                                                          bool shareable = false);
  /// Connects and joins the file of the shareable connection whose client end is
  /// `held_socket` (a descriptor this process holds). ENOENT: no such file in that daemon.
  static Expected<std::unique_ptr<DaemonChannel>> attach(const std::string& socket_path,
                                                         int held_socket);

  ~DaemonChannel();
  DaemonChannel(const DaemonChannel&) = delete;
  DaemonChannel& operator=(const DaemonChannel&) = delete;

  /// The connected socket (owned by the channel).
  int fd() const { return sock_.get(); }
  uint32_t client_id() const { return client_id_; }
  uint32_t file_id() const { return file_id_; }
  /// The protocol version agreed at HELLO.
  uint32_t version() const { return version_; }

  /// The driver's ioctl: 0, or -1 with errno (EIO when the daemon is gone).
  int ioctl(unsigned long request, void* arg);
  /// The memfd of the BO at mmap `offset` (checked by the daemon as the driver's mmap: length
  /// within the BO, MAP_SHARED), or an error with the driver's errno.
  Expected<wire::UniqueFd> map(uint64_t offset, uint64_t length, int flags);
  /// STATUS as the daemon reports it (this connection included).
  Expected<DaemonStatus> status();

  /// Ends every call in flight and every later one (EIO); the socket closes with the channel.
  void shutdown();

 private:
  explicit DaemonChannel(wire::UniqueFd sock) : sock_(std::move(sock)) {}
  static Expected<std::unique_ptr<DaemonChannel>> open(const std::string& socket_path,
                                                       uint32_t flags, int fd_to_send);
  Expected<wire::Message> call(uint16_t type, std::span<const std::span<const std::byte>> parts,
                               std::span<const int> fds = {});
  Error gone() const;  // needs mu_

  wire::UniqueFd sock_;
  uint32_t client_id_ = 0;
  uint32_t file_id_ = 0;
  uint32_t version_ = 0;
  std::atomic<uint32_t> next_seq_{1};
  std::atomic<bool> broken_{false};
  std::mutex send_mu_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool reading_ = false;
  std::string reason_;
  std::map<uint32_t, wire::Message> arrived_;
};

}  // namespace npu
