/* libdrm_client: a driver team's program, written against uapi/npu_accel.h, npu_isa.h and
 * libdrm alone (no libnpu): find the NPU's accel node, open it, identify the driver, create
 * BOs and map them, run a DMA job, wait for it, and check the kernel's file semantics (dup, a
 * second open file's isolation, a forked child, bad pointers). Run under npu-shim:
 *
 *   npu-shim [--device unix:PATH] -- libdrm_client emu|daemon|hang
 *
 * The argument says what a forked child's inherited descriptor does: "daemon" — it is the
 * same file (the child submits on the parent's BOs); "emu" — an in-process device does not
 * survive fork(), so it answers ENODEV. Prints one line per step; exits 0 when all pass. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "npu_accel.h"
#include "npu_isa.h"

#define CHECK(cond, ...)                             \
  do {                                               \
    if (!(cond)) {                                   \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                  \
      fprintf(stderr, " (errno %d: %s)\n", errno, strerror(errno)); \
      exit(1);                                       \
    }                                                \
  } while (0)

struct bo {
  uint32_t handle;
  uint64_t va;
  uint64_t size;
  void* map;
};

static struct bo bo_new(int fd, uint64_t size) {
  struct bo b = {0};
  struct drm_npu_bo_create c = {.size = size};
  CHECK(drmIoctl(fd, DRM_IOCTL_NPU_BO_CREATE, &c) == 0, "BO_CREATE %llu", (unsigned long long)size);
  struct drm_npu_bo_info i = {.handle = c.handle};
  CHECK(drmIoctl(fd, DRM_IOCTL_NPU_BO_INFO, &i) == 0, "BO_INFO %u", c.handle);
  b.map = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)i.mmap_offset);
  CHECK(b.map != MAP_FAILED, "mmap of bo %u", c.handle);
  b.handle = c.handle;
  b.va = c.device_addr;
  b.size = i.size;
  return b;
}

static int64_t deadline_in(int64_t ns) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + ns;
}

/* The dma_copy example: IN (4x4 fp32) -> SRAM with a one-element zero border -> OUT (6x6). */
static void record_copy(void* cmd, uint64_t in, uint64_t out) {
  struct npu_cmdbuf_header* h = cmd;
  union npu_cmd* c = (union npu_cmd*)((char*)cmd + sizeof(*h));
  memset(cmd, 0, sizeof(*h) + 5 * NPU_CMD_SIZE);
  h->magic = NPU_ISA_MAGIC;
  h->version_major = NPU_ISA_VERSION_MAJOR;
  h->version_minor = 0;
  h->num_cmds = 5;
  h->size = (uint32_t)(sizeof(*h) + 5 * NPU_CMD_SIZE);
  struct npu_cmd_dma* ld = &c[0].dma;
  ld->hdr.opcode = NPU_OP_DMA_LOAD;
  ld->hdr.engine = NPU_ENGINE_DMA_IN;
  ld->dram_addr = in;
  ld->elem_size = 4;
  ld->size[0] = 4, ld->size[1] = 4, ld->size[2] = 1;
  ld->dram_stride[0] = 4, ld->dram_stride[1] = 16, ld->dram_stride[2] = 64;
  ld->sram_stride[0] = 24, ld->sram_stride[1] = 144;
  ld->pad_before[0] = 1, ld->pad_before[1] = 1;
  ld->pad_after[0] = 1, ld->pad_after[1] = 1;
  c[1].sem.hdr.opcode = NPU_OP_SEM_SIGNAL;
  c[1].sem.hdr.engine = NPU_ENGINE_DMA_IN;
  c[1].sem.count = 1;
  c[2].sem.hdr.opcode = NPU_OP_SEM_WAIT;
  c[2].sem.hdr.engine = NPU_ENGINE_DMA_OUT;
  c[2].sem.count = 1;
  struct npu_cmd_dma* st = &c[3].dma;
  st->hdr.opcode = NPU_OP_DMA_STORE;
  st->hdr.engine = NPU_ENGINE_DMA_OUT;
  st->dram_addr = out;
  st->elem_size = 4;
  st->size[0] = 6, st->size[1] = 6, st->size[2] = 1;
  st->dram_stride[0] = 4, st->dram_stride[1] = 24, st->dram_stride[2] = 144;
  st->sram_stride[0] = 24, st->sram_stride[1] = 144;
  c[4].end.hdr.opcode = NPU_OP_END;
  c[4].end.hdr.engine = NPU_ENGINE_CP;
}

