// The daemon's protocol, in-process (a ServerThread) with raw sockets: the handshake, protocol
// errors that end one connection and nothing else, a WAIT that blocks neither its own
// connection nor others, STATUS, and the ioctl bridge's user pointers.
#include <gmock/gmock.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <thread>

#include <nlohmann/json.hpp>

#include "daemon_fixture.h"
#include "npu/daemon/server_thread.h"
#include "npu/daemon_wire.h"
#include "npu/device_report.h"
#include "npu/emu/kmd.h"

namespace npu::daemon::test {
namespace {

class DaemonProtocol : public ::testing::Test {
 protected:
  void SetUp() override {
    isa::DeviceConfig cfg;
    cfg.watchdog_ms = 500;
    auto s = ServerThread::start(cfg);
    ASSERT_TRUE(s) << s.error().message;
    server_ = std::move(*s);
  }

  /// A connected socket that has said nothing yet.
  wire::UniqueFd connect_raw() {
    wire::UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, server_->socket_path().c_str());
    EXPECT_EQ(::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    const timeval tv{10, 0};
    ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return s;
  }

  void hello(int s, uint32_t min_version = NPU_DAEMON_VERSION) {
    npu_daemon_hello h{};
    h.min_version = min_version;
    h.pid = static_cast<uint32_t>(::getpid());
    const std::array parts{wire::bytes_of(h)};
    ASSERT_TRUE(wire::send_message(s, NPU_DAEMON_HELLO, 1, parts));
  }

  /// Expects an ERROR with `err`, then the end of the connection.
  void expect_error_and_close(int s, uint32_t err) {
    auto m = wire::recv_message(s);
    ASSERT_TRUE(m) << m.error().message;
    if (m->header.type == (NPU_DAEMON_HELLO | NPU_DAEMON_REPLY)) m = wire::recv_message(s);
    ASSERT_TRUE(m) << m.error().message;
    ASSERT_EQ(m->header.type, NPU_DAEMON_ERROR);
    npu_daemon_error e{};
    std::memcpy(&e, m->payload.data(), sizeof(e));
    EXPECT_EQ(e.err, err) << e.message;
    auto end = wire::recv_message(s);
    ASSERT_FALSE(end);
    EXPECT_EQ(end.error().code, ECONNRESET);
  }

  /// A fresh client still gets answers.
  void expect_daemon_serves() {
    RawClient c(server_->socket_path());
    drm_npu_get_param p{};
    p.param = DRM_NPU_PARAM_DEVICE_ID;
    EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &p), 0);
    EXPECT_NE(p.value, 0u);
  }

  std::unique_ptr<ServerThread> server_;
};

TEST_F(DaemonProtocol, HandshakeGivesVersionAndClientId) {
  RawClient a(server_->socket_path()), b(server_->socket_path());
  ASSERT_GE(a.fd(), 0);
  EXPECT_NE(a.id(), 0u);
  EXPECT_NE(a.id(), b.id());
}

TEST_F(DaemonProtocol, UnsupportedVersionIsRefused) {
  auto s = connect_raw();
  hello(s.get(), NPU_DAEMON_VERSION + 1);
  expect_error_and_close(s.get(), EPROTONOSUPPORT);
  expect_daemon_serves();
}

TEST_F(DaemonProtocol, RequestBeforeHelloIsRefused) {
  auto s = connect_raw();
  ASSERT_TRUE(wire::send_message(s.get(), NPU_DAEMON_STATUS, 7, {}));
  expect_error_and_close(s.get(), EPROTO);
  expect_daemon_serves();
}

TEST_F(DaemonProtocol, BadMagicEndsThatConnectionOnly) {
  RawClient other(server_->socket_path());
  auto s = connect_raw();
  hello(s.get());
  const npu_daemon_header h{0xdeadbeef, NPU_DAEMON_VERSION, NPU_DAEMON_IOCTL, 0, 2};
  ASSERT_EQ(::send(s.get(), &h, sizeof(h), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(h)));
  expect_error_and_close(s.get(), EPROTO);
  drm_npu_get_param p{};
  p.param = DRM_NPU_PARAM_SRAM_SIZE;
  EXPECT_EQ(other.io(DRM_IOCTL_NPU_GET_PARAM, &p), 0);
}

TEST_F(DaemonProtocol, OversizedMessageIsRefusedBeforeItIsRead) {
  auto s = connect_raw();
  hello(s.get());
  const npu_daemon_header h{NPU_DAEMON_MAGIC, NPU_DAEMON_VERSION, NPU_DAEMON_IOCTL,
                            NPU_DAEMON_MAX_PAYLOAD + 1, 2};
  ASSERT_EQ(::send(s.get(), &h, sizeof(h), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(h)));
  expect_error_and_close(s.get(), EMSGSIZE);
  expect_daemon_serves();
}

