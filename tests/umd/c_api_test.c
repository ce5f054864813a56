/* The C API (npu/npu.h) from a C11 program: open, params, buffers, a raw command buffer that
 * copies a buffer through SRAM, the synchronization checker's hazards (NPU_SUBMIT_RACECHECK,
 * npu_job_hazards), errors with npu_last_error(), a device fault that bans the context, a
 * deadlocked buffer rejected at submit, and a wait timeout on a hung job. Exit status 0 on
 * success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npu/npu.h"
#include "npu_accel.h"
#include "npu_isa.h"

static int failures = 0;

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__, __LINE__, #cond, \
              npu_last_error());                                                               \
      ++failures;                                                                              \
    }                                                                                          \
  } while (0)

#define N 64

static void dma(union npu_cmd* c, int load, uint64_t dram) {
  memset(c, 0, sizeof(*c));
  c->hdr.opcode = load ? NPU_OP_DMA_LOAD : NPU_OP_DMA_STORE;
  c->hdr.engine = load ? NPU_ENGINE_DMA_IN : NPU_ENGINE_DMA_OUT;
  c->dma.dram_addr = dram;
  c->dma.sram_addr = 0;
  c->dma.elem_size = 4;
  c->dma.size[0] = N;
  c->dma.size[1] = 1;
  c->dma.size[2] = 1;
  c->dma.dram_stride[0] = 4;
  c->dma.dram_stride[1] = N * 4;
  c->dma.dram_stride[2] = N * 4;
  c->dma.sram_stride[0] = N * 4;
  c->dma.sram_stride[1] = N * 4;
}

static void sem(union npu_cmd* c, uint8_t opcode, uint8_t engine) {
  memset(c, 0, sizeof(*c));
  c->hdr.opcode = opcode;
  c->hdr.engine = engine;
  c->sem.sem = 0;
  c->sem.count = 1;
}

static void end(union npu_cmd* c) {
  memset(c, 0, sizeof(*c));
  c->hdr.opcode = NPU_OP_END;
  c->hdr.engine = NPU_ENGINE_CP;
}

/* header + cmds into out; returns the size in bytes. */
static size_t pack(unsigned char* out, const union npu_cmd* cmds, uint32_t n) {
  struct npu_cmdbuf_header h;
  memset(&h, 0, sizeof(h));
  h.magic = NPU_ISA_MAGIC;
  h.version_major = NPU_ISA_VERSION_MAJOR;
  h.version_minor = NPU_ISA_VERSION_MINOR;
  h.size = (uint32_t)(sizeof(h) + n * NPU_CMD_SIZE);
  h.num_cmds = n;
  memcpy(out, &h, sizeof(h));
  memcpy(out + sizeof(h), cmds, n * NPU_CMD_SIZE);
  return h.size;
}

/* A device string for an emulator with a short watchdog (a temporary config file). */
static void short_watchdog_device(char* device, size_t size, char* path) {
  strcpy(path, "/tmp/npu_c_api_test_XXXXXX");
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  const char* json = "{\"watchdog_ms\": 200}\n";
  CHECK(write(fd, json, strlen(json)) == (ssize_t)strlen(json));
  close(fd);
  snprintf(device, size, "emu:%s", path);
}