/* Submits the copy on `ctx` and waits; returns the job status. */
static uint32_t run_copy(int fd, uint32_t ctx, const struct bo* in, const struct bo* out,
                         const struct bo* cmd) {
  struct drm_npu_bo_ref refs[3] = {{in->handle, DRM_NPU_ACCESS_READ},
                                   {out->handle, DRM_NPU_ACCESS_WRITE},
                                   {cmd->handle, DRM_NPU_ACCESS_READ}};
  struct drm_npu_submit s = {.ctx_id = ctx,
                             .cmd_handle = cmd->handle,
                             .bo_count = 3,
                             .cmd_size = sizeof(struct npu_cmdbuf_header) + 5 * NPU_CMD_SIZE,
                             .bos = (uintptr_t)refs};
  CHECK(drmIoctl(fd, DRM_IOCTL_NPU_SUBMIT, &s) == 0, "SUBMIT");
  struct drm_npu_wait w = {.ctx_id = ctx, .seqno = s.seqno, .timeout_ns = deadline_in(10000000000)};
  CHECK(drmIoctl(fd, DRM_IOCTL_NPU_WAIT, &w) == 0, "WAIT seqno %llu", (unsigned long long)s.seqno);
  return w.status;
}

static void check_output(const struct bo* in, const struct bo* out) {
  const float* x = in->map;
  const float* y = out->map;
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 6; ++c) {
      const int inside = r >= 1 && r <= 4 && c >= 1 && c <= 4;
      const float want = inside ? x[(r - 1) * 4 + (c - 1)] : 0.0f;
      CHECK(y[r * 6 + c] == want, "out[%d][%d] = %g, want %g", r, c, y[r * 6 + c], want);
    }
  }
}

static char* find_node(void) {
  DIR* d = opendir("/dev/accel");
  CHECK(d != NULL, "opendir /dev/accel");
  char* found = NULL;
  for (struct dirent* e = readdir(d); e != NULL; e = readdir(d)) {
    if (strncmp(e->d_name, "accel", 5) != 0) continue;
    CHECK(e->d_type == DT_CHR || e->d_type == DT_UNKNOWN, "%s has d_type %d", e->d_name,
          e->d_type);
    CHECK(asprintf(&found, "/dev/accel/%s", e->d_name) > 0, "asprintf");
    break;
  }
  closedir(d);
  CHECK(found != NULL, "no accel node in /dev/accel");
  struct stat st;
  CHECK(stat(found, &st) == 0 && S_ISCHR(st.st_mode), "stat %s: not a character device", found);
  CHECK(major(st.st_rdev) == DRM_NPU_ACCEL_MAJOR, "%s is %u:%u", found, major(st.st_rdev),
        minor(st.st_rdev));
  char sys[128], text[256] = {0};
  snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u/device/uevent", major(st.st_rdev),
           minor(st.st_rdev));
  FILE* f = fopen(sys, "r");
  CHECK(f != NULL, "fopen %s", sys);
  CHECK(fread(text, 1, sizeof(text) - 1, f) > 0, "read %s", sys);
  fclose(f);
  CHECK(strstr(text, "DRIVER=" DRM_NPU_DRIVER_NAME "\n") != NULL, "%s says '%s'", sys, text);
  printf("ok: found %s (%u:%u, driver %s in sysfs)\n", found, major(st.st_rdev),
         minor(st.st_rdev), DRM_NPU_DRIVER_NAME);
  return found;
}

/* "hang": holds a 16 MiB BO and a job only the watchdog ends, says "ready" and waits to be
 * killed (tests/shim/killed_client.sh). */
