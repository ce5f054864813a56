// libFuzzer target: npu-daemon's wire protocol, server side (docs/daemon.md). One daemon
// (npu::daemon::ServerThread, watchdog 20 ms, BOs up to 1 MiB) serves every input; each input
// is one client connection driven by a program read from the input: a HELLO or not, then raw
// bytes, framed messages of any type and payload (with honest or lying lengths), IOCTL
// messages with any request number, argument and extra bytes, MAP and STATUS requests, reads
// of the replies (receiving and closing the memfds MAP attaches), and a hang-up, possibly
// mid-message. WAIT deadlines are kept under 20 ms so an input ends quickly.
// What must hold: no crash, no sanitizer report, no hang; every 32 inputs a fresh client is
// still served (npu::daemon_status_report), else the target aborts.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "fuzz_input.h"
#include "npu/daemon/server_thread.h"
#include "npu/daemon_wire.h"
#include "npu/log.h"
#include "npu/unix_kernel.h"
#include "npu_accel.h"
#include "npu_daemon.h"

namespace {

using npu::fuzz::now_ns;
using npu::fuzz::Reader;

constexpr std::array<unsigned long, 10> kRequests = {
    DRM_IOCTL_NPU_GET_PARAM,        DRM_IOCTL_NPU_QUERY,    DRM_IOCTL_NPU_BO_CREATE,
    DRM_IOCTL_NPU_BO_INFO,          DRM_IOCTL_NPU_BO_CLOSE, DRM_IOCTL_NPU_CTX_CREATE,
    DRM_IOCTL_NPU_CTX_DESTROY,      DRM_IOCTL_NPU_SUBMIT,   DRM_IOCTL_NPU_WAIT,
    DRM_IOCTL_NPU_GET_PARAM + 0x100};  // an ioctl number the driver does not know

const std::string& socket_path() {
  static const std::string path = [] {
    ::setenv("NPU_LOG_LEVEL", "off", 0);  // one log line per connection would drown the output
    // The logger registry must be built before `keep` below, so that at exit it is destroyed
    // after `keep` has stopped the server's threads (which log until then): otherwise a
    // connection thread still logging at exit reads a freed registry.
    npu::logger("fuzz_daemon");
    npu::isa::DeviceConfig cfg;
    cfg.watchdog_ms = 20;
    cfg.max_bo_size = 1 << 20;
    auto server = npu::daemon::ServerThread::start(cfg);
    if (!server) {
      std::fprintf(stderr, "fuzz_daemon: %s\n", server.error().message.c_str());
      std::abort();
    }
    // Lives until exit: the server thread serves every input.
    static std::unique_ptr<npu::daemon::ServerThread> keep = std::move(*server);
    return keep->socket_path();
  }();
  return path;
}

std::vector<std::byte> frame(uint16_t type, uint32_t seq, std::span<const std::byte> payload,
                             uint32_t length) {
  const npu_daemon_header h{NPU_DAEMON_MAGIC, NPU_DAEMON_VERSION, type, length, seq};
  std::vector<std::byte> out(sizeof(h) + payload.size());
  std::memcpy(out.data(), &h, sizeof(h));
  if (!payload.empty()) std::memcpy(out.data() + sizeof(h), payload.data(), payload.size());
  return out;
}

template <typename T>
std::span<const std::byte> as_bytes(const T& v) {
  return {reinterpret_cast<const std::byte*>(&v), sizeof(v)};
}

/// Reads what replies are there; closes the descriptors MAP replies carry.
void drain(int s) {
  std::array<char, 4096> buf{};
  for (;;) {
    iovec iov{buf.data(), buf.size()};
    alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(int) * 4)> control{};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    if (::recvmsg(s, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) <= 0) return;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < n; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        ::close(fd);
      }
    }
  }
}

bool send_all(int s, std::span<const std::byte> b) {
  return b.empty() || ::send(s, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size());
}