int main(void) {
  char device_str[128], config_path[64];
  short_watchdog_device(device_str, sizeof(device_str), config_path);

  npu_device_t* bad = NULL;
  CHECK(npu_device_open("nosuch:", &bad) == NPU_ERROR_NO_DEVICE);
  CHECK(strstr(npu_last_error(), "npu_device_open: ") == npu_last_error());

  npu_device_t* dev = NULL;
  if (npu_device_open(device_str, &dev) != NPU_OK) {
    fprintf(stderr, "cannot open %s: %s\n", device_str, npu_last_error());
    return 1;
  }
  uint64_t sram = 0, watchdog = 0;
  CHECK(npu_device_get_param(dev, DRM_NPU_PARAM_SRAM_SIZE, &sram) == NPU_OK && sram > 0);
  CHECK(npu_device_get_param(dev, DRM_NPU_PARAM_WATCHDOG_MS, &watchdog) == NPU_OK);
  CHECK(watchdog == 200);
  uint64_t dummy;
  CHECK(npu_device_get_param(dev, 999, &dummy) == NPU_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(npu_last_error(), "GET_PARAM failed") != NULL);

  npu_buffer_t *src = NULL, *dst = NULL;
  CHECK(npu_buffer_alloc(dev, N * 4, 0, 0, &src) == NPU_OK);
  CHECK(npu_buffer_alloc(dev, N * 4, 0, 0, &dst) == NPU_OK);
  CHECK(npu_buffer_size(src) == N * 4 && npu_buffer_handle(src) != 0);
  float *in = NULL, *out = NULL;
  CHECK(npu_buffer_map(src, (void**)&in) == NPU_OK);
  CHECK(npu_buffer_map(dst, (void**)&out) == NPU_OK);
  for (int i = 0; i < N; ++i) in[i] = (float)i * 0.5f - 3.0f;

  npu_context_t* ctx = NULL;
  CHECK(npu_context_create(dev, DRM_NPU_PRIORITY_NORMAL, &ctx) == NPU_OK);
  CHECK(npu_context_id(ctx) != 0);

  /* Copy src -> SRAM -> dst. */
  union npu_cmd cmds[5];
  dma(&cmds[0], 1, npu_buffer_device_address(src));
  sem(&cmds[1], NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN);
  sem(&cmds[2], NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT);
  dma(&cmds[3], 0, npu_buffer_device_address(dst));
  end(&cmds[4]);
  unsigned char bytes[32 + 5 * NPU_CMD_SIZE];
  size_t size = pack(bytes, cmds, 5);
  npu_buffer_use_t uses[2] = {{src, DRM_NPU_ACCESS_READ}, {dst, DRM_NPU_ACCESS_WRITE}};
  npu_job_t* job = NULL;
  CHECK(npu_submit(ctx, bytes, size, uses, 2, 0, &job) == NPU_OK);
  npu_job_result_t result;
  CHECK(npu_buffer_wait_idle(dst, 5000000000LL) == NPU_OK); /* BO_WAIT: the job is done */
  CHECK(npu_buffer_wait_idle(NULL, 0) == NPU_ERROR_INVALID_ARGUMENT);
  CHECK(npu_job_wait(job, 5000000000LL, &result) == NPU_OK);
  CHECK(result.status == DRM_NPU_JOB_OK && result.cycles > 0);
  CHECK(memcmp(in, out, N * 4) == 0);
  CHECK(npu_job_seqno(job) == 1);
  size_t count = 99;
  CHECK(npu_job_hazards(job, NULL, 0, &count) == NPU_ERROR_INVALID_ARGUMENT); /* not checked */
  CHECK(strstr(npu_last_error(), "NPU_SUBMIT_RACECHECK") != NULL);
  npu_job_release(job);

  /* The same copy under the synchronization checker: no hazards. Then without dma_out's wait:
   * dma_out may read the SRAM tile before dma_in wrote it, a RAW hazard on [0, N * 4). */
  CHECK(npu_submit(ctx, bytes, size, uses, 2, NPU_SUBMIT_RACECHECK, &job) == NPU_OK);
  CHECK(npu_job_wait(job, 5000000000LL, &result) == NPU_OK && result.status == DRM_NPU_JOB_OK);
  CHECK(npu_job_hazards(job, NULL, 0, &count) == NPU_OK && count == 0);
  npu_job_release(job);
  end(&cmds[2]);
  cmds[2].hdr.opcode = NPU_OP_NOP;
  cmds[2].hdr.engine = NPU_ENGINE_DMA_OUT;
  size = pack(bytes, cmds, 5);
  CHECK(npu_submit(ctx, bytes, size, uses, 2, NPU_SUBMIT_RACECHECK, &job) == NPU_OK);
  CHECK(npu_job_wait(job, 5000000000LL, &result) == NPU_OK && result.status == DRM_NPU_JOB_OK);
  npu_hazard_t hazards[4];
  CHECK(npu_job_hazards(job, hazards, 4, &count) == NPU_OK && count == 1);
  CHECK(hazards[0].kind == DRM_NPU_HAZARD_RAW && hazards[0].space == DRM_NPU_HAZARD_SPACE_SRAM);
  CHECK(hazards[0].begin == 0 && hazards[0].end == N * 4);
  CHECK(hazards[0].first_cmd == 0 && hazards[0].first_engine == NPU_ENGINE_DMA_IN);
  CHECK(hazards[0].first_opcode == NPU_OP_DMA_LOAD);
  CHECK(hazards[0].second_cmd == 3 && hazards[0].second_engine == NPU_ENGINE_DMA_OUT);
  CHECK(hazards[0].second_opcode == NPU_OP_DMA_STORE);
  npu_job_release(job);
  sem(&cmds[2], NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT);
  size = pack(bytes, cmds, 5);

  /* A malformed buffer is rejected with a message naming the call and the field. */
  bytes[0] ^= 0xff;
  CHECK(npu_submit(ctx, bytes, size, uses, 2, 0, &job) == NPU_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(npu_last_error(), "npu_submit: ") == npu_last_error());
  CHECK(strstr(npu_last_error(), "magic") != NULL);
  bytes[0] ^= 0xff;

  /* A device fault: load from past the end of src with validation skipped. */
  dma(&cmds[0], 1, npu_buffer_device_address(src) + 1024 * 1024);
  size = pack(bytes, cmds, 5);
  CHECK(npu_submit(ctx, bytes, size, uses, 2, NPU_SUBMIT_SKIP_VALIDATION, &job) == NPU_OK);
  CHECK(npu_job_wait(job, -1, &result) == NPU_OK);
  CHECK(result.status == DRM_NPU_JOB_ERROR);
  CHECK(result.fault.kind == DRM_NPU_FAULT_MMU && result.fault.engine == NPU_ENGINE_DMA_IN);
  CHECK(result.fault.cmd_index == 0);
  npu_job_release(job);
  int banned = 0;
  CHECK(npu_context_banned(ctx, &banned) == NPU_OK && banned == 1);
  CHECK(npu_submit(ctx, bytes, size, uses, 2, NPU_SUBMIT_SKIP_VALIDATION, &job) ==
        NPU_ERROR_CANCELED);
  CHECK(strstr(npu_last_error(), "context banned") != NULL);
  npu_context_destroy(ctx);

  /* A hung job: the wait times out, then the watchdog (200 ms) ends it. */
  CHECK(npu_context_create(dev, DRM_NPU_PRIORITY_HIGH, &ctx) == NPU_OK);
  npu_cmdbuf_t* cb = NULL;
  union npu_cmd hang[2];
  sem(&hang[0], NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT);
  end(&hang[1]);
  size = pack(bytes, hang, 2);
  CHECK(npu_cmdbuf_create(dev, bytes, size, &cb) == NPU_OK);
  /* Validated, the wait nothing signals is rejected at submit, naming the command. */
  CHECK(npu_cmdbuf_submit(ctx, cb, 0, &job) == NPU_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(npu_last_error(),
               "command 0 (sem_wait): field sem: semaphore 0 is never "
               "signalled") != NULL);
  /* Unvalidated, the device meets it. */
  CHECK(npu_cmdbuf_submit(ctx, cb, NPU_SUBMIT_SKIP_VALIDATION, &job) == NPU_OK);
  CHECK(npu_job_wait(job, 10000000, &result) == NPU_ERROR_TIMEOUT);
  CHECK(strstr(npu_last_error(), "WAIT failed") != NULL);
  CHECK(npu_buffer_wait_idle(dst, 0) == NPU_OK); /* dst is not in the hung job */
  CHECK(npu_job_wait(job, 0, &result) == NPU_ERROR_BUSY || result.status != DRM_NPU_JOB_OK);
  CHECK(npu_job_wait(job, -1, &result) == NPU_OK);
  CHECK(result.status == DRM_NPU_JOB_ERROR && result.fault.kind == DRM_NPU_FAULT_WATCHDOG);
  npu_job_release(job);
  npu_cmdbuf_destroy(cb);

  /* Handles may be released in any order: the device first. */
  npu_device_close(dev);
  npu_context_destroy(ctx);
  npu_buffer_free(src);
  npu_buffer_free(dst);
  unlink(config_path);

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("c api test passed\n");
  return 0;
}
