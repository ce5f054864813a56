// fence_pipeline: two processes chain NPU jobs through a fence on a shared buffer, with no
// host-side wait between the jobs (docs/uapi.md, API 1.3).
//
//   npu-daemon --socket /tmp/npu.sock &
//   fence_pipeline --device unix:/tmp/npu.sock
//   npu-shim --device unix:/tmp/npu.sock -- env NPU_DEVICE=drm: fence_pipeline   # the node
//
// The producer (the parent process) runs y = relu(x) into a buffer it exports, and hands the
// buffer's descriptor and its job's fence to the consumer (a child process) over a UNIX
// socket (SCM_RIGHTS) right after SUBMIT — it never waits for its job. The consumer imports
// the buffer on a device file of its own and submits z = relu(y) - a second stage - after the
// producer's fence, then waits for its own job only. The device runs the consumer's job once
// the producer's has retired; had the producer's job failed, the consumer's would be aborted
// (fault DEPENDENCY). The two processes need one device: npu-daemon's, directly or through
// npu-shim's node (an in-process emu: device is one process's own).
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "npu/buffer.h"
#include "npu/command_buffer.h"
#include "npu/context.h"
#include "npu/device.h"
#include "npu/fence.h"

namespace {

constexpr uint32_t kN = 4096;  // floats per buffer

// src -> SRAM -> RELU -> dst, engines ordered by semaphores.
void record_relu(npu::CommandBuffer& cb, const npu::Buffer& src, const npu::Buffer& dst) {
  const uint32_t out = kN * 4;
  cb.dma_load(src, 0, {.sram = 0, .elem_size = 4, .size = {kN, 1, 1}});
  cb.sem_signal(NPU_ENGINE_DMA_IN, 0);
  cb.sem_wait(NPU_ENGINE_VECTOR, 0);
  cb.activation({.func = NPU_ACT_RELU,
                 .dtype = NPU_DTYPE_FP32,
                 .shape = {1, 1, 1, kN},
                 .in_addr = 0,
                 .out_addr = out});
  cb.sem_signal(NPU_ENGINE_VECTOR, 1);
  cb.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  cb.dma_store(dst, 0, {.sram = out, .elem_size = 4, .size = {kN, 1, 1}});
}

bool send_fds(int sock, const int* fds, size_t n) {
  char byte = 'f';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 2)] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * n);
  std::memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
  return ::sendmsg(sock, &m, 0) == 1;
}

std::vector<int> recv_fds(int sock) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 2)] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof(control);
  std::vector<int> out;
  if (::recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1) return out;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    out.resize(n);
    std::memcpy(out.data(), CMSG_DATA(c), n * sizeof(int));
  }
  return out;
}

int fail(const char* who, const npu::Error& e) {
  std::fprintf(stderr, "fence_pipeline: %s: %s\n", who, e.message.c_str());
  return 1;
}

// The consumer: import the producer's buffer, run the second stage after its fence.
int consume(const std::string& device, int sock) {
  const std::vector<int> fds = recv_fds(sock);
  if (fds.size() != 2) {
    std::fprintf(stderr, "fence_pipeline: consumer: expected a buffer and a fence\n");
    return 1;
  }
  npu::UniqueFd buffer_fd(fds[0]);
  npu::Fence producer_done{npu::UniqueFd(fds[1])};
  auto dev = npu::Device::open(device);
  if (!dev) return fail("consumer: open", dev.error());
  auto y = dev->import_buffer(buffer_fd.get());
  if (!y) return fail("consumer: import", y.error());
  auto z = npu::Buffer::allocate(*dev, kN * 4);
  if (!z) return fail("consumer: allocate", z.error());
  auto ctx = npu::Context::create(*dev, npu::Priority::kHigh);
  if (!ctx) return fail("consumer: context", ctx.error());
  npu::CommandBuffer cb(*dev);
  record_relu(cb, *y, *z);
  const std::vector<npu::Fence> after = [&] {
    std::vector<npu::Fence> v;
    v.push_back(std::move(producer_done));
    return v;
  }();
  const auto t0 = std::chrono::steady_clock::now();
  auto job = ctx->submit(cb, {.after = after});
  if (!job) return fail("consumer: submit", job.error());
  auto r = job->wait(std::chrono::seconds(30));
  if (!r) return fail("consumer: wait", r.error());
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  if (!r->ok()) {
    std::fprintf(stderr, "fence_pipeline: consumer: job %s (fault %s)\n", npu::to_string(r->status),
                 npu::fault_kind_name(r->fault.kind));
    return 1;
  }
  std::vector<float> out(kN);
  auto rd = z->read(0, std::as_writable_bytes(std::span(out)));
  if (!rd) return fail("consumer: read", rd.error());
  for (uint32_t i = 0; i < kN; ++i) {
    const float x = static_cast<float>(i % 97) - 48.0f;
    if (out[i] != std::max(x, 0.0f)) {
      std::fprintf(stderr, "fence_pipeline: consumer: z[%u] = %g, want %g\n", i, out[i],
                   std::max(x, 0.0f));
      return 1;
    }
  }
  std::printf(
      "consumer (pid %d): imported the producer's buffer, ran after its fence: %u "
      "values correct, %llu cycles, %.0f us from submit to result\n",
      ::getpid(), kN, static_cast<unsigned long long>(r->cycles), us);
  return 0;
}

