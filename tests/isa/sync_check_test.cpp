// validate()'s static semaphore checks (isa/src/sync_check.cpp): waits that can never be
// paid, deadlocks between engines (a cycle, a wait before its own signal, a FENCE or a full
// queue between a wait and its signal) and certain overflows are rejected with one line
// naming the command; programs whose signals come later in the buffer than their waits, or
// that only overflow under some timing, still pass.
#include <gtest/gtest.h>

#include <string>

#include "npu/isa/builder.h"
#include "npu/isa/validate.h"

namespace npu::isa {
namespace {

Expected<Program> run(CommandBufferBuilder& b, const DeviceConfig& cfg = {}) {
  const auto bytes = b.finish();
  return validate(bytes, cfg);
}

std::string message(CommandBufferBuilder& b, const DeviceConfig& cfg = {}) {
  auto r = run(b, cfg);
  if (r) return "(valid)";
  EXPECT_EQ(r.error().code, EINVAL);
  return r.error().message;
}

// A safe point (ISA 1.2) is where a device may switch jobs: every semaphore must be 0 there.
TEST(SyncCheck, SafePointWithASemaphoreLeftOverIsRejected) {
  CommandBufferBuilder b;
  b.sem_signal(NPU_ENGINE_DMA_IN, 2);
  b.safe_point();
  b.sem_wait(NPU_ENGINE_DMA_OUT, 2);
  EXPECT_EQ(message(b),
            "command 1 (fence): field flags: safe point with semaphore 2 at 1 (the signals minus "
            "the waits of the commands before it): every semaphore must be 0 at a safe point");
  CommandBufferBuilder ok;
  ok.sem_signal(NPU_ENGINE_DMA_IN, 2);
  ok.sem_wait(NPU_ENGINE_DMA_OUT, 2);
  ok.safe_point();
  ok.fence();
  EXPECT_EQ(message(ok), "(valid)");
  CommandBufferBuilder plain;  // the same left-over count at a plain FENCE is fine
  plain.sem_signal(NPU_ENGINE_DMA_IN, 2);
  plain.fence();
  plain.sem_wait(NPU_ENGINE_DMA_OUT, 2);
  EXPECT_EQ(message(plain), "(valid)");
}

TEST(SyncCheck, WaitOnASemaphoreNobodySignals) {
  CommandBufferBuilder b;
  b.nop(NPU_ENGINE_DMA_OUT);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  EXPECT_EQ(message(b),
            "command 1 (sem_wait): field sem: semaphore 1 is never signalled: this wait can "
            "never be satisfied");
}

TEST(SyncCheck, WaitsNeedMoreThanTheBufferSignals) {
  CommandBufferBuilder b;
  b.sem_signal(NPU_ENGINE_DMA_IN, 0, 2);
  b.sem_wait(NPU_ENGINE_VECTOR, 0);
  b.sem_wait(NPU_ENGINE_VECTOR, 0, 2);
  EXPECT_EQ(message(b),
            "command 2 (sem_wait): field count: the waits on semaphore 0 up to this one need 3, "
            "but the buffer signals it only 2: this wait can never be satisfied");
}

TEST(SyncCheck, CycleBetweenTwoEngines) {
  CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_MATRIX, 0);  // matrix waits for vector ...
  b.sem_signal(NPU_ENGINE_MATRIX, 1);
  b.sem_wait(NPU_ENGINE_VECTOR, 1);  // ... which waits for matrix
  b.sem_signal(NPU_ENGINE_VECTOR, 0);
  EXPECT_EQ(message(b),
            "command 0 (sem_wait): field sem: deadlock: semaphore 0 holds 0 of the 1 this wait "
            "needs; its next signal, command 3 (sem_signal on semaphore 0) on vector, waits "
            "behind command 2 (sem_wait on semaphore 1), which is blocked too");
}

TEST(SyncCheck, CycleThroughThreeEngines) {
  CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_DMA_IN, 2);
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  b.sem_wait(NPU_ENGINE_MATRIX, 0);
  b.sem_signal(NPU_ENGINE_MATRIX, 1);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 1);
  b.sem_signal(NPU_ENGINE_DMA_OUT, 2);
  const std::string m = message(b);
  EXPECT_TRUE(m.starts_with("command 0 (sem_wait): field sem: deadlock: semaphore 2 holds 0")) << m;
}

TEST(SyncCheck, WaitBeforeItsOwnSignalOnOneEngine) {
  CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_MATRIX, 4);
  b.sem_signal(NPU_ENGINE_MATRIX, 4);
  EXPECT_EQ(message(b),
            "command 0 (sem_wait): field sem: deadlock: semaphore 4 holds 0 of the 1 this wait "
            "needs; its next signal, command 1 (sem_signal on semaphore 4) on matrix, comes "
            "after this wait on the same engine");
}

