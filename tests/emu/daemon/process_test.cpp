// The daemon across processes: npu-daemon started by the test (fork/exec of the built binary),
// clients in forked processes. Several clients run real jobs at once; a client killed with
// SIGKILL while its jobs are queued and running is cleaned up without touching the others; one
// process can neither name nor reach another's buffers; stale and busy sockets; SIGTERM.
#include <gmock/gmock.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <array>
#include <chrono>

#include "daemon_fixture.h"
#include "npu/buffer.h"
#include "npu/context.h"
#include "npu/daemon/server_thread.h"
#include "npu/device.h"
#include "npu/job.h"

namespace npu::daemon::test {
namespace {

using namespace std::chrono_literals;

// Runs `body` in a child process; returns its pid. The child exits with body's result.
pid_t spawn(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a test ctest killed
    ::_exit(body());
  }
  return pid;
}

int exit_code(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A client's work: `rounds` RELU jobs over data of its own, every result checked. Exit codes
// name the step that failed.
int relu_client(const std::string& device, int seed, int rounds) {
  auto dev = Device::open(device);
  if (!dev) return 10;
  auto ctx = Context::create(*dev);
  if (!ctx) return 11;
  constexpr uint32_t n = 2048;
  std::vector<float> in(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<float>((i * 7 + seed * 131) % 97) - 48.0f;
  auto src = Buffer::allocate(*dev, n * 4);
  auto dst = Buffer::allocate(*dev, n * 4);
  if (!src || !dst || !src->write(0, std::as_bytes(std::span(in)))) return 12;
  for (int r = 0; r < rounds; ++r) {
    std::vector<float> poison(n, -1.0f);
    if (!dst->write(0, std::as_bytes(std::span(poison)))) return 13;
    CommandBuffer cb(*dev);
    record_relu(cb, *src, *dst, n);
    auto job = ctx->submit(cb);
    if (!job) return 14;
    auto res = job->wait(30s);
    if (!res || !res->ok()) return 15;
    std::vector<float> out(n);
    if (!dst->read(0, std::as_writable_bytes(std::span(out)))) return 16;
    for (uint32_t i = 0; i < n; ++i) {
      if (out[i] != std::max(in[i], 0.0f)) return 17;
    }
  }
  return 0;
}

TEST(DaemonProcesses, ClientsRunJobsAtOnce) {
  DaemonProcess d;
  int gate[2];
  ASSERT_EQ(::pipe(gate), 0);
  constexpr int kClients = 4;
  std::vector<pid_t> pids;
  for (int c = 0; c < kClients; ++c) {
    pids.push_back(spawn([&, c] {
      ::close(gate[1]);
      char b;
      [[maybe_unused]] const ssize_t r = ::read(gate[0], &b, 1);  // everyone starts together
      return relu_client(d.device(), c, 25);
    }));
  }
  ::close(gate[0]);
  ::close(gate[1]);
  for (int c = 0; c < kClients; ++c) EXPECT_EQ(exit_code(pids[c]), 0) << "client " << c;

  // Every client's jobs ran on the one device, and everything they held is gone.
  RawClient probe(d.socket());
  auto dev = Device::open(d.device());
  ASSERT_TRUE(dev) << dev.error().message;
  auto counters = dev->counters();
  ASSERT_TRUE(counters);
  EXPECT_EQ(counters->jobs_completed, uint64_t{kClients} * 25);
  EXPECT_TRUE(eventually([&] {
    const DaemonStatus st = probe.status();
    uint64_t held = 0;
    for (const auto& c : st.clients) held += c.bo_bytes;
    return st.clients.size() == 2 && st.summary.bo_memory == held;
  }));
  EXPECT_EQ(d.stop(), 0);
}

TEST(DaemonProcesses, KilledClientIsCleanedUpAndOthersGoOn) {
  DaemonProcess d;
  RawClient survivor(d.socket());
  ASSERT_GE(survivor.fd(), 0);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t victim = spawn([&] {
    ::close(ready[0]);
    RawClient c(d.socket());
    const uint32_t ctx = c.ctx();
    std::vector<BoHandle> bufs;
    for (int i = 0; i < 4; ++i) bufs.push_back(c.bo(1 << 20));
    const auto hang = hung_job();
    const BoHandle cmd = c.upload(hang);
    // One job that runs until the watchdog, and more queued behind it.
    for (int j = 0; j < 8; ++j) {
      if (c.submit(ctx, cmd, hang.size(), {ref(cmd, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION) != 0) {
        return 1;
      }
    }
    [[maybe_unused]] const ssize_t w = ::write(ready[1], "r", 1);
    for (;;) ::pause();
  });
  ::close(ready[1]);
  char b = 0;
  ASSERT_EQ(::read(ready[0], &b, 1), 1);
  ::close(ready[0]);

  const DaemonStatus before = survivor.status();
  const auto v = client_of(before, victim);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->bos, 5u);
  EXPECT_EQ(v->contexts, 1u);
  EXPECT_GE(before.summary.bo_memory, 4u << 20);

  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  EXPECT_EQ(exit_code(victim), 128 + SIGKILL);

  // The survivor's job runs (after the victim's running job is ended) and is right.
  const uint32_t ctx = survivor.ctx();
  const BoHandle src = survivor.bo(4096), dst = survivor.bo(4096);
  std::memset(survivor.map(src), 0x3c, 4096);
  const auto copy = copy_job(src.va, dst.va, 4096);
  const BoHandle cmd = survivor.upload(copy);
  uint64_t seqno = 0;
  ASSERT_EQ(
      survivor.submit(ctx, cmd, copy.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno),
      0);
  drm_npu_wait w{};
  ASSERT_EQ(survivor.wait(ctx, seqno, deadline_ms(30000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
  const std::byte* out = survivor.map(dst);
  EXPECT_TRUE(std::all_of(out, out + 4096, [](std::byte x) { return x == std::byte{0x3c}; }));

  // The victim's connection, BOs and contexts are gone; only the survivor's memory is left.
  ASSERT_TRUE(eventually([&] { return !client_of(survivor.status(), victim).has_value(); }));
  const DaemonStatus after = survivor.status();
  const auto me = client_of(after, ::getpid());
  ASSERT_TRUE(me.has_value());
  EXPECT_EQ(me->bos, 3u);
  EXPECT_TRUE(eventually([&] { return survivor.status().summary.bo_memory == me->bo_bytes; }));
  EXPECT_EQ(d.stop(), 0);
}

TEST(DaemonProcesses, ProcessesCannotReachEachOthersBuffers) {
  DaemonProcess d;
  int info[2], go[2];
  ASSERT_EQ(::pipe(info), 0);
  ASSERT_EQ(::pipe(go), 0);
  const pid_t victim = spawn([&] {
    RawClient c(d.socket());
    c.bo(4096);
    c.bo(4096);
    const BoHandle target = c.bo(4096);  // at a VA the attacker's two BOs never get
    std::byte* p = c.map(target);
    std::memset(p, 0x5a, 4096);
    [[maybe_unused]] const ssize_t w = ::write(info[1], &target, sizeof(target));
    char b;
    [[maybe_unused]] const ssize_t r = ::read(go[0], &b, 1);
    return std::all_of(p, p + 4096, [](std::byte x) { return x == std::byte{0x5a}; }) ? 0 : 3;
  });
  BoHandle target{};
  ASSERT_EQ(::read(info[0], &target, sizeof(target)), static_cast<ssize_t>(sizeof(target)));

  RawClient attacker(d.socket());
  // Another connection's handle and mmap offset name nothing here.
  drm_npu_bo_info bi{};
  bi.handle = target.handle;
  EXPECT_EQ(attacker.io(DRM_IOCTL_NPU_BO_INFO, &bi), ENOENT);
  errno = 0;
  EXPECT_EQ(attacker.kernel().mmap(nullptr, 4096, PROT_READ, MAP_SHARED, attacker.fd(),
                                   static_cast<off_t>(target.mmap_offset)),
            MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  // A job aimed at the victim's VA: refused at SUBMIT, and faults in the MMU unvalidated.
  const uint32_t ctx = attacker.ctx();
  const BoHandle own = attacker.bo(4096);
  const auto job = copy_job(own.va, target.va, 256);
  const BoHandle cmd = attacker.upload(job);
  EXPECT_EQ(attacker.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(own, kR)}), EFAULT);
  uint64_t seqno = 0;
  ASSERT_EQ(attacker.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(own, kR)},
                            DRM_NPU_SUBMIT_SKIP_VALIDATION, &seqno),
            0);
  drm_npu_wait w{};
  ASSERT_EQ(attacker.wait(ctx, seqno, deadline_ms(30000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(w.fault.kind, DRM_NPU_FAULT_MMU);
  EXPECT_EQ(w.fault.address, target.va);

  ASSERT_EQ(::write(go[1], "g", 1), 1);
  EXPECT_EQ(exit_code(victim), 0) << "the victim's buffer changed";
}

// A ServerThread that cannot start (no place for its socket: a full disk, a bad TMPDIR or path)
// is an error that names the path, not a crash (its destructor used to stop a server that did
// not exist: a full disk segfaulted the daemon tests and the soak).
TEST(DaemonProcesses, ServerThreadThatCannotStartIsAnError) {
  auto bad_path = ServerThread::start({}, "/dev/null/npu0.sock");
  ASSERT_FALSE(bad_path);
  EXPECT_NE(bad_path.error().message.find("/dev/null/npu0.sock"), std::string::npos)
      << bad_path.error().message;
  const char* old = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe)
  const std::string saved = old != nullptr ? old : "";
  ::setenv("TMPDIR", "/dev/null", 1);  // a file: no directory can be made in it
  auto bad_tmp = ServerThread::start({});
  if (old != nullptr) {
    ::setenv("TMPDIR", saved.c_str(), 1);
  } else {
    ::unsetenv("TMPDIR");
  }
  ASSERT_FALSE(bad_tmp);
  EXPECT_EQ(bad_tmp.error().code, ENOTDIR) << bad_tmp.error().message;
  EXPECT_NE(bad_tmp.error().message.find("mkdtemp"), std::string::npos) << bad_tmp.error().message;
}

TEST(DaemonProcesses, StaleSocketIsReusedAndABusyOneRefused) {
  char tmpl[] = "/tmp/npu-daemon-test-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string path = dir + "/npu0.sock";
  {
    // A socket file nobody listens on any more, as a crashed daemon leaves it.
    const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ::close(s);
  }
  // DaemonProcess makes its own directory; run the binary by hand on this path.
  const pid_t first = ::fork();
  if (first == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::execl(NPU_DAEMON_EXE, "npu-daemon", "--socket", path.c_str(), nullptr);
    ::_exit(127);
  }
  ASSERT_TRUE(eventually([&] {
    RawClient c(path);
    return c.fd() >= 0;
  }));
  // A second daemon on the same socket: one line, exit status 1, the first one untouched.
  const pid_t second = ::fork();
  if (second == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::execl(NPU_DAEMON_EXE, "npu-daemon", "--socket", path.c_str(), nullptr);
    ::_exit(127);
  }
  EXPECT_EQ(exit_code(second), 1);
  {
    RawClient c(path);
    drm_npu_get_param p{};
    p.param = DRM_NPU_PARAM_DEVICE_ID;
    EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &p), 0);
  }
  // SIGTERM: clean exit, the socket file removed.
  ::kill(first, SIGTERM);
  EXPECT_EQ(exit_code(first), 0);
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace npu::daemon::test
