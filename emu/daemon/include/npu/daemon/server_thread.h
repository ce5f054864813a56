// ServerThread: a Server running on a thread of the calling process, for tests and benchmarks
// that want a daemon without a second process (the CTS's "daemon" backend, bench_daemon).
//
// Semantics: start() creates the Server at `socket_path` (or at a fresh path in a new private
// directory under $TMPDIR when empty) and runs it on its own thread; clients connect with
// "unix:" + socket_path(). Threading: start() and the destructor from one thread; the Server
// itself is thread-safe. Lifetime: the destructor stops the server, which ends every
// connection, and removes the socket (and the directory it created).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "npu/daemon/server.h"
#include "npu/expected.h"
#include "npu/isa/device_config.h"

namespace npu::daemon {

class ServerThread {
 public:
  static Expected<std::unique_ptr<ServerThread>> start(isa::DeviceConfig config = {},
                                                       std::string socket_path = {},
                                                       ServerOptions options = {});
  ~ServerThread();
  ServerThread(const ServerThread&) = delete;
  ServerThread& operator=(const ServerThread&) = delete;

  const std::string& socket_path() const { return server_->socket_path(); }
  /// "unix:" + socket_path().
  std::string device() const { return "unix:" + socket_path(); }
  Server& server() { return *server_; }

 private:
  ServerThread() = default;
  std::unique_ptr<Server> server_;
  std::string temp_dir_;
  std::thread thread_;
};

}  // namespace npu::daemon
