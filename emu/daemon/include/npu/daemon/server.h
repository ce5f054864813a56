// Server: npu-daemon's core. It owns one emulated device (emu::Kmd, the mock kernel driver and
// its threaded device model) and serves it to many processes over a UNIX socket
// (uapi/npu_daemon.h, docs/daemon.md).
//
// Semantics: every accepted connection that completes the HELLO handshake becomes one open
// file of the driver, so the ioctl table, validation and errno contract are the driver's own,
// and handles, contexts and address spaces are per connection. BO memory is shared with the
// client by passing the BO's memfd (SCM_RIGHTS); buffer bytes never cross the socket. When a
// connection ends (close, crash, SIGKILL of the client, or a protocol error, which is logged
// and ends that connection only) its file is closed: queued jobs aborted, the running one
// drained, BOs and contexts freed. Messages are bounded (NPU_DAEMON_MAX_PAYLOAD); a client
// that stops reading its replies is dropped after a send timeout.
// Who a client is comes from the kernel, not from the client: the socket is created 0600 (0660
// for ServerOptions::group), each accepted connection's pid, uid and gid are read with
// SO_PEERCRED and its capabilities from /proc/PID/status; a client may create REALTIME
// contexts when it holds CAP_SYS_NICE or its uid is on ServerOptions::realtime_uids. Each
// client is one file of the driver, so the device config's quotas (isa::QuotaConfig) apply per
// client; STATUS (protocol 3) shows every client's credentials and use against the limits.
// Threading: run() accepts on the calling thread; each connection has a reader thread that
// answers requests in order, and WAITs that would block go to per-connection waiter threads,
// so a blocked WAIT holds up neither its own connection nor anyone else's. stop() may be
// called from any thread or a signal handler.
// Lifetime: the destructor stops run() if needed, ends every connection (closing their
// files), joins every thread and removes the socket file.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "npu/daemon_wire.h"
#include "npu/emu/credentials.h"
#include "npu/expected.h"
#include "npu/isa/device_config.h"
#include "npu_daemon.h"

namespace npu::emu {
class Kmd;
}

namespace npu::daemon {

class Connection;
class FileRegistry;

/// How the daemon admits clients.
struct ServerOptions {
  /// Create the socket 0660 and owned by this group (clients in it may connect); else 0600.
  std::optional<gid_t> group;
  /// Users whose clients may create REALTIME contexts without CAP_SYS_NICE.
  std::vector<uid_t> realtime_uids;
};

class Server {
 public:
  /// Listens at `socket_path` (listen_unix(): stale sockets replaced, EADDRINUSE when a
  /// daemon answers there) and builds the device from `config`.
  static Expected<std::unique_ptr<Server>> create(std::string socket_path, isa::DeviceConfig config,
                                                  ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Accepts and serves connections until stop(). Returns once every connection has ended.
  void run();
  /// Makes run() return. Async-signal-safe (an atomic store and a write(2)).
  void stop();

  const std::string& socket_path() const { return path_; }
  emu::Kmd& kmd() { return *kmd_; }
  /// The shareable driver files, for ATTACH (connection.cpp).
  FileRegistry& files() { return *files_; }

  /// The STATUS reply in protocol `version`: the clients past HELLO, the BO memory alive and
  /// (version 3) the limits.
  std::vector<std::byte> status_payload(uint32_t version);
  /// Whether a client with these credentials may create REALTIME contexts.
  bool may_realtime(const emu::Credentials& who) const;

 private:
  Server(std::string path, wire::UniqueFd listener, wire::UniqueFd wake,
         std::unique_ptr<emu::Kmd> kmd, ServerOptions options);
  friend class Connection;
  /// Called by a connection's thread as it ends: run() joins it.
  void connection_done();
  void accept_one();
  void reap(bool all);

  std::string path_;
  wire::UniqueFd listener_;
  wire::UniqueFd wake_;  // eventfd: stop() and finished connections wake run()
  std::unique_ptr<emu::Kmd> kmd_;
  const ServerOptions options_;
  std::unique_ptr<FileRegistry> files_;
  std::atomic<bool> stop_{false};
  std::atomic<uint32_t> next_client_{1};
  std::atomic<uint64_t> served_{0};
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> conns_;
};

}  // namespace npu::daemon
