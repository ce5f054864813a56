// A bounded fuzzer of the wire protocol (in ctest): for a few seconds, clients send random,
// mutated and truncated messages — valid HELLOs followed by ioctls with random arguments,
// messages with bit flips and lying lengths, plain garbage — and hang up at random. The daemon
// must survive all of it: a well-behaved client is served throughout, a real job runs at the
// end, and every fuzzing connection's resources are gone once it has hung up.
#include <gmock/gmock.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <cstdio>
#include <random>

#include "daemon_fixture.h"
#include "npu/daemon/server_thread.h"
#include "npu/daemon_wire.h"

namespace npu::daemon::test {
namespace {

constexpr std::array<unsigned long, 9> kRequests = {
    DRM_IOCTL_NPU_GET_PARAM,   DRM_IOCTL_NPU_QUERY,    DRM_IOCTL_NPU_BO_CREATE,
    DRM_IOCTL_NPU_BO_INFO,     DRM_IOCTL_NPU_BO_CLOSE, DRM_IOCTL_NPU_CTX_CREATE,
    DRM_IOCTL_NPU_CTX_DESTROY, DRM_IOCTL_NPU_SUBMIT,   DRM_IOCTL_NPU_WAIT};

class Fuzzer {
 public:
  Fuzzer(std::string path, uint32_t seed) : path_(std::move(path)), rng_(seed) {}

