// Connection: one client of the daemon, one open file of its driver.
//
// Semantics: the reader thread receives requests in order: HELLO (first, once: version check,
// then Kmd::open), IOCTL (the argument struct and the bytes behind its user pointers, run
// through Kmd::ioctl on this connection's file), MAP (the BO's memfd, passed with SCM_RIGHTS)
// and STATUS. A WAIT whose job has not retired goes to a waiter thread, so the reader goes on
// with the next request. A malformed message (bad magic or length, unknown type, sizes that do
// not add up, descriptors sent to the daemon) is logged, answered with ERROR and ends this
// connection; the daemon and other connections go on.
// Threading: the reader and the waiters send replies under one lock; stop() may be called from
// any thread (it shuts the socket down, which ends the reader).
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
#include <vector>

#include "npu/daemon_wire.h"
#include "npu/emu/kmd.h"
#include "npu_accel.h"
#include "npu_daemon.h"

namespace npu::daemon {

class Server;

class Connection {
 public:
  Connection(Server& server, wire::UniqueFd sock, uint32_t id);
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
  struct PendingWait {
    uint32_t seq;
    drm_npu_wait arg;
  };

  void serve();
  /// Handles one message; false ends the connection (after an ERROR when `reason` is set).
  bool handle(wire::Message& m);
  bool handle_hello(const wire::Message& m);
  bool handle_ioctl(const wire::Message& m);
  bool handle_map(const wire::Message& m);
  void reply_ioctl(uint32_t seq, int ret, int err, std::span<const std::byte> arg,
                   std::span<const std::byte> extra);
  bool send(uint16_t type, uint32_t seq, std::span<const std::span<const std::byte>> parts,
            std::span<const int> fds = {});
  bool protocol_error(uint32_t seq, int err, const std::string& message);
  void queue_wait(uint32_t seq, const drm_npu_wait& w);
  void waiter();
  void close_file();

  Server& server_;
  emu::Kmd& kmd_;
  wire::UniqueFd sock_;
  const uint32_t id_;
  // The driver file; -1 before HELLO and after close. Driver calls hold file_mu_ shared,
  // closing holds it exclusively, so no call can reach a reused descriptor number.
  mutable std::shared_mutex file_mu_;
  int kmd_fd_ = -1;
  std::atomic<bool> closing_{false};  // set before file_mu_ is taken to close
  std::atomic<uint32_t> pid_{0};
  std::atomic<bool> done_{false};
  std::thread reader_;
  std::mutex send_mu_;

  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  std::deque<PendingWait> waits_;
  size_t idle_waiters_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> waiters_;
};

}  // namespace npu::daemon
