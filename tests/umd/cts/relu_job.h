// The conformance suite's standard small job, shared with the daemon's tests: DMA `n` floats
// from `src` into SRAM, RELU them on the vector engine, DMA them to `dst` (semaphores order
// the three engines). Header-only so any test binary can record it.
#pragma once

#include <cstdint>

#include "npu/buffer.h"
#include "npu/command_buffer.h"

namespace npu {

inline void record_relu(CommandBuffer& cb, const Buffer& src, const Buffer& dst, uint32_t n) {
  const uint32_t out_sram = (n * 4 + 63) / 64 * 64;
  cb.dma_load(src, 0, {.sram = 0, .elem_size = 4, .size = {n, 1, 1}});
  cb.sem_signal(NPU_ENGINE_DMA_IN, 0);
  cb.sem_wait(NPU_ENGINE_VECTOR, 0);
  cb.activation({.func = NPU_ACT_RELU,
                 .dtype = NPU_DTYPE_FP32,
                 .shape = {1, 1, 1, n},
                 .in_addr = 0,
                 .out_addr = out_sram});
  cb.sem_signal(NPU_ENGINE_VECTOR, 1);
  cb.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  cb.dma_store(dst, 0, {.sram = out_sram, .elem_size = 4, .size = {n, 1, 1}});
}

}  // namespace npu
