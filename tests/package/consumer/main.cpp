// Uses the installed libnpu: y = relu(x) on 16 floats through the default device ("emu:",
// registered by linking npu::emu).
#include <cstdio>
#include <span>
#include <vector>

#include "npu/buffer.h"
#include "npu/command_buffer.h"
#include "npu/context.h"
#include "npu/device.h"

int main() {
  auto dev = npu::Device::open();
  if (!dev) return std::fprintf(stderr, "%s\n", dev.error().message.c_str()), 1;
  constexpr uint32_t n = 16;
  std::vector<float> in(n), out(n);
  for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<float>(i) - 8.0f;
  auto src = npu::Buffer::allocate(*dev, n * 4);
  auto dst = npu::Buffer::allocate(*dev, n * 4);
  if (!src || !dst) return std::fprintf(stderr, "allocate failed\n"), 1;
  if (!src->write(0, std::as_bytes(std::span(in)))) return 1;

  npu::CommandBuffer cb(*dev);
  cb.dma_load(*src, 0, {.elem_size = 4, .size = {n, 1, 1}});
  cb.sem_signal(NPU_ENGINE_DMA_IN, 0);
  cb.sem_wait(NPU_ENGINE_VECTOR, 0);
  cb.activation({.func = NPU_ACT_RELU, .shape = {1, 1, 1, n}, .in_addr = 0, .out_addr = n * 4});
  cb.sem_signal(NPU_ENGINE_VECTOR, 1);
  cb.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  cb.dma_store(*dst, 0, {.sram = n * 4, .elem_size = 4, .size = {n, 1, 1}});

  auto ctx = npu::Context::create(*dev);
  if (!ctx) return std::fprintf(stderr, "%s\n", ctx.error().message.c_str()), 1;
  auto job = ctx->submit(cb);
  if (!job) return std::fprintf(stderr, "%s\n", job.error().message.c_str()), 1;
  auto result = job->wait(std::chrono::seconds(10));
  if (!result || !result->ok()) return std::fprintf(stderr, "job failed\n"), 1;
  if (!dst->read(0, std::as_writable_bytes(std::span(out)))) return 1;
  for (uint32_t i = 0; i < n; ++i) {
    if (out[i] != (in[i] > 0 ? in[i] : 0.0f)) return std::fprintf(stderr, "wrong result\n"), 1;
  }
  std::printf("relu on %s: ok, %llu cycles\n", dev->params().name.c_str(),
              static_cast<unsigned long long>(result->cycles));
  return 0;
}