  void session() {
    wire::UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path_.c_str());
    if (::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return;
    const timeval tv{0, 200000};
    ::setsockopt(s.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (pick(10) < 8) send(s.get(), hello_bytes());
    const int n = static_cast<int>(pick(30));
    for (int i = 0; i < n; ++i) {
      std::vector<std::byte> m = message();
      if (pick(4) == 0) mutate(m);
      if (pick(20) == 0) m.resize(pick(m.size() + 1));  // truncated: the session ends here
      if (!send(s.get(), m)) break;
      drain(s.get());
      ++messages;
    }
  }

  uint64_t messages = 0;

 private:
  uint64_t pick(uint64_t n) { return n == 0 ? 0 : rng_() % n; }

  static std::vector<std::byte> frame(uint16_t type, uint32_t seq, std::span<const std::byte> p) {
    npu_daemon_header h{NPU_DAEMON_MAGIC, NPU_DAEMON_VERSION, type, static_cast<uint32_t>(p.size()),
                        seq};
    std::vector<std::byte> out(sizeof(h) + p.size());
    std::memcpy(out.data(), &h, sizeof(h));
    if (!p.empty()) std::memcpy(out.data() + sizeof(h), p.data(), p.size());
    return out;
  }

  std::vector<std::byte> hello_bytes() {
    npu_daemon_hello h{};
    h.min_version = NPU_DAEMON_VERSION;
    h.pid = 1;
    return frame(NPU_DAEMON_HELLO, 1, wire::bytes_of(h));
  }

  std::vector<std::byte> random_bytes(size_t n) {
    std::vector<std::byte> b(n);
    for (auto& x : b) x = static_cast<std::byte>(rng_());
    return b;
  }

  // Small numbers are likelier to mean something (handles, ids, seqnos, sizes).
  void plausible_fields(std::vector<std::byte>& arg) {
    for (size_t off = 0; off + 4 <= arg.size(); off += 4) {
      if (pick(2) == 0) {
        const uint32_t v = static_cast<uint32_t>(pick(8));
        std::memcpy(arg.data() + off, &v, 4);
      }
    }
  }

  std::vector<std::byte> message() {
    const uint32_t seq = static_cast<uint32_t>(rng_());
    switch (pick(6)) {
      case 0:
        return random_bytes(pick(64));
      case 1:
        return frame(static_cast<uint16_t>(rng_()), seq, random_bytes(pick(64)));
      case 2: {
        npu_daemon_map m{};
        m.offset = 0x1'0000'0000ull + pick(4) * 4096;
        m.length = pick(3) * 4096;
        m.flags = static_cast<uint32_t>(pick(4));
        return frame(NPU_DAEMON_MAP, seq, wire::bytes_of(m));
      }
      case 3:
        return frame(NPU_DAEMON_STATUS, seq, {});
      default: {
        const unsigned long request = kRequests[pick(kRequests.size())];
        npu_daemon_ioctl req{};
        req.request = request;
        req.arg_size = _IOC_SIZE(request);
        std::vector<std::byte> arg = random_bytes(req.arg_size);
        plausible_fields(arg);
        std::vector<std::byte> extra;
        if (request == DRM_IOCTL_NPU_SUBMIT && pick(2) == 0) {
          drm_npu_submit s{};
          std::memcpy(&s, arg.data(), sizeof(s));
          s.bo_count = static_cast<uint32_t>(pick(4));
          std::memcpy(arg.data(), &s, sizeof(s));
          extra = random_bytes(s.bo_count * sizeof(drm_npu_bo_ref) + (pick(8) == 0 ? 3 : 0));
        }
        if (request == DRM_IOCTL_NPU_WAIT) {
          // Deadlines in the near future (or past): waiters block, then answer.
          drm_npu_wait w{};
          std::memcpy(&w, arg.data(), sizeof(w));
          w.timeout_ns = pick(3) == 0 ? static_cast<int64_t>(rng_()) : deadline_ms(pick(50));
          std::memcpy(arg.data(), &w, sizeof(w));
        }
        req.extra_size = static_cast<uint32_t>(extra.size());
        std::vector<std::byte> p(sizeof(req));
        std::memcpy(p.data(), &req, sizeof(req));
        p.insert(p.end(), arg.begin(), arg.end());
        p.insert(p.end(), extra.begin(), extra.end());
        return frame(NPU_DAEMON_IOCTL, seq, p);
      }
    }
  }

  void mutate(std::vector<std::byte>& m) {
    if (m.empty()) return;
    const int flips = 1 + static_cast<int>(pick(4));
    for (int i = 0; i < flips; ++i) m[pick(m.size())] ^= static_cast<std::byte>(1u << pick(8));
  }

  static bool send(int s, const std::vector<std::byte>& m) {
    return m.empty() ||
           ::send(s, m.data(), m.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(m.size());
  }

  // Reads whatever replies are there (descriptors in them are closed by the kernel: no
  // control buffer).
  static void drain(int s) {
    std::array<char, 4096> buf{};
    while (::recv(s, buf.data(), buf.size(), MSG_DONTWAIT) > 0) {
    }
  }

  std::string path_;
  std::mt19937_64 rng_;
};

TEST(DaemonFuzz, SurvivesRandomAndMutatedMessages) {
  isa::DeviceConfig cfg;
  cfg.watchdog_ms = 100;
  cfg.max_bo_size = 1 << 20;  // random BO_CREATEs stay small
  auto server = ServerThread::start(cfg);
  ASSERT_TRUE(server) << server.error().message;
  const std::string path = (*server)->socket_path();
  RawClient health(path);
  ASSERT_GE(health.fd(), 0);

  const char* seed_env = std::getenv("NPU_FUZZ_SEED");  // NOLINT(concurrency-mt-unsafe)
  const uint32_t seed = seed_env != nullptr ? static_cast<uint32_t>(std::atoi(seed_env)) : 12345;
  Fuzzer fuzz(path, seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  int sessions = 0;
  while (std::chrono::steady_clock::now() < end && sessions < 50000) {
    fuzz.session();
    ++sessions;
    if (sessions % 25 == 0) {
      drm_npu_get_param p{};
      p.param = DRM_NPU_PARAM_DEVICE_ID;
      ASSERT_EQ(health.io(DRM_IOCTL_NPU_GET_PARAM, &p), 0) << "after " << sessions << " sessions";
    }
  }
  RecordProperty("sessions", sessions);
  RecordProperty("messages", static_cast<int>(fuzz.messages));
  std::printf("fuzz: %d sessions, %llu messages\n", sessions,
              static_cast<unsigned long long>(fuzz.messages));
  EXPECT_GT(fuzz.messages, 100u);

  // The device still runs jobs, and every fuzzing connection has been cleaned up.
  const uint32_t ctx = health.ctx();
  const BoHandle src = health.bo(4096), dst = health.bo(4096);
  std::memset(health.map(src), 0x77, 4096);
  const auto job = copy_job(src.va, dst.va, 4096);
  const BoHandle cmd = health.upload(job);
  uint64_t seqno = 0;
  ASSERT_EQ(
      health.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno),
      0);
  drm_npu_wait w{};
  ASSERT_EQ(health.wait(ctx, seqno, deadline_ms(30000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
  EXPECT_EQ(static_cast<int>(health.map(dst)[4095]), 0x77);
  ASSERT_TRUE(eventually([&] { return health.status().clients.size() == 1; }));
  EXPECT_TRUE(eventually([&] { return health.status().summary.bo_memory == 3 * 4096; }));
}

}  // namespace
}  // namespace npu::daemon::test
