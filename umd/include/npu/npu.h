/* SPDX-License-Identifier: MIT */
/*
 * npu.h - the C API of libnpu, over the C++ objects (npu/device.h and friends).
 *
 * Handles: every object is an opaque pointer created by a *_open/_alloc/_create function and
 * released by the matching *_close/_free/_destroy/_release function (NULL is accepted and
 * ignored). Handles are independent: a buffer, context or job keeps what it needs of its
 * device alive, so they may be released in any order (see docs/libnpu.md).
 *
 * Errors: functions return npu_status_t. On failure npu_last_error() returns a one-line
 * message naming the call, the object and the errno, e.g.
 * "npu_submit: submit: ctx 3: SUBMIT failed: Operation canceled (context banned)".
 * The message is thread-local and valid until the next failing call on the same thread.
 * A job that faulted is not a failed wait: npu_job_wait() returns NPU_OK and a result with
 * status NPU_JOB_ERROR and the fault.
 *
 * Threading: handles may be used from several threads as their C++ objects allow: device,
 * context and job calls are thread-safe; one buffer or command buffer must not be mutated
 * from two threads at once.
 *
 * This header compiles as C11 and as C++.
 */
#ifndef NPU_NPU_H
#define NPU_NPU_H

#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus)
extern "C" {
#endif

typedef struct npu_device npu_device_t;
struct drm_npu_quota; /* npu_accel.h */
typedef struct npu_buffer npu_buffer_t;
typedef struct npu_context npu_context_t;
typedef struct npu_cmdbuf npu_cmdbuf_t;
typedef struct npu_job npu_job_t;

typedef enum npu_status {
  NPU_OK = 0,
  NPU_ERROR_INVALID_ARGUMENT = 1, /* EINVAL, ERANGE, EXDEV, EBADF */
  NPU_ERROR_NOT_FOUND = 2,        /* ENOENT */
  NPU_ERROR_OUT_OF_MEMORY = 3,    /* ENOMEM */
  NPU_ERROR_TIMEOUT = 4,          /* ETIMEDOUT: the job is still pending */
  NPU_ERROR_BUSY = 5,             /* EBUSY: a poll found the job pending */
  NPU_ERROR_CANCELED = 6,         /* ECANCELED: the context is banned */
  NPU_ERROR_FAULT = 7,            /* EFAULT: memory outside the referenced buffers */
  NPU_ERROR_NO_DEVICE = 8,        /* ENODEV, ENOENT on open: no such device or backend */
  NPU_ERROR_UNSUPPORTED = 9,      /* EOPNOTSUPP, EPROTO */
  NPU_ERROR_EXISTS = 10,          /* EEXIST: e.g. a FIXED_VA range overlaps a buffer */
  NPU_ERROR_UNKNOWN = 11,         /* any other errno: see npu_last_errno() */
  NPU_ERROR_QUOTA = 12,           /* EDQUOT (API 1.4): past one of the file's limits */
  NPU_ERROR_PERMISSION = 13       /* EPERM (API 1.4): e.g. REALTIME without CAP_SYS_NICE */
} npu_status_t;

/** Thread-local message of the last failure on this thread ("" when none). */
const char* npu_last_error(void);
/** errno of the last failure on this thread (0 when none). */
int npu_last_errno(void);
/** "ok", "invalid argument", ... */
const char* npu_status_string(npu_status_t status);

/* Device. `device` is a device string ("emu:", "emu:/path/config.json", "/dev/accel/accel0")
 * or NULL for $NPU_DEVICE, else "emu:". */
npu_status_t npu_device_open(const char* device, npu_device_t** out);
void npu_device_close(npu_device_t* device);
/** One DRM_NPU_PARAM_* value (uncached GET_PARAM). */
npu_status_t npu_device_get_param(npu_device_t* device, uint32_t param, uint64_t* value);
/** This file's use of its limits (QUERY QUOTA, API 1.4 with DRM_NPU_CAP_QUOTAS). */
npu_status_t npu_device_quota(npu_device_t* device, struct drm_npu_quota* out);

/* Buffers. Flags: DRM_NPU_BO_DEVICE_READ_ONLY, DRM_NPU_BO_FIXED_VA (then `fixed_va` is the
 * device address; otherwise it must be 0). */
npu_status_t npu_buffer_alloc(npu_device_t* device, uint64_t size, uint32_t flags,
                              uint64_t fixed_va, npu_buffer_t** out);
/** Maps the buffer (first call) and returns its host address. */
npu_status_t npu_buffer_map(npu_buffer_t* buffer, void** ptr);
uint64_t npu_buffer_device_address(const npu_buffer_t* buffer);
uint64_t npu_buffer_size(const npu_buffer_t* buffer);
uint32_t npu_buffer_handle(const npu_buffer_t* buffer);
/** Waits up to `timeout_ns` (relative; < 0 waits forever, 0 polls) until no queued or
 * running job uses the buffer (DRM_IOCTL_NPU_BO_WAIT). NPU_ERROR_TIMEOUT while one does. */
npu_status_t npu_buffer_wait_idle(npu_buffer_t* buffer, int64_t timeout_ns);
void npu_buffer_free(npu_buffer_t* buffer);
/** A descriptor for the buffer's pages (API 1.3), close-on-exec; the caller closes it. Import
 * it with npu_buffer_import() on another device handle, in this process or another. */
npu_status_t npu_buffer_export(const npu_buffer_t* buffer, int* fd);
/** A buffer of `device` for an exported descriptor; `flags`/`fixed_va` as npu_buffer_alloc. */
npu_status_t npu_buffer_import(npu_device_t* device, int fd, uint32_t flags, uint64_t fixed_va,
                               npu_buffer_t** out);

/* Contexts. `priority` is DRM_NPU_PRIORITY_*. */
npu_status_t npu_context_create(npu_device_t* device, uint32_t priority, npu_context_t** out);
uint32_t npu_context_id(const npu_context_t* context);
/** Whether the context is banned (after a fault): *banned 0 or 1. */
npu_status_t npu_context_banned(npu_context_t* context, int* banned);
void npu_context_destroy(npu_context_t* context);
/** A new descriptor (the caller closes it) that becomes readable when a job of the context
 * faults or the device resets: an eventfd counting those events (API 1.3). */
npu_status_t npu_context_event_fd(npu_context_t* context, int* fd);

/* Raw command buffers: prebuilt bytes (struct npu_cmdbuf_header + commands, npu_isa.h) plus
 * the buffers they touch. The bytes are copied. */
npu_status_t npu_cmdbuf_create(npu_device_t* device, const void* bytes, size_t size,
                               npu_cmdbuf_t** out);
/** References `buffer` with `access` (DRM_NPU_ACCESS_* bits). */
npu_status_t npu_cmdbuf_use(npu_cmdbuf_t* cmdbuf, npu_buffer_t* buffer, uint32_t access);
void npu_cmdbuf_destroy(npu_cmdbuf_t* cmdbuf);

/* Submit flags. */
#define NPU_SUBMIT_SKIP_VALIDATION 0x1u /* emulator: let the device meet bad commands */
#define NPU_SUBMIT_RACECHECK 0x2u       /* run under the synchronization checker (hazards) */
#define NPU_SUBMIT_FENCE_OUT 0x4u       /* (API 1.3) the job gets an out-fence: npu_job_fence() */

/** Validates (unless NPU_SUBMIT_SKIP_VALIDATION), uploads and queues the command buffer;
 * NPU_SUBMIT_RACECHECK runs it under the synchronization checker (npu_job_hazards()). */
npu_status_t npu_cmdbuf_submit(npu_context_t* context, npu_cmdbuf_t* cmdbuf, uint32_t flags,
                               npu_job_t** out);

/** A buffer a raw submit touches. */
typedef struct npu_buffer_use {
  npu_buffer_t* buffer;
  uint32_t access; /* DRM_NPU_ACCESS_* */
} npu_buffer_use_t;

/** npu_cmdbuf_submit, the job starting once the `num_fences` fence descriptors at `fences`
 * (from npu_job_fence(), of any context or process; the caller keeps them) have signalled
 * (API 1.3). A fence whose job did not end OK aborts this one (status ABORTED, fault kind
 * DRM_NPU_FAULT_DEPENDENCY). */
npu_status_t npu_cmdbuf_submit_after(npu_context_t* context, npu_cmdbuf_t* cmdbuf, uint32_t flags,
                                     const int* fences, size_t num_fences, npu_job_t** out);

/** One-shot: npu_cmdbuf_create + npu_cmdbuf_use for each entry + npu_cmdbuf_submit. */
npu_status_t npu_submit(npu_context_t* context, const void* bytes, size_t size,
                        const npu_buffer_use_t* uses, size_t num_uses, uint32_t flags,
                        npu_job_t** out);

typedef struct npu_fault {
  uint32_t kind; /* DRM_NPU_FAULT_* */
  uint32_t engine;
  uint32_t cmd_index;
  uint32_t reserved;
  uint64_t address;
} npu_fault_t;

typedef struct npu_job_result {
  uint32_t status; /* DRM_NPU_JOB_OK / _ERROR / _ABORTED */
  uint32_t reserved;
  npu_fault_t fault;
  uint64_t submit_ns, start_ns, end_ns; /* CLOCK_MONOTONIC */
  uint64_t cycles;
} npu_job_result_t;

/** Waits up to `timeout_ns` (relative; < 0 waits forever, 0 polls). NPU_ERROR_TIMEOUT when
 * the time passed; NPU_OK with result->status for a retired job. */
npu_status_t npu_job_wait(npu_job_t* job, int64_t timeout_ns, npu_job_result_t* result);
uint64_t npu_job_seqno(const npu_job_t* job);
/** A new descriptor of the job's out-fence (submitted with NPU_SUBMIT_FENCE_OUT): readable once
 * the job retired; the caller closes it. NPU_ERROR_NOT_FOUND without the flag. */
npu_status_t npu_job_fence(const npu_job_t* job, int* fd);

#define NPU_FENCE_WAIT_ALL 0x1u /* wait for every fence (default: any one) */
/** Waits up to `timeout_ns` (relative; < 0 waits forever, 0 polls) for any (or, with
 * NPU_FENCE_WAIT_ALL, all) of `num_fences` fence descriptors; *first (may be NULL) is the
 * lowest index that signalled. NPU_ERROR_TIMEOUT / NPU_ERROR_BUSY when the time passed. */
npu_status_t npu_fence_wait(const int* fences, size_t num_fences, uint32_t flags,
                            int64_t timeout_ns, size_t* first);
/** The DRM_NPU_JOB_* status of a signalled fence's job; NPU_ERROR_BUSY before it signalled. */
npu_status_t npu_fence_status(int fence, uint32_t* status);

/** One hazard of the synchronization checker (docs/racecheck.md): commands `first_cmd` and
 * `second_cmd` (earlier and later in the buffer) of different engines touch bytes
 * [begin, end) of `space` with no semaphore or fence ordering them. */
typedef struct npu_hazard {
  uint32_t kind;  /* DRM_NPU_HAZARD_RAW / _WAR / _WAW */
  uint32_t space; /* DRM_NPU_HAZARD_SPACE_SRAM / _DRAM */
  uint64_t begin, end;
  uint32_t first_cmd, second_cmd;
  uint16_t first_engine, first_opcode; /* NPU_ENGINE_*, NPU_OP_* */
  uint16_t second_engine, second_opcode;
} npu_hazard_t;

/** The hazards of a retired job submitted with NPU_SUBMIT_RACECHECK: copies up to `capacity`
 * into `out` (may be NULL when `capacity` is 0) and sets *count to the number found (which
 * may exceed `capacity`, and the kernel's list). NPU_ERROR_INVALID_ARGUMENT when the job was
 * not checked; NPU_ERROR_UNSUPPORTED when the device has no checker. */
npu_status_t npu_job_hazards(npu_job_t* job, npu_hazard_t* out, size_t capacity, size_t* count);
void npu_job_release(npu_job_t* job);

#if defined(__cplusplus)
}
#endif

#endif /* NPU_NPU_H */
