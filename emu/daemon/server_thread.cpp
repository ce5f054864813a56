// ServerThread: a Server on a thread, in a private temporary directory when asked.
#include "npu/daemon/server_thread.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace npu::daemon {

Expected<std::unique_ptr<ServerThread>> ServerThread::start(isa::DeviceConfig config,
                                                            std::string socket_path,
                                                            ServerOptions options) {
  std::unique_ptr<ServerThread> t(new ServerThread());
  if (socket_path.empty()) {
    const char* tmp = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe)
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/npu-daemon-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
      return make_error(errno,
                        fmt::format("daemon: mkdtemp {}: {}", pattern, std::strerror(errno)));
    }
    t->temp_dir_ = buf.data();
    socket_path = t->temp_dir_ + "/npu0.sock";
  }
  auto server = Server::create(std::move(socket_path), std::move(config), std::move(options));
  if (!server) return server.error();  // ~ServerThread removes the directory
  t->server_ = std::move(*server);
  t->thread_ = std::thread([s = t->server_.get()] { s->run(); });
  return t;
}

ServerThread::~ServerThread() {
  if (server_ != nullptr) {  // null when start() failed before the server existed
    server_->stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();  // removes the socket
  }
  if (!temp_dir_.empty()) ::rmdir(temp_dir_.c_str());
}

}  // namespace npu::daemon