TEST(SyncCheck, FenceBetweenAWaitAndItsSignal) {
  CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_MATRIX, 0);
  b.fence();
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  EXPECT_EQ(message(b),
            "command 0 (sem_wait): field sem: deadlock: semaphore 0 holds 0 of the 1 this wait "
            "needs; its next signal, command 2 (sem_signal on semaphore 0) on dma_in, is never "
            "dispatched: the command processor waits at command 1 (fence) for every engine to "
            "drain");
}

// A signal later in the buffer than its wait is fine while the wait's engine queue has room
// for the commands between them; a full queue stops the command processor before it
// dispatches the signal.
TEST(SyncCheck, FullQueueBetweenAWaitAndItsSignalDependsOnQueueDepth) {
  CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_MATRIX, 0);
  b.nop(NPU_ENGINE_MATRIX);
  b.nop(NPU_ENGINE_MATRIX);
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);
  EXPECT_EQ(message(b), "(valid)");  // default queue_depth 64
  DeviceConfig shallow;
  shallow.queue_depth = 2;
  EXPECT_EQ(message(b, shallow),
            "command 0 (sem_wait): field sem: deadlock: semaphore 0 holds 0 of the 1 this wait "
            "needs; its next signal, command 3 (sem_signal on semaphore 0) on dma_in, is never "
            "dispatched: the command processor waits at command 2 (nop) for room in the matrix "
            "queue (queue_depth 2)");
}

TEST(SyncCheck, CertainOverflowIsRejectedPossibleOneIsNot) {
  DeviceConfig cfg;
  cfg.semaphore_max = 2;
  CommandBufferBuilder b;
  b.sem_signal(NPU_ENGINE_DMA_IN, 5, 2);
  b.sem_signal(NPU_ENGINE_DMA_IN, 5, 2);
  b.sem_wait(NPU_ENGINE_VECTOR, 5);
  EXPECT_EQ(message(b, cfg),
            "command 1 (sem_signal): field count: semaphore 5 overflows whatever the timing: "
            "signalled 4 up to here, the whole buffer waits for 1, and the device's maximum is 2");

  // With a second wait the count may stay at 2 (the vector engine consumed first): the
  // device faults only under some timings, which validation cannot decide.
  CommandBufferBuilder c;
  c.sem_signal(NPU_ENGINE_DMA_IN, 5, 2);
  c.sem_signal(NPU_ENGINE_DMA_IN, 5, 2);
  c.sem_wait(NPU_ENGINE_VECTOR, 5);
  c.sem_wait(NPU_ENGINE_VECTOR, 5);
  EXPECT_EQ(message(c, cfg), "(valid)");
}

TEST(SyncCheck, SignalsLaterInTheBufferThanTheirWaitsAreFine) {
  CommandBufferBuilder b;
  b.sem_wait(NPU_ENGINE_VECTOR, 1, 2);  // paid by commands 3 and 5
  b.sem_signal(NPU_ENGINE_VECTOR, 2);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 2);
  b.sem_signal(NPU_ENGINE_MATRIX, 1);
  b.nop(NPU_ENGINE_MATRIX);
  b.sem_signal(NPU_ENGINE_MATRIX, 1);
  b.fence();
  b.sem_signal(NPU_ENGINE_DMA_IN, 3);
  b.sem_wait(NPU_ENGINE_DMA_OUT, 3);
  EXPECT_EQ(message(b), "(valid)");
}

// The double-buffered pipeline the compiler emits (compiler/codegen, emit_pipeline): signals
// precede their waits, tokens nobody waited for are drained at the end.
TEST(SyncCheck, CompilerPipelinePasses) {
  CommandBufferBuilder b;
  const uint32_t full = 0, free = 1, ready = 2, ofree = 3, tiles = 5;
  for (uint32_t t = 0; t < tiles; ++t) {
    if (t >= 2) b.sem_wait(NPU_ENGINE_DMA_IN, free);
    b.nop(NPU_ENGINE_DMA_IN);
    b.sem_signal(NPU_ENGINE_DMA_IN, full);
    b.sem_wait(NPU_ENGINE_MATRIX, full);
    if (t >= 2) b.sem_wait(NPU_ENGINE_MATRIX, ofree);
    b.nop(NPU_ENGINE_MATRIX);
    b.sem_signal(NPU_ENGINE_MATRIX, ready);
    b.sem_signal(NPU_ENGINE_MATRIX, free);
    b.sem_wait(NPU_ENGINE_DMA_OUT, ready);
    b.nop(NPU_ENGINE_DMA_OUT);
    b.sem_signal(NPU_ENGINE_DMA_OUT, ofree);
  }
  b.sem_wait(NPU_ENGINE_DMA_IN, free, 2);
  b.sem_wait(NPU_ENGINE_MATRIX, ofree, 2);
  DeviceConfig shallow;
  shallow.queue_depth = 1;
  EXPECT_EQ(message(b), "(valid)");
  EXPECT_EQ(message(b, shallow), "(valid)");
}

}  // namespace
}  // namespace npu::isa