TEST_F(DaemonProtocol, IoctlWhoseSizesDoNotAddUpIsRefused) {
  auto s = connect_raw();
  hello(s.get());
  npu_daemon_ioctl req{};
  req.request = DRM_IOCTL_NPU_GET_PARAM;
  req.arg_size = 4;  // the request says 16
  const std::array<std::byte, 4> arg{};
  const std::array parts{wire::bytes_of(req), std::span<const std::byte>(arg)};
  ASSERT_TRUE(wire::send_message(s.get(), NPU_DAEMON_IOCTL, 2, parts));
  expect_error_and_close(s.get(), EPROTO);
  expect_daemon_serves();
}

TEST_F(DaemonProtocol, TruncatedMessageThenHangUpIsHarmless) {
  {
    auto s = connect_raw();
    hello(s.get());
    const npu_daemon_header h{NPU_DAEMON_MAGIC, NPU_DAEMON_VERSION, NPU_DAEMON_IOCTL, 100, 2};
    ASSERT_EQ(::send(s.get(), &h, sizeof(h), MSG_NOSIGNAL), static_cast<ssize_t>(sizeof(h)));
    ASSERT_EQ(::send(s.get(), "0123456789", 10, MSG_NOSIGNAL), 10);
  }
  expect_daemon_serves();
}

TEST_F(DaemonProtocol, UnknownIoctlGetsTheDriversErrno) {
  RawClient c(server_->socket_path());
  drm_npu_get_param p{};
  // Right size, unknown number: the driver's EINVAL, and the connection stays.
  EXPECT_EQ(c.io(DRM_IOWR(DRM_COMMAND_BASE + 0x30, struct drm_npu_get_param), &p), EINVAL);
  p.param = DRM_NPU_PARAM_DEVICE_ID;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &p), 0);
  // Null user pointers fail as they do in process.
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_DEVICE_INFO;
  q.size = sizeof(drm_npu_device_info);
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), EFAULT);
}

TEST_F(DaemonProtocol, BlockedWaitHoldsUpNeitherItsConnectionNorOthers) {
  RawClient c(server_->socket_path());
  RawClient other(server_->socket_path());
  const uint32_t ctx = c.ctx();
  const auto hang = hung_job();
  const BoHandle cmd = c.upload(hang);
  uint64_t seqno = 0;
  ASSERT_EQ(c.submit(ctx, cmd, hang.size(), {ref(cmd, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION, &seqno),
            0);
  std::atomic<bool> returned{false};
  drm_npu_wait w{};
  std::thread waiter([&] {
    EXPECT_EQ(c.wait(ctx, seqno, deadline_ms(60000), &w), 0);
    returned = true;
  });
  // While the WAIT blocks (until the watchdog ends the job), the same connection and another
  // one are answered.
  for (int i = 0; i < 20; ++i) {
    drm_npu_get_param p{};
    p.param = DRM_NPU_PARAM_SRAM_SIZE;
    EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &p), 0);
    EXPECT_EQ(other.io(DRM_IOCTL_NPU_GET_PARAM, &p), 0);
    c.bo(4096);
  }
  EXPECT_FALSE(returned.load()) << "the WAIT returned before the watchdog ended the job";
  waiter.join();
  EXPECT_EQ(w.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(w.fault.kind, DRM_NPU_FAULT_WATCHDOG);
}

TEST_F(DaemonProtocol, StatusCountsClientsAndWhatTheyHold) {
  RawClient a(server_->socket_path());
  {
    RawClient b(server_->socket_path());
    b.bo(8192);
    b.bo(4096);
    b.ctx();
    const DaemonStatus st = a.status();
    ASSERT_EQ(st.clients.size(), 2u);
    const auto it = std::find_if(st.clients.begin(), st.clients.end(),
                                 [&](const auto& c) { return c.client_id == b.id(); });
    ASSERT_NE(it, st.clients.end());
    EXPECT_EQ(it->bos, 2u);
    EXPECT_EQ(it->bo_bytes, 12288u);
    EXPECT_EQ(it->contexts, 1u);
    EXPECT_EQ(st.summary.bo_memory, 12288u);
  }
  // A client whose clean-up is still running is left out of the list while its BOs still
  // count in bo_memory, so wait for both.
  ASSERT_TRUE(eventually([&] {
    const DaemonStatus st = a.status();
    return st.clients.size() == 1 && st.summary.bo_memory == 0;
  }));
}

// The text npu-daemon --status and npu-info over unix: print: the other clients and what each
// holds; a client that went away is gone from it, with its memory.
TEST_F(DaemonProtocol, StatusReportNamesTheOtherClients) {
  std::string report;
  {
    RawClient b(server_->socket_path());
    b.bo(4096);
    b.ctx();
    auto r = daemon_status_report(server_->socket_path());
    ASSERT_TRUE(r) << r.error().message;
    report = *r;
    EXPECT_NE(report.find(": 1 client(s) besides this one"), std::string::npos) << report;
    EXPECT_NE(report.find("4096 bytes of BO memory"), std::string::npos) << report;
    EXPECT_NE(report.find("  client " + std::to_string(b.id()) + " pid " +
                          std::to_string(::getpid()) + " uid " + std::to_string(::getuid()) +
                          ": 1 bo(s) 4096 bytes, 1 context(s), 0 job(s) in flight"),
              std::string::npos)
        << report;
  }
  ASSERT_TRUE(eventually([&] {
    auto r = daemon_status_report(server_->socket_path());
    return r && r->find(": 0 client(s) besides this one") != std::string::npos &&
           r->find(" 0 bytes of BO memory") != std::string::npos;
  }));
  auto missing = daemon_status_report("/nonexistent/npu.sock");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("socket /nonexistent/npu.sock: "), std::string::npos);
}