// The producer: the first stage, its fence and buffer handed over at once. It keeps its
// context (and so its job) alive until the consumer is done: destroying a context aborts its
// queued jobs, and a job waiting on an aborted job's fence is aborted in turn.
int produce(const std::string& device, int sock, pid_t consumer, int& consumer_status) {
  auto dev = npu::Device::open(device);
  if (!dev) return fail("producer: open", dev.error());
  std::vector<float> xs(kN);
  for (uint32_t i = 0; i < kN; ++i) xs[i] = static_cast<float>(i % 97) - 48.0f;
  auto x = npu::Buffer::allocate(*dev, kN * 4);
  auto y = npu::Buffer::allocate(*dev, kN * 4);
  if (!x || !y) return fail("producer: allocate", x ? y.error() : x.error());
  if (auto w = x->write(0, std::as_bytes(std::span(xs))); !w)
    return fail("producer: write", w.error());
  auto ctx = npu::Context::create(*dev);
  if (!ctx) return fail("producer: context", ctx.error());
  npu::CommandBuffer cb(*dev);
  record_relu(cb, *x, *y);
  auto job = ctx->submit(cb, {.fence_out = true});
  if (!job) return fail("producer: submit", job.error());
  auto fence = job->fence();
  auto exported = y->export_fd();
  if (!fence) return fail("producer: fence", fence.error());
  if (!exported) return fail("producer: export", exported.error());
  const int fds[2] = {exported->get(), fence->fd()};
  if (!send_fds(sock, fds, 2)) {
    std::perror("fence_pipeline: producer: sendmsg");
    return 1;
  }
  std::printf(
      "producer (pid %d): submitted y = relu(x), sent its buffer and fence without "
      "waiting\n",
      ::getpid());
  std::fflush(stdout);
  ::waitpid(consumer, &consumer_status, 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Two processes chain NPU jobs through a fence on a shared buffer"};
  std::string device = npu::default_device();
  app.add_option("--device", device, "a device both processes share (unix:PATH or drm:)");
  CLI11_PARSE(app, argc, argv);
  if (device == "emu" || device.starts_with("emu:")) {
    std::fprintf(stderr,
                 "fence_pipeline: device '%s' is in-process, one per process: use "
                 "npu-daemon's (unix:PATH) or the node npu-shim makes for it (drm:)\n",
                 device.c_str());
    return 1;
  }
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    std::perror("fence_pipeline: socketpair");
    return 1;
  }
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("fence_pipeline: fork");
    return 1;
  }
  if (child == 0) {
    ::close(sv[0]);
    const int rc = consume(device, sv[1]);
    std::fflush(stdout);
    ::_exit(rc);
  }
  ::close(sv[1]);
  int status = 0;
  const int produced = produce(device, sv[0], child, status);
  if (produced != 0) ::waitpid(child, &status, 0);
  const bool consumed = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (produced == 0 && consumed) std::printf("pipeline ok\n");
  return produced == 0 && consumed ? 0 : 1;
}
