// Server: the accept loop, the connection list and STATUS.
#include "npu/daemon/server.h"

#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "connection.h"
#include "daemon_log.h"
#include "driver_file.h"
#include "npu/daemon/socket_path.h"
#include "npu/emu/kmd.h"
#include "npu/log.h"

namespace npu::daemon {

namespace {

using detail::log;

/// A client that does not read its replies for this long is disconnected.
constexpr int kSendTimeoutSec = 5;

}  // namespace

Server::Server(std::string path, wire::UniqueFd listener, wire::UniqueFd wake,
               std::unique_ptr<emu::Kmd> kmd, ServerOptions options)
    : path_(std::move(path)),
      listener_(std::move(listener)),
      wake_(std::move(wake)),
      kmd_(std::move(kmd)),
      options_(std::move(options)),
      files_(std::make_unique<FileRegistry>()) {}

Expected<std::unique_ptr<Server>> Server::create(std::string socket_path, isa::DeviceConfig config,
                                                 ServerOptions options) {
  auto listener = listen_unix(socket_path, options.group);
  if (!listener) return listener.error();
  wire::UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake) {
    return make_error(errno, fmt::format("daemon: eventfd: {}", std::strerror(errno)));
  }
  auto kmd = std::make_unique<emu::Kmd>(std::move(config));
  return std::unique_ptr<Server>(new Server(std::move(socket_path), std::move(*listener),
                                            std::move(wake), std::move(kmd), std::move(options)));
}

bool Server::may_realtime(const emu::Credentials& who) const {
  return who.cap_sys_nice || std::find(options_.realtime_uids.begin(), options_.realtime_uids.end(),
                                       who.uid) != options_.realtime_uids.end();
}

Server::~Server() {
  stop();
  reap(true);
  ::unlink(path_.c_str());
}

void Server::stop() {
  stop_.store(true);
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t w = ::write(wake_.get(), &one, sizeof(one));
}

void Server::connection_done() {
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t w = ::write(wake_.get(), &one, sizeof(one));
}

void Server::run() {
  log().info("serving {} on {}", kmd_->config().name, path_);
  while (!stop_.load()) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      log().error("poll: {}", std::strerror(errno));
      break;
    }
    if ((fds[1].revents & POLLIN) != 0) {
      uint64_t v = 0;
      [[maybe_unused]] const ssize_t r = ::read(wake_.get(), &v, sizeof(v));
      reap(false);
    }
    if ((fds[0].revents & POLLIN) != 0 && !stop_.load()) accept_one();
  }
  log().info("shutting down: closing {} connection(s)", conns_.size());
  reap(true);
}

void Server::accept_one() {
  wire::UniqueFd sock(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
  if (!sock) {
    const int err = errno;
    if (err == EAGAIN || err == EINTR || err == ECONNABORTED) return;
    log().warn("accept: {}{}", std::strerror(err),
               err == EMFILE || err == ENFILE ? " (out of descriptors; retrying)" : "");
    // Out of descriptors (or worse): do not spin on a listener that stays readable.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return;
  }
  const timeval timeout{kSendTimeoutSec, 0};
  ::setsockopt(sock.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  // Who is at the other end, as the kernel knows it: the client's word is not taken for it.
  emu::Credentials peer;
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(sock.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
    peer.pid = cred.pid;
    peer.uid = cred.uid;
    peer.gid = cred.gid;
    // The capabilities from /proc; a client gone already keeps none (its connection ends).
    if (auto c = emu::process_credentials(cred.pid); c && c->uid == cred.uid) {
      peer.cap_sys_nice = c->cap_sys_nice;
    }
  }
  const uint32_t id = next_client_.fetch_add(1);
  served_.fetch_add(1);
  auto conn = std::make_unique<Connection>(*this, std::move(sock), id, peer);
  Connection* c = conn.get();
  {
    std::lock_guard lk(mu_);
    conns_.push_back(std::move(conn));
  }
  c->start();
}

void Server::reap(bool all) {
  std::vector<std::unique_ptr<Connection>> finished;
  {
    std::lock_guard lk(mu_);
    for (auto it = conns_.begin(); it != conns_.end();) {
      if (all) (*it)->stop();
      if (all || (*it)->done()) {
        finished.push_back(std::move(*it));
        it = conns_.erase(it);
      } else {
        ++it;
      }
    }
  }
  finished.clear();  // joins their threads (outside mu_: their STATUS may need it)
}

std::vector<std::byte> Server::status_payload(uint32_t version) {
  npu_daemon_status st{};
  std::vector<npu_daemon_client> clients;
  {
    std::lock_guard lk(mu_);
    for (const auto& c : conns_) {
      npu_daemon_client cl{};
      if (c->describe(cl)) clients.push_back(cl);
    }
  }
  st.num_clients = static_cast<uint32_t>(clients.size());
  st.clients_served = served_.load();
  st.bo_memory = emu::Kmd::bo_memory_bytes();
  const emu::Kmd::Limits limits = kmd_->limits();
  st.bo_memory_limit = limits.device_bo_memory;
  st.client_bo_memory_limit = limits.bo_memory;
  st.client_contexts_limit = limits.contexts;
  st.client_jobs_limit = limits.jobs_in_flight;
  st.client_size = sizeof(npu_daemon_client);
  // Versions 1 and 2 know the prefixes of both structs.
  const size_t head = version >= 3 ? sizeof(st) : NPU_DAEMON_STATUS_V2_SIZE;
  const size_t each = version >= 3 ? sizeof(npu_daemon_client) : NPU_DAEMON_CLIENT_V2_SIZE;
  std::vector<std::byte> out(head + clients.size() * each);
  std::memcpy(out.data(), &st, head);
  for (size_t i = 0; i < clients.size(); ++i) {
    std::memcpy(out.data() + head + i * each, &clients[i], each);
  }
  return out;
}

}  // namespace npu::daemon