// npu-info's report of a unix: device (DeviceReport::daemon, text and JSON): the other
// clients and what each holds, without the report's own connection.
TEST_F(DaemonProtocol, DeviceReportListsTheDaemonsOtherClients) {
  RawClient b(server_->socket_path());
  b.bo(8192);
  b.ctx();
  auto dev = Device::open("unix:" + server_->socket_path());
  ASSERT_TRUE(dev) << dev.error().message;
  auto report = query_device_report(*dev);
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_TRUE(report->daemon.has_value());
  const auto j = nlohmann::json::parse(device_report_json(*report));
  ASSERT_TRUE(j.contains("daemon")) << j.dump(2);
  EXPECT_EQ(j["daemon"]["socket"], server_->socket_path());
  EXPECT_EQ(j["daemon"]["bo_memory"], 8192);
  // `dev` itself is a client too; the report's own STATUS connection is not listed.
  ASSERT_EQ(j["daemon"]["clients"].size(), 2u) << j.dump(2);
  bool found = false;
  for (const auto& c : j["daemon"]["clients"]) {
    if (c["client_id"] != b.id()) continue;
    found = true;
    EXPECT_EQ(c["bos"], 1);
    EXPECT_EQ(c["bo_bytes"], 8192);
    EXPECT_EQ(c["contexts"], 1);
    EXPECT_EQ(c["pid"], ::getpid());
  }
  EXPECT_TRUE(found) << j.dump(2);
  const std::string text = format_device_report(*report);
  EXPECT_NE(text.find(": 2 client(s) besides this one"), std::string::npos) << text;
  EXPECT_NE(text.find("  client " + std::to_string(b.id()) + " pid "), std::string::npos) << text;
  // A device not served by a daemon has no daemon key.
  DeviceReport local = *report;
  local.daemon.reset();
  EXPECT_FALSE(nlohmann::json::parse(device_report_json(local)).contains("daemon"));
}

TEST_F(DaemonProtocol, MappedPagesAreTheDevicesPages) {
  RawClient c(server_->socket_path());
  const uint32_t ctx = c.ctx();
  const BoHandle src = c.bo(8192), dst = c.bo(8192);
  std::byte* in = c.map(src);
  for (int i = 0; i < 8192; ++i) in[i] = static_cast<std::byte>(i * 13);
  const auto job = copy_job(src.va, dst.va, 8192);
  const BoHandle cmd = c.upload(job);
  uint64_t seqno = 0;
  ASSERT_EQ(c.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno),
            0);
  ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(30000)), 0);
  const std::byte* out = c.map(dst);
  EXPECT_EQ(std::memcmp(in, out, 8192), 0);
  // Mappings are checked as in process: within the BO, MAP_SHARED.
  EXPECT_EQ(c.kernel().mmap(nullptr, 16384, PROT_READ, MAP_SHARED, c.fd(),
                            static_cast<off_t>(src.mmap_offset)),
            MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(c.kernel().mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, c.fd(),
                            static_cast<off_t>(src.mmap_offset)),
            MAP_FAILED);
}

TEST_F(DaemonProtocol, ExportedMemfdIsSealedAgainstResizing) {
  emu::Kmd& kmd = server_->server().kmd();
  const int fd = kmd.open();
  ASSERT_GE(fd, 0);
  drm_npu_bo_create c{};
  c.size = 8192;
  ASSERT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_BO_CREATE, &c), 0);
  drm_npu_bo_info i{};
  i.handle = c.handle;
  ASSERT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_BO_INFO, &i), 0);
  wire::UniqueFd memfd(kmd.export_bo(fd, i.mmap_offset, 8192, MAP_SHARED));
  ASSERT_TRUE(memfd) << std::strerror(errno);
  // What a client holds cannot pull pages from under the device (SIGBUS in the daemon).
  EXPECT_EQ(::ftruncate(memfd.get(), 0), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(::ftruncate(memfd.get(), 1 << 20), -1);
  EXPECT_EQ(kmd.export_bo(fd, i.mmap_offset, 8192, MAP_PRIVATE), -1);
  EXPECT_EQ(kmd.export_bo(fd, i.mmap_offset + 4096, 4096, MAP_SHARED), -1);
  EXPECT_EQ(kmd.close(fd), 0);
}

}  // namespace
}  // namespace npu::daemon::test