static int hang_until_killed(const char* node) {
  int fd = open(node, O_RDWR | O_CLOEXEC);
  CHECK(fd >= 0, "open %s", node);
  struct bo big = bo_new(fd, 16u << 20);
  memset(big.map, 1, 16u << 20);
  struct bo cmd = bo_new(fd, 4096);
  struct npu_cmdbuf_header* h = cmd.map;
  union npu_cmd* c = (union npu_cmd*)((char*)cmd.map + sizeof(*h));
  h->magic = NPU_ISA_MAGIC;
  h->version_major = NPU_ISA_VERSION_MAJOR;
  h->num_cmds = 2;
  h->size = (uint32_t)(sizeof(*h) + 2 * NPU_CMD_SIZE);
  c[0].sem.hdr.opcode = NPU_OP_SEM_WAIT; /* nobody signals it */
  c[0].sem.hdr.engine = NPU_ENGINE_DMA_OUT;
  c[0].sem.count = 1;
  c[1].end.hdr.opcode = NPU_OP_END;
  c[1].end.hdr.engine = NPU_ENGINE_CP;
  struct drm_npu_ctx_create cc = {.priority = DRM_NPU_PRIORITY_NORMAL};
  CHECK(drmIoctl(fd, DRM_IOCTL_NPU_CTX_CREATE, &cc) == 0, "CTX_CREATE");
  struct drm_npu_bo_ref refs[2] = {{cmd.handle, DRM_NPU_ACCESS_READ},
                                   {big.handle, DRM_NPU_ACCESS_READ | DRM_NPU_ACCESS_WRITE}};
  for (int i = 0; i < 4; ++i) {
    struct drm_npu_submit s = {.ctx_id = cc.ctx_id, .flags = DRM_NPU_SUBMIT_SKIP_VALIDATION,
                               .cmd_handle = cmd.handle, .bo_count = 2, .cmd_size = h->size,
                               .bos = (uintptr_t)refs};
    CHECK(drmIoctl(fd, DRM_IOCTL_NPU_SUBMIT, &s) == 0, "SUBMIT of the hung job");
  }
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}

