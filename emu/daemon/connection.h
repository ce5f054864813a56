// Connection: one client of the daemon, one open file of its driver.
//
// Semantics: the reader thread receives requests in order: HELLO (first, once: version check,
// then Kmd::open — or, with NPU_DAEMON_HELLO_ATTACH, the shareable file of another connection
// whose socket the client holds: DriverFile), IOCTL (the argument struct and the bytes behind its
// user pointers, run through Kmd::ioctl on this connection's file), MAP (the BO's memfd, passed
// with SCM_RIGHTS) and STATUS. A blocking ioctl (WAIT, BO_WAIT: a deadline row in
// uapi/npu_ioctls.def) that would block goes to a waiter thread, so the reader goes on with the
// next request. A malformed message (bad magic or length, unknown type, sizes that do not add up,
// descriptors where none or fewer are due) is logged, answered with ERROR and ends this connection;
// the daemon and other connections go on. Threading: the reader and the waiters send replies under
// one lock; stop() may be called from any thread (it shuts the socket down, which ends the reader).
// Lifetime: the Server owns connections; when the reader ends, the driver file is closed (jobs
// aborted or drained, BOs and contexts freed), the waiters joined, and the socket closed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>
#include <vector>

#include "driver_file.h"
#include "npu/daemon_wire.h"
#include "npu/emu/credentials.h"
#include "npu/emu/kmd.h"
#include "npu/ioctl_marshal.h"
#include "npu/ioctl_table.h"
#include "npu_accel.h"
#include "npu_daemon.h"

namespace npu::daemon {

class Server;

class Connection {
 public:
  /// `peer`: the client as the kernel reports it (SO_PEERCRED, capabilities from /proc).
  Connection(Server& server, wire::UniqueFd sock, uint32_t id, const emu::Credentials& peer);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Starts the reader thread.
  void start();
  /// Ends the connection (from any thread); the reader then cleans up.
  void stop();
  /// True once the reader has cleaned up (the Server may join it).
  bool done() const { return done_.load(); }

  uint32_t id() const { return id_; }
  /// The client line of STATUS; false before HELLO.
  bool describe(npu_daemon_client& out) const;

 private:
  // One IOCTL request on its way through the driver (answered by the reader, or by a waiter
  // when it blocks).
  struct PendingCall {
    uint32_t seq = 0;
    unsigned long request = 0;
    const IoctlInfo* info = nullptr;  // nullptr: not in the ioctl table (sent as it came)
    std::vector<std::byte> arg;
    wire::ServerCall marshal;
  };

  void serve();
  /// Handles one message; false ends the connection (after an ERROR when `reason` is set).
  bool handle(wire::Message& m);
  bool handle_hello(const wire::Message& m);
  bool handle_ioctl(wire::Message& m);
  bool handle_map(const wire::Message& m);
  void reply_ioctl(uint32_t seq, int ret, int err, std::span<const std::byte> arg,
                   std::span<const std::byte> extra, std::span<const wire::UniqueFd> fds = {});
  bool send(uint16_t type, uint32_t seq, std::span<const std::span<const std::byte>> parts,
            std::span<const int> fds = {});
  bool protocol_error(uint32_t seq, int err, const std::string& message);
  /// The driver's ioctl on this connection's file: {ret, errno}.
  std::pair<int, int> call_driver(PendingCall& call);
  /// Sends the reply of a call the driver answered.
  void finish(PendingCall& call, int ret, int err);
  /// Logs a call the driver refused for a quota (EDQUOT) or the priority policy (EPERM),
  /// with the driver's reason (QUERY LAST_ERROR).
  void log_refusal(const PendingCall& call, int err);
  void queue_wait(PendingCall call);
  void waiter();
  void close_file();

  Server& server_;
  emu::Kmd& kmd_;
  wire::UniqueFd sock_;
  const uint32_t id_;
  /// The driver file, or nullptr before HELLO and after close.
  std::shared_ptr<DriverFile> file() const;

  // The driver file this connection is a channel of; nullptr before HELLO and after close.
  // A driver call holds its own reference, so the file outlives every call in flight.
  mutable std::shared_mutex file_mu_;
  std::shared_ptr<DriverFile> file_;
  std::atomic<bool> closing_{false};  // set before file_mu_ is taken to close
  const emu::Credentials peer_;
  std::atomic<uint32_t> hello_pid_{0};  // what HELLO claimed (logs only)
  std::atomic<uint32_t> version_{0};    // the protocol version agreed at HELLO
  std::atomic<bool> done_{false};
  std::thread reader_;
  std::mutex send_mu_;

  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  std::deque<PendingCall> waits_;
  size_t idle_waiters_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> waiters_;
};

}  // namespace npu::daemon