/// One IOCTL message: request, argument and extra bytes from the input.
std::vector<std::byte> ioctl_message(Reader& in, uint32_t seq) {
  const uint8_t pick = in.get<uint8_t>();
  npu_daemon_ioctl req{};
  req.request = (pick & 0x80) != 0 ? in.get<uint64_t>() : kRequests[pick % kRequests.size()];
  req.arg_size = (pick & 0x40) != 0 ? in.get<uint8_t>() : _IOC_SIZE(req.request);
  if (req.arg_size > NPU_DAEMON_MAX_ARG) req.arg_size = NPU_DAEMON_MAX_ARG;
  std::vector<std::byte> arg(req.arg_size);
  for (auto& b : arg) b = static_cast<std::byte>(in.get<uint8_t>());
  if (req.request == DRM_IOCTL_NPU_WAIT && arg.size() >= sizeof(drm_npu_wait)) {
    drm_npu_wait w{};
    std::memcpy(&w, arg.data(), sizeof(w));
    const uint8_t t = in.get<uint8_t>();
    w.timeout_ns = t == 0 ? 0 : t == 1 ? -1 : now_ns() + (t % 20) * 1'000'000ll;
    std::memcpy(arg.data(), &w, sizeof(w));
  }
  std::vector<std::byte> extra = in.bytes(4 * sizeof(drm_npu_bo_ref) + 8);
  req.extra_size = (pick & 0x20) != 0 ? in.get<uint32_t>() : static_cast<uint32_t>(extra.size());
  std::vector<std::byte> p(sizeof(req));
  std::memcpy(p.data(), &req, sizeof(req));
  p.insert(p.end(), arg.begin(), arg.end());
  p.insert(p.end(), extra.begin(), extra.end());
  return frame(NPU_DAEMON_IOCTL, seq, p, static_cast<uint32_t>(p.size()));
}

void session(Reader& in) {
  npu::wire::UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string& path = socket_path();
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::perror("fuzz_daemon: connect");
    std::abort();
  }
  const timeval tv{0, 100000};
  ::setsockopt(s.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  const uint8_t flags = in.get<uint8_t>();
  if ((flags & 7) != 0) {
    const npu_daemon_hello h{NPU_DAEMON_VERSION, static_cast<uint32_t>(::getpid())};
    if (!send_all(s.get(), frame(NPU_DAEMON_HELLO, 1, as_bytes(h), sizeof(h)))) return;
  }
  for (int step = 0; step < 64 && !in.done(); ++step) {
    const uint8_t op = in.get<uint8_t>();
    const uint32_t seq = in.get<uint8_t>();
    std::vector<std::byte> m;
    switch (op % 8) {
      case 0:  // raw bytes
        m = in.bytes(256);
        break;
      case 1: {  // any type, any payload, an honest or a lying length
        const uint16_t type = in.get<uint16_t>();
        const std::vector<std::byte> p = in.bytes(512);
        const uint32_t length =
            (op & 0x80) != 0 ? in.get<uint32_t>() : static_cast<uint32_t>(p.size());
        m = frame(type, seq, p, length);
        break;
      }
      case 2:
      case 3:
        m = ioctl_message(in, seq);
        break;
      case 4: {
        npu_daemon_map map{};
        map.offset = 0x1'0000'0000ull + (in.get<uint8_t>() % 8) * 4096;
        if ((op & 0x80) != 0) map.offset = in.get<uint64_t>();
        map.length = in.get<uint32_t>() % (3 * 4096);
        map.flags = in.get<uint8_t>() % 4;
        m = frame(NPU_DAEMON_MAP, seq, as_bytes(map), sizeof(map));
        break;
      }
      case 5:
        m = frame(NPU_DAEMON_STATUS, seq, {}, 0);
        break;
      case 6:
        drain(s.get());
        continue;
      default: {  // a message cut short: the connection ends here
        m = ioctl_message(in, seq);
        m.resize(in.get<uint16_t>() % (m.size() + 1));
        send_all(s.get(), m);
        return;
      }
    }
    if (!send_all(s.get(), m)) return;
  }
  drain(s.get());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static uint64_t inputs = 0;
  Reader in(data, size);
  session(in);
  if (++inputs % 32 == 0) {
    auto report = npu::daemon_status_report(socket_path());
    if (!report) {
      std::fprintf(stderr, "fuzz_daemon: the daemon no longer serves a new client: %s\n",
                   report.error().message.c_str());
      std::abort();
    }
  }
  return 0;
}
