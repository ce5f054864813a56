// Who may use the daemon and how much (issue 30): the socket is 0600 (0660 and the group's with
// ServerOptions::group); STATUS shows each client's pid and uid as the kernel reports them
// (SO_PEERCRED), not as its HELLO claims; REALTIME contexts need CAP_SYS_NICE of the client or
// its uid on the allow-list (EPERM otherwise); the device config's quotas hold per client, and
// STATUS shows them.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>

#include "daemon_fixture.h"
#include "npu/daemon/server_thread.h"
#include "npu/daemon_wire.h"
#include "npu/test/capabilities.h"

namespace npu::daemon::test {
namespace {

using npu::test::WithoutCapSysNice;

std::unique_ptr<ServerThread> start(isa::DeviceConfig cfg = {}, ServerOptions options = {}) {
  auto s = ServerThread::start(std::move(cfg), {}, std::move(options));
  EXPECT_TRUE(s) << s.error().message;
  return s ? std::move(*s) : nullptr;
}

int create_ctx(RawClient& c, uint32_t priority) {
  drm_npu_ctx_create cc{};
  cc.priority = priority;
  return c.io(DRM_IOCTL_NPU_CTX_CREATE, &cc);
}

TEST(DaemonPolicy, SocketIsOwnerOnly) {
  auto server = start();
  ASSERT_NE(server, nullptr);
  struct stat st {};
  ASSERT_EQ(::stat(server->socket_path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(DaemonPolicy, GroupSocketIsGroupReadWrite) {
  auto server = start({}, ServerOptions{.group = ::getgid(), .realtime_uids = {}});
  ASSERT_NE(server, nullptr);
  struct stat st {};
  ASSERT_EQ(::stat(server->socket_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, ::getgid());
}

// A client that lies about its pid in HELLO is listed with the pid the kernel reports.
TEST(DaemonPolicy, StatusShowsTheKernelsPidAndUid) {
  auto server = start();
  ASSERT_NE(server, nullptr);
  wire::UniqueFd s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, server->socket_path().c_str());
  ASSERT_EQ(::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  npu_daemon_hello h{};
  h.min_version = NPU_DAEMON_VERSION;
  h.pid = 1;  // not us
  const std::array parts{wire::bytes_of(h)};
  ASSERT_TRUE(wire::send_message(s.get(), NPU_DAEMON_HELLO, 1, parts));
  auto reply = wire::recv_message(s.get());
  ASSERT_TRUE(reply) << reply.error().message;
  ASSERT_EQ(reply->header.type, NPU_DAEMON_HELLO | NPU_DAEMON_REPLY);

  RawClient other(server->socket_path());
  const DaemonStatus st = other.status();
  EXPECT_EQ(st.version, NPU_DAEMON_VERSION);
  ASSERT_EQ(st.clients.size(), 2u);
  for (const npu_daemon_client& c : st.clients) {
    EXPECT_EQ(c.pid, static_cast<uint32_t>(::getpid())) << "client " << c.client_id;
    EXPECT_EQ(c.uid, ::getuid());
    EXPECT_EQ(c.gid, ::getgid());
  }
  const bool liar_listed = std::any_of(st.clients.begin(), st.clients.end(),
                                       [](const npu_daemon_client& c) { return c.hello_pid == 1; });
  EXPECT_TRUE(liar_listed) << "the claimed pid is kept apart, for the logs";
}

TEST(DaemonPolicy, RealtimeWithoutCapSysNiceIsEperm) {
  auto server = start();
  ASSERT_NE(server, nullptr);
  WithoutCapSysNice drop;
  if (!drop.unprivileged()) GTEST_SKIP() << "cannot drop CAP_SYS_NICE";
  RawClient c(server->socket_path());  // connects without the privilege
  EXPECT_EQ(create_ctx(c, DRM_NPU_PRIORITY_REALTIME), EPERM);
  EXPECT_EQ(create_ctx(c, DRM_NPU_PRIORITY_HIGH), 0);
  const auto me = client_of(c.status(), ::getpid());
  ASSERT_TRUE(me);
  EXPECT_EQ(me->flags & NPU_DAEMON_CLIENT_REALTIME, 0u);
}

TEST(DaemonPolicy, AllowListGrantsRealtime) {
  auto server = start({}, ServerOptions{.group = std::nullopt, .realtime_uids = {::getuid()}});
  ASSERT_NE(server, nullptr);
  WithoutCapSysNice drop;
  RawClient c(server->socket_path());
  EXPECT_EQ(create_ctx(c, DRM_NPU_PRIORITY_REALTIME), 0);
  const auto me = client_of(c.status(), ::getpid());
  ASSERT_TRUE(me);
  EXPECT_EQ(me->flags & NPU_DAEMON_CLIENT_REALTIME, NPU_DAEMON_CLIENT_REALTIME);
}

TEST(DaemonPolicy, QuotasHoldPerClientAndStatusShowsThem) {
  isa::DeviceConfig cfg;
  cfg.quota.contexts = 2;
  cfg.quota.bo_memory = 64 * 1024;
  cfg.quota.jobs_in_flight = 8;
  auto server = start(cfg);
  ASSERT_NE(server, nullptr);
  RawClient a(server->socket_path());
  RawClient b(server->socket_path());
  EXPECT_EQ(create_ctx(a, DRM_NPU_PRIORITY_NORMAL), 0);
  EXPECT_EQ(create_ctx(a, DRM_NPU_PRIORITY_NORMAL), 0);
  EXPECT_EQ(create_ctx(a, DRM_NPU_PRIORITY_NORMAL), EDQUOT);
  EXPECT_EQ(create_ctx(b, DRM_NPU_PRIORITY_NORMAL), 0) << "the other client has its own";
  drm_npu_bo_create bc{};
  bc.size = 128 * 1024;
  EXPECT_EQ(a.io(DRM_IOCTL_NPU_BO_CREATE, &bc), EDQUOT);
  a.bo(4096);

  const DaemonStatus st = b.status();
  ASSERT_EQ(st.version, NPU_DAEMON_VERSION);
  EXPECT_EQ(st.summary.client_contexts_limit, 2u);
  EXPECT_EQ(st.summary.client_bo_memory_limit, 64u * 1024);
  EXPECT_EQ(st.summary.client_jobs_limit, 8u);
  EXPECT_GT(st.summary.bo_memory_limit, 0u);
  EXPECT_EQ(st.summary.client_size, sizeof(npu_daemon_client));
  ASSERT_EQ(st.clients.size(), 2u);
  const auto ca = std::find_if(st.clients.begin(), st.clients.end(),
                               [&](const npu_daemon_client& c) { return c.client_id == a.id(); });
  ASSERT_NE(ca, st.clients.end());
  EXPECT_EQ(ca->contexts, 2u);
  EXPECT_EQ(ca->bo_bytes, 4096u);
  EXPECT_EQ(ca->jobs_in_flight, 0u);
}

}  // namespace
}  // namespace npu::daemon::test