int main(int argc, char** argv) {
  const int daemon = argc > 1 && strcmp(argv[1], "daemon") == 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  char* node = find_node();
  if (argc > 1 && strcmp(argv[1], "hang") == 0) return hang_until_killed(node);

  int fd = open(node, O_RDWR | O_CLOEXEC);
  CHECK(fd >= 0, "open %s", node);
  struct stat st;
  CHECK(fstat(fd, &st) == 0 && S_ISCHR(st.st_mode), "fstat of the open node");
  drmVersionPtr v = drmGetVersion(fd);
  CHECK(v != NULL, "drmGetVersion");
  CHECK(strcmp(v->name, DRM_NPU_DRIVER_NAME) == 0, "driver '%s'", v->name);
  CHECK(v->version_major == DRM_NPU_API_VERSION_MAJOR && v->version_minor >= 3,
        "driver version %d.%d", v->version_major, v->version_minor);
  printf("ok: drmGetVersion: %s %d.%d.%d (%s) %s\n", v->name, v->version_major, v->version_minor,
         v->version_patchlevel, v->date, v->desc);
  drmFreeVersion(v);

  struct drm_npu_get_param p = {.param = DRM_NPU_PARAM_CAPABILITIES};
  CHECK(drmIoctl(fd, DRM_IOCTL_NPU_GET_PARAM, &p) == 0, "GET_PARAM CAPABILITIES");
  CHECK(p.value & DRM_NPU_CAP_BO_WAIT, "no BO_WAIT capability");

  struct bo in = bo_new(fd, 64), out = bo_new(fd, 144), cmd = bo_new(fd, 4096);
  for (int i = 0; i < 16; ++i) ((float*)in.map)[i] = (float)(i + 1) * 0.5f;
  memset(out.map, 0xff, 144);
  record_copy(cmd.map, in.va, out.va);
  struct drm_npu_ctx_create cc = {.priority = DRM_NPU_PRIORITY_NORMAL};
  CHECK(drmIoctl(fd, DRM_IOCTL_NPU_CTX_CREATE, &cc) == 0, "CTX_CREATE");
  CHECK(run_copy(fd, cc.ctx_id, &in, &out, &cmd) == DRM_NPU_JOB_OK, "the job failed");
  check_output(&in, &out);
  struct drm_npu_bo_wait bw = {.handle = out.handle, .timeout_ns = 0};
  CHECK(drmIoctl(fd, DRM_IOCTL_NPU_BO_WAIT, &bw) == 0, "BO_WAIT on an idle BO");
  printf("ok: a DMA job through SUBMIT/WAIT, output checked, BO_WAIT idle\n");

  /* Bad pointers are EFAULT, not a crash. */
  struct drm_npu_bo_ref* wild = (struct drm_npu_bo_ref*)(uintptr_t)0x10;
  struct drm_npu_submit bad = {.ctx_id = cc.ctx_id, .cmd_handle = cmd.handle, .bo_count = 1,
                               .cmd_size = 64, .bos = (uintptr_t)wild};
  CHECK(drmIoctl(fd, DRM_IOCTL_NPU_SUBMIT, &bad) == -1 && errno == EFAULT, "wild bos pointer");
  CHECK(ioctl(fd, DRM_IOCTL_NPU_GET_PARAM, (void*)0x10) == -1 && errno == EFAULT,
        "wild argument pointer");
  printf("ok: wild user pointers give EFAULT\n");

  /* A dup shares the file: same handles, and the file outlives the descriptor it came from. */
  int fd2 = dup(fd);
  CHECK(fd2 >= 0, "dup");
  CHECK(close(fd) == 0, "close the original descriptor");
  struct drm_npu_bo_info bi = {.handle = out.handle};
  CHECK(drmIoctl(fd2, DRM_IOCTL_NPU_BO_INFO, &bi) == 0, "BO_INFO through the dup");
  memset(out.map, 0, 144);
  CHECK(run_copy(fd2, cc.ctx_id, &in, &out, &cmd) == DRM_NPU_JOB_OK, "job through the dup");
  check_output(&in, &out);
  printf("ok: dup shares the file after the original is closed\n");

  /* A second open is another file: the first one's handles and contexts are not its own. */
  int other = open(node, O_RDWR | O_CLOEXEC);
  CHECK(other >= 0, "second open");
  struct drm_npu_bo_info oi = {.handle = out.handle};
  CHECK(drmIoctl(other, DRM_IOCTL_NPU_BO_INFO, &oi) == -1 && errno == ENOENT,
        "another file's handle");
  struct drm_npu_wait ow = {.ctx_id = cc.ctx_id, .seqno = 1};
  CHECK(drmIoctl(other, DRM_IOCTL_NPU_WAIT, &ow) == -1 && errno == ENOENT,
        "another file's context");
  close(other);
  printf("ok: a second open file is isolated\n");

  /* A forked child and its inherited descriptor. */
  memset(out.map, 0, 144);
  const pid_t child = fork();
  CHECK(child >= 0, "fork");
  if (child == 0) {
    if (daemon) {
      if (run_copy(fd2, cc.ctx_id, &in, &out, &cmd) != DRM_NPU_JOB_OK) _exit(2);
      _exit(0);
    }
    struct drm_npu_bo_info ci = {.handle = out.handle};
    const int r = drmIoctl(fd2, DRM_IOCTL_NPU_BO_INFO, &ci);
    _exit(r == -1 && errno == ENODEV ? 0 : 3);
  }
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child, "waitpid");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status %d)", status);
  if (daemon) {
    check_output(&in, &out); /* the child's job wrote the parent's BO */
    CHECK(run_copy(fd2, cc.ctx_id, &in, &out, &cmd) == DRM_NPU_JOB_OK, "parent after the child");
    printf("ok: a forked child used its inherited descriptor (same file, same BOs)\n");
  } else {
    printf("ok: a forked child's inherited in-process descriptor answers ENODEV\n");
  }

  CHECK(close(fd2) == 0, "close");
  struct drm_npu_get_param gone = {.param = DRM_NPU_PARAM_API_VERSION};
  CHECK(drmIoctl(fd2, DRM_IOCTL_NPU_GET_PARAM, &gone) == -1 && errno == EBADF,
        "ioctl on a closed descriptor");
  munmap(in.map, in.size);
  munmap(out.map, out.size);
  munmap(cmd.map, cmd.size);
  free(node);
  printf("ok: all checks passed\n");
  return 0;
}
