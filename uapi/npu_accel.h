/* SPDX-License-Identifier: MIT */
/*
 * npu_accel.h - the ioctl ABI between user mode (libnpu) and the NPU kernel driver.
 *
 * DRM-accel conventions: every ioctl is DRM_IOWR(DRM_COMMAND_BASE + n, struct) with n
 * append-only; fields are fixed width, explicitly padded and naturally aligned; every struct
 * is a multiple of 8 bytes; user pointers travel as __u64; flags and padding that are not
 * defined must be zero or the call fails with EINVAL; handle 0 and context id 0 are never
 * valid; timeouts are absolute CLOCK_MONOTONIC nanoseconds (0 = poll).
 *
 * The errno contract of every ioctl is listed beside it and in docs/uapi.md.
 * This header compiles alone as C11 and as C++.
 */
#ifndef NPU_ACCEL_H
#define NPU_ACCEL_H

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/** DRM_NPU_API_VERSION_MAJOR/MINOR - bumped on incompatible / compatible ABI changes. */
#define DRM_NPU_API_VERSION_MAJOR 1
#define DRM_NPU_API_VERSION_MINOR 4

/* The driver's name, as DRM_IOCTL_VERSION (drmGetVersion) reports it. */
#define DRM_NPU_DRIVER_NAME "npu"
/* The device node's character-device major (DRM accel nodes: /dev/accel/accelN, 261:N). */
#define DRM_NPU_ACCEL_MAJOR 261

/* ioctl numbers: append only, never reuse. */
#define DRM_NPU_GET_PARAM 0x00
#define DRM_NPU_QUERY 0x01
#define DRM_NPU_BO_CREATE 0x02
#define DRM_NPU_BO_INFO 0x03
#define DRM_NPU_BO_CLOSE 0x04
#define DRM_NPU_CTX_CREATE 0x05
#define DRM_NPU_CTX_DESTROY 0x06
#define DRM_NPU_SUBMIT 0x07
#define DRM_NPU_WAIT 0x08
#define DRM_NPU_BO_WAIT 0x09       /* API 1.3 */
#define DRM_NPU_BO_EXPORT 0x0a     /* API 1.3 */
#define DRM_NPU_BO_IMPORT 0x0b     /* API 1.3 */
#define DRM_NPU_CTX_EVENTS 0x0c    /* API 1.3 */
#define DRM_NPU_FENCE_WAIT 0x0d    /* API 1.3 */
#define DRM_NPU_NUM_IOCTLS 0x0e

#define DRM_IOCTL_NPU_GET_PARAM \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_GET_PARAM, struct drm_npu_get_param)
#define DRM_IOCTL_NPU_QUERY DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_QUERY, struct drm_npu_query)
#define DRM_IOCTL_NPU_BO_CREATE \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_CREATE, struct drm_npu_bo_create)
#define DRM_IOCTL_NPU_BO_INFO DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_INFO, struct drm_npu_bo_info)
#define DRM_IOCTL_NPU_BO_CLOSE \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_CLOSE, struct drm_npu_bo_close)
#define DRM_IOCTL_NPU_CTX_CREATE \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_CTX_CREATE, struct drm_npu_ctx_create)
#define DRM_IOCTL_NPU_CTX_DESTROY \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_CTX_DESTROY, struct drm_npu_ctx_destroy)
#define DRM_IOCTL_NPU_SUBMIT DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_SUBMIT, struct drm_npu_submit)
#define DRM_IOCTL_NPU_WAIT DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_WAIT, struct drm_npu_wait)
#define DRM_IOCTL_NPU_BO_WAIT \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_WAIT, struct drm_npu_bo_wait)
#define DRM_IOCTL_NPU_BO_EXPORT \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_EXPORT, struct drm_npu_bo_export)
#define DRM_IOCTL_NPU_BO_IMPORT \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_BO_IMPORT, struct drm_npu_bo_import)
#define DRM_IOCTL_NPU_CTX_EVENTS \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_CTX_EVENTS, struct drm_npu_ctx_events)
#define DRM_IOCTL_NPU_FENCE_WAIT \
  DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_FENCE_WAIT, struct drm_npu_fence_wait)

/* ---------------------------------------------------------------------------------------- */
/* GET_PARAM                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Parameters for GET_PARAM. */
#define DRM_NPU_PARAM_DEVICE_ID 0       /* PCI-style device id */
#define DRM_NPU_PARAM_REVISION 1        /* silicon / model revision */
#define DRM_NPU_PARAM_PLATFORM 2        /* DRM_NPU_PLATFORM_* */
#define DRM_NPU_PARAM_API_VERSION 3     /* (major << 16) | minor */
#define DRM_NPU_PARAM_ISA_VERSION 4     /* (major << 16) | minor of the command-buffer ISA */
#define DRM_NPU_PARAM_SRAM_SIZE 5       /* bytes of on-chip SRAM */
#define DRM_NPU_PARAM_SRAM_BANKS 6      /* number of SRAM banks */
#define DRM_NPU_PARAM_NUM_ENGINES 7     /* engines, including the command processor */
#define DRM_NPU_PARAM_ENGINE_MASK 8     /* bit n set: engine n (NPU_ENGINE_*) present */
#define DRM_NPU_PARAM_CLOCK_HZ 9        /* modeled core clock */
#define DRM_NPU_PARAM_CAPABILITIES 10   /* DRM_NPU_CAP_* bit mask */
#define DRM_NPU_PARAM_NUM_SEMAPHORES 11 /* hardware semaphores per job */
#define DRM_NPU_PARAM_WATCHDOG_MS 12    /* job watchdog timeout */
#define DRM_NPU_PARAM_MAX_BO_SIZE 13    /* largest BO that BO_CREATE accepts */
#define DRM_NPU_PARAM_FEATURES 14       /* NPU_FEATURE_* bits the device implements */
#define DRM_NPU_PARAM_VA_START 15       /* first device VA a BO may occupy */
#define DRM_NPU_PARAM_VA_END 16         /* end (exclusive) of the BO VA range */
#define DRM_NPU_PARAM_VA_ALIGN 17       /* alignment of BO device VAs (and FIXED_VA) */
/* (API 1.4) Preemption at safe points (DRM_NPU_CAP_PREEMPTION): the cycles one switch costs
 * the preempted job, and the time slice after which a job yields at a safe point to a ready
 * job of its own priority (0: never). */
#define DRM_NPU_PARAM_PREEMPT_CYCLES 18
#define DRM_NPU_PARAM_TIME_SLICE_CYCLES 19
#define DRM_NPU_PARAM_COUNT 20

#define DRM_NPU_PLATFORM_SILICON 0
#define DRM_NPU_PLATFORM_EMULATOR 1

/* Capability bits (DRM_NPU_PARAM_CAPABILITIES). */
#define DRM_NPU_CAP_INT8 (1ull << 0)            /* int8 matrix datapath */
#define DRM_NPU_CAP_FP32 (1ull << 1)            /* fp32 matrix and vector datapath */
#define DRM_NPU_CAP_PRIORITY (1ull << 2)        /* context priorities are honoured */
#define DRM_NPU_CAP_JOB_PROFILE (1ull << 3)     /* QUERY JOB_PROFILE is available */
#define DRM_NPU_CAP_SKIP_VALIDATION (1ull << 4) /* SUBMIT flag SKIP_VALIDATION (emulator) */
#define DRM_NPU_CAP_RACECHECK (1ull << 5)       /* SUBMIT flag RACECHECK, QUERY JOB_HAZARDS */
#define DRM_NPU_CAP_BO_WAIT (1ull << 6)         /* (API 1.3) DRM_IOCTL_NPU_BO_WAIT */
#define DRM_NPU_CAP_FENCES (1ull << 7)          /* (API 1.3) SUBMIT fences, FENCE_WAIT */
#define DRM_NPU_CAP_BO_SHARING (1ull << 8)      /* (API 1.3) BO_EXPORT, BO_IMPORT */
#define DRM_NPU_CAP_CTX_EVENTS (1ull << 9)      /* (API 1.3) CTX_EVENTS */
/* (API 1.4) the device stops a running job at a safe point (ISA 1.2 FENCE flag PREEMPT) for a
 * ready job of higher priority, or of its own after a time slice, and resumes it later. */
#define DRM_NPU_CAP_PREEMPTION (1ull << 10)
/* (API 1.4) per-file limits (BO memory, contexts, jobs in flight; EDQUOT), QUERY QUOTA, and
 * REALTIME contexts only for privileged callers (EPERM). */
#define DRM_NPU_CAP_QUOTAS (1ull << 11)

/**
 * struct drm_npu_get_param - read one device parameter.
 * @param: in, DRM_NPU_PARAM_*.
 * @index: in, must be 0 (reserved for per-engine parameters).
 * @value: out, the parameter's value.
 *
 * Errors: EINVAL unknown @param or non-zero @index.
 */
struct drm_npu_get_param {
  __u32 param;
  __u32 index;
  __u64 value;
};

/* ---------------------------------------------------------------------------------------- */
/* QUERY                                                                                      */
/* ---------------------------------------------------------------------------------------- */

#define DRM_NPU_QUERY_DEVICE_INFO 0   /* struct drm_npu_device_info */
#define DRM_NPU_QUERY_ENGINE_INFO 1   /* struct drm_npu_engine_info[num_engines] */
#define DRM_NPU_QUERY_CONTEXT_STATE 2 /* struct drm_npu_context_state, @arg0 = ctx id */
#define DRM_NPU_QUERY_COUNTERS 3      /* struct drm_npu_counters (device lifetime) */
#define DRM_NPU_QUERY_JOB_PROFILE 4   /* struct drm_npu_job_profile, @arg0 = ctx, @arg1 = seqno */
#define DRM_NPU_QUERY_JOB_HAZARDS 5   /* struct drm_npu_job_hazards, @arg0 = ctx, @arg1 = seqno */
/* (API 1.2) char[]: why this file's last SUBMIT or BO_CREATE was rejected, in the
 * validator's words (command index and field), NUL-terminated; "" when it succeeded or gave
 * no reason. What a real driver would put in dmesg, returned to the process that caused it. */
#define DRM_NPU_QUERY_LAST_ERROR 6
/* (API 1.3) struct drm_npu_job_races, @arg0 = ctx, @arg1 = seqno: what the synchronization
 * checker found between this job and jobs of other contexts that touch the same memory with
 * nothing ordering them (no fence chain, the other job still pending at SUBMIT). */
#define DRM_NPU_QUERY_JOB_RACES 7
/* (API 1.4) struct drm_npu_quota: this file's use of its limits, and the device's BO memory. */
#define DRM_NPU_QUERY_QUOTA 8

/**
 * struct drm_npu_query - size-negotiated query.
 * @type: in, DRM_NPU_QUERY_*.
 * @flags: in, must be 0.
 * @size: in/out. In: bytes available at @data. 0 asks for the size only. Out: bytes the
 *        kernel has for this query. When @size is smaller than that the first @size bytes
 *        are copied (structs only grow at their end, so older user space keeps working).
 * @pad: must be 0.
 * @arg0: in, query argument (context id for CONTEXT_STATE, JOB_PROFILE and JOB_HAZARDS).
 * @arg1: in, second query argument (sequence number for JOB_PROFILE and JOB_HAZARDS).
 * @data: in, user pointer to the output buffer (may be 0 when @size is 0).
 *
 * Errors: EINVAL unknown @type, non-zero @flags/@pad or unused @arg0/@arg1; ENOENT unknown
 * context or job; EBUSY JOB_PROFILE/JOB_HAZARDS of a job not retired yet; EFAULT @data not
 * writable.
 */
struct drm_npu_query {
  __u32 type;
  __u32 flags;
  __u32 size;
  __u32 pad;
  __u64 arg0;
  __u64 arg1;
  __u64 data;
};

/** struct drm_npu_device_info - identity and shape of the device (QUERY DEVICE_INFO). */
struct drm_npu_device_info {
  __u32 device_id;
  __u32 revision;
  __u32 platform;    /* DRM_NPU_PLATFORM_* */
  __u32 api_version; /* (major << 16) | minor */
  __u32 isa_version; /* (major << 16) | minor */
  __u32 num_engines; /* entries QUERY ENGINE_INFO returns */
  __u64 sram_size;   /* bytes */
  __u32 sram_banks;  /* banks the SRAM is split into */
  __u32 num_semaphores;
  __u64 clock_hz;
  __u64 capabilities; /* DRM_NPU_CAP_* */
  __u64 features;     /* NPU_FEATURE_* (ISA features the device implements) */
  __u32 watchdog_ms;
  __u32 pad;
  char name[32]; /* NUL-terminated model name */
};

/** struct drm_npu_engine_info - one engine (QUERY ENGINE_INFO returns an array). */
struct drm_npu_engine_info {
  __u32 id;          /* NPU_ENGINE_* */
  __u32 queue_depth; /* commands the engine queue holds */
  __u64 throughput;  /* engine-specific peak: MACs/cycle (matrix), bytes/cycle (DMA),
                        elements/cycle (vector), commands/cycle (CP) */
  __u64 latency;     /* fixed cycles added to each command */
  char name[16];     /* NUL-terminated */
};

/* Context states. */
#define DRM_NPU_CTX_STATE_ACTIVE 0
#define DRM_NPU_CTX_STATE_BANNED 1 /* after a fault or hang: SUBMIT fails with ECANCELED */

/* Fault kinds (struct drm_npu_fault.kind). */
#define DRM_NPU_FAULT_NONE 0
#define DRM_NPU_FAULT_PARSE 1      /* malformed command met by the device */
#define DRM_NPU_FAULT_MMU 2        /* unmapped device address or wrong access */
#define DRM_NPU_FAULT_SRAM_RANGE 3 /* SRAM access outside the SRAM */
#define DRM_NPU_FAULT_SEMAPHORE 4  /* semaphore overflow or bad semaphore id */
#define DRM_NPU_FAULT_WATCHDOG 5   /* job exceeded the watchdog; device was reset */
/* (API 1.3) the job never ran: one of its in-fences signalled a job that did not end OK;
 * @address is the index of that fence in SUBMIT's in_fences. Status ABORTED, no ban. */
#define DRM_NPU_FAULT_DEPENDENCY 6

/**
 * struct drm_npu_fault - the first fault a job met (in virtual time).
 * @kind: DRM_NPU_FAULT_*.
 * @engine: NPU_ENGINE_* that faulted.
 * @cmd_index: index of the faulting command in the command buffer.
 * @pad: 0.
 * @address: faulting device VA (MMU), SRAM offset (SRAM_RANGE), semaphore id (SEMAPHORE).
 */
struct drm_npu_fault {
  __u32 kind;
  __u32 engine;
  __u32 cmd_index;
  __u32 pad;
  __u64 address;
};

/** struct drm_npu_context_state - state of one context (QUERY CONTEXT_STATE). */
struct drm_npu_context_state {
  __u32 ctx_id;
  __u32 state;          /* DRM_NPU_CTX_STATE_* */
  __u32 priority;       /* DRM_NPU_PRIORITY_* */
  __u32 reset_count;    /* device resets this context caused (watchdog) */
  __u64 last_submitted; /* last sequence number handed out */
  __u64 last_completed; /* last sequence number retired */
  __u64 fault_seqno;    /* job that latched @last_fault, 0 when none */
  struct drm_npu_fault last_fault;
};

/* Engines as counted in struct drm_npu_counters (same numbering as NPU_ENGINE_*). */
#define DRM_NPU_MAX_ENGINES 8

/** struct drm_npu_counters - device-lifetime performance counters (QUERY COUNTERS). */
struct drm_npu_counters {
  __u64 jobs_completed;
  __u64 jobs_faulted;
  __u64 device_resets;
  __u64 total_cycles;                     /* sum of job cycles */
  __u64 busy_cycles[DRM_NPU_MAX_ENGINES]; /* per NPU_ENGINE_* */
  __u64 commands[DRM_NPU_MAX_ENGINES];    /* commands executed per engine */
  __u64 dma_bytes_in;                     /* DRAM -> SRAM */
  __u64 dma_bytes_out;                    /* SRAM -> DRAM */
  __u64 macs;                             /* multiply-accumulates on the matrix engine */
  __u64 vector_elements;                  /* elements produced by the vector engine */
  __u64 semaphore_stall_cycles;           /* cycles engines spent in SEM_WAIT */
  /* (API 1.4; a 1.3 caller's 200-byte query gets the fields above) */
  __u64 jobs_submitted; /* jobs SUBMIT accepted */
  __u64 jobs_aborted;   /* jobs retired ABORTED (never ran, or stopped) */
  __u64 preemptions;    /* times a job was stopped at a safe point */
  __u64 preempt_cycles; /* cycles those switches cost (in total_cycles) */
};

/* (API 1.4) @opcode of a timeline entry that is no command but a preemption: the job was
 * stopped at the safe point @cmd_index (a FENCE, whose own entry precedes it) and resumed
 * later; @start_cycle..@end_cycle is the switch's cost (DRM_NPU_PARAM_PREEMPT_CYCLES), after
 * which the job's next command starts. */
#define DRM_NPU_PROFILE_PREEMPT 0x100

/**
 * struct drm_npu_cmd_profile - one executed command in a job's timeline.
 * Times are virtual cycles from the start of the job (a preempted job's own cycles: the time
 * other jobs ran in between is not counted, the switches are).
 */
struct drm_npu_cmd_profile {
  __u32 cmd_index;
  __u16 engine; /* NPU_ENGINE_* */
  __u16 opcode; /* NPU_OP_* */
  __u64 start_cycle;
  __u64 end_cycle;
};

/**
 * struct drm_npu_job_profile - per-job statistics and timeline (QUERY JOB_PROFILE).
 * Followed in memory by @num_cmds struct drm_npu_cmd_profile entries; the query's size
 * covers header plus entries. Kept for the last jobs of each context (see docs/uapi.md).
 */
struct drm_npu_job_profile {
  __u64 seqno;
  __u64 cycles;
  __u64 busy_cycles[DRM_NPU_MAX_ENGINES];
  __u64 dma_bytes_in;
  __u64 dma_bytes_out;
  __u64 macs;
  __u64 vector_elements;
  __u64 semaphore_stall_cycles;
  __u32 num_cmds;
  __u32 preemptions; /* (API 1.4; 0 before) times the job was stopped at a safe point */
};

/* Hazard kinds (struct drm_npu_hazard.kind), named from the command earlier in the buffer. */
#define DRM_NPU_HAZARD_RAW 1 /* the earlier command writes bytes the later one reads */
#define DRM_NPU_HAZARD_WAR 2 /* the earlier command reads bytes the later one writes */
#define DRM_NPU_HAZARD_WAW 3 /* both write the same bytes */

/* Memory spaces of a hazard (struct drm_npu_hazard.space). */
#define DRM_NPU_HAZARD_SPACE_SRAM 1 /* @begin/@end are SRAM offsets */
#define DRM_NPU_HAZARD_SPACE_DRAM 2 /* @begin/@end are device virtual addresses */

/* Most hazards one job reports; drm_npu_job_hazards.total counts them all. */
#define DRM_NPU_MAX_HAZARDS 1024

/**
 * struct drm_npu_hazard_cmd - one command of a hazard.
 * @cmd_index: index of the command in the command buffer.
 * @engine: NPU_ENGINE_* that ran it.
 * @opcode: NPU_OP_*.
 */
struct drm_npu_hazard_cmd {
  __u32 cmd_index;
  __u16 engine;
  __u16 opcode;
};

/**
 * struct drm_npu_hazard - two commands of different engines that touch the same bytes, at
 * least one of them writing, with no happens-before order between them (no chain of
 * semaphore signal -> wait edges, FENCEs and in-order execution on one engine leads from one
 * to the other). Reported once per pair of commands, kind and memory space.
 * @kind: DRM_NPU_HAZARD_RAW, _WAR or _WAW.
 * @space: DRM_NPU_HAZARD_SPACE_SRAM or _DRAM.
 * @begin: first byte both commands touch (the smallest such byte when their operands overlap
 *         in several places).
 * @end: end (exclusive) of the overlapping bytes (the largest such end).
 * @first: the command earlier in the buffer.
 * @second: the command later in the buffer.
 */
struct drm_npu_hazard {
  __u32 kind;
  __u32 space;
  __u64 begin;
  __u64 end;
  struct drm_npu_hazard_cmd first;
  struct drm_npu_hazard_cmd second;
};

/* drm_npu_job_hazards.flags */
#define DRM_NPU_HAZARDS_CHECKED (1u << 0) /* the job ran under the synchronization checker */
#define DRM_NPU_HAZARDS_PARTIAL                                 \
  (1u << 1) /* the job did not complete: only the commands that \
               ran were checked */

/**
 * struct drm_npu_job_hazards - the synchronization checker's result for one job (QUERY
 * JOB_HAZARDS). Followed in memory by @num_hazards struct drm_npu_hazard entries, sorted by
 * (first.cmd_index, second.cmd_index, kind, space); the query's size covers header plus
 * entries. A job submitted without DRM_NPU_SUBMIT_RACECHECK (on a device not configured to
 * check every job) reports flags 0 and no entries.
 * @seqno: the job.
 * @flags: DRM_NPU_HAZARDS_* bits.
 * @num_hazards: entries that follow (at most DRM_NPU_MAX_HAZARDS).
 * @total: hazards found; above @num_hazards when the list was cut.
 */
struct drm_npu_job_hazards {
  __u64 seqno;
  __u32 flags;
  __u32 num_hazards;
  __u64 total;
};

/* Bits of drm_npu_quota.flags. */
#define DRM_NPU_QUOTA_REALTIME (1u << 0) /* this file may create REALTIME contexts */

/**
 * struct drm_npu_quota - this file's use of its limits (QUERY QUOTA, API 1.4). A call that
 * would take a value past its limit fails with EDQUOT.
 * @bo_memory: bytes of the BOs this file holds (created or imported handles).
 * @bo_memory_limit: the most it may hold.
 * @device_bo_memory: bytes of BO memory alive on the device, all files (and jobs) together.
 * @device_bo_memory_limit: the most the device holds (at most the host's memory).
 * @contexts, @contexts_limit: contexts this file holds, and the most it may.
 * @jobs_in_flight, @jobs_in_flight_limit: jobs of this file queued or running, and the most.
 * @flags: DRM_NPU_QUOTA_* bits.
 * @pad: 0.
 */
struct drm_npu_quota {
  __u64 bo_memory;
  __u64 bo_memory_limit;
  __u64 device_bo_memory;
  __u64 device_bo_memory_limit;
  __u32 contexts;
  __u32 contexts_limit;
  __u32 jobs_in_flight;
  __u32 jobs_in_flight_limit;
  __u32 flags;
  __u32 pad;
};

/* ---------------------------------------------------------------------------------------- */
/* Buffer objects                                                                             */
/* ---------------------------------------------------------------------------------------- */

/* BO_CREATE flags. */
#define DRM_NPU_BO_DEVICE_READ_ONLY (1u << 0) /* the device may only read this BO */
/* Place the BO at the device VA given in @device_addr (user-managed address space, as with
 * VM_BIND in other drivers): aligned to DRM_NPU_PARAM_VA_ALIGN, inside [VA_START, VA_END). */
#define DRM_NPU_BO_FIXED_VA (1u << 1)
#define DRM_NPU_BO_FLAGS_VALID (DRM_NPU_BO_DEVICE_READ_ONLY | DRM_NPU_BO_FIXED_VA)

/**
 * struct drm_npu_bo_create - allocate a zero-filled buffer object.
 * @size: in, bytes (rounded up to 4 KiB pages), 1 .. DRM_NPU_PARAM_MAX_BO_SIZE.
 * @flags: in, DRM_NPU_BO_* bits.
 * @handle: out, non-zero handle, valid in this file only.
 * @device_addr: out, device virtual address in this file's address space; in with
 *               DRM_NPU_BO_FIXED_VA (and must be 0 without it).
 *
 * Errors: EINVAL size 0, unknown flags, FIXED_VA address misaligned or outside the VA range,
 * non-zero @device_addr without FIXED_VA; EEXIST FIXED_VA range overlaps a BO; ENOMEM size
 * above the maximum or address space full; EDQUOT (API 1.4) the file's BO memory limit or
 * the device's would be exceeded (QUERY QUOTA, QUERY LAST_ERROR names the limit).
 */
struct drm_npu_bo_create {
  __u64 size;
  __u32 flags;
  __u32 handle;
  __u64 device_addr;
};

/**
 * struct drm_npu_bo_info - describe a buffer object.
 * @handle: in.
 * @flags: out, the BO_CREATE flags.
 * @size: out, bytes (page rounded).
 * @device_addr: out, device VA.
 * @mmap_offset: out, offset to pass to mmap() on this file to map the BO.
 *
 * Errors: ENOENT unknown handle.
 */
struct drm_npu_bo_info {
  __u32 handle;
  __u32 flags;
  __u64 size;
  __u64 device_addr;
  __u64 mmap_offset;
};

/**
 * struct drm_npu_bo_close - release a handle. The memory lives on while a job or a mapping
 * still uses it.
 * Errors: ENOENT unknown handle; EINVAL non-zero @pad.
 */
struct drm_npu_bo_close {
  __u32 handle;
  __u32 pad;
};

/* ---------------------------------------------------------------------------------------- */
/* Contexts                                                                                   */
/* ---------------------------------------------------------------------------------------- */

#define DRM_NPU_PRIORITY_LOW 0
#define DRM_NPU_PRIORITY_NORMAL 1
#define DRM_NPU_PRIORITY_HIGH 2
#define DRM_NPU_PRIORITY_REALTIME 3

/**
 * struct drm_npu_ctx_create - create an execution context (a job queue) in this file.
 * Contexts of one file share the file's address space; a job may touch only the BOs its
 * SUBMIT lists.
 * @priority: in, DRM_NPU_PRIORITY_*.
 * @flags: in, must be 0.
 * @ctx_id: out, non-zero id, valid in this file only.
 * @pad: must be 0.
 *
 * Errors: EINVAL bad priority or flags; EPERM (API 1.4) REALTIME without the privilege
 * (CAP_SYS_NICE of the process that opened the file, or the driver's allow-list); EDQUOT
 * (API 1.4) the file's context limit (QUERY QUOTA); ENOMEM too many contexts.
 */
struct drm_npu_ctx_create {
  __u32 priority;
  __u32 flags;
  __u32 ctx_id;
  __u32 pad;
};

/**
 * struct drm_npu_ctx_destroy - destroy a context; its queued jobs are aborted, a running
 * job is waited for. Errors: ENOENT unknown id; EINVAL non-zero @pad.
 */
struct drm_npu_ctx_destroy {
  __u32 ctx_id;
  __u32 pad;
};

/* ---------------------------------------------------------------------------------------- */
/* SUBMIT and WAIT                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Access bits of a referenced BO. */
#define DRM_NPU_ACCESS_READ (1u << 0)
#define DRM_NPU_ACCESS_WRITE (1u << 1)

/** struct drm_npu_bo_ref - a BO a job may touch, and how. */
struct drm_npu_bo_ref {
  __u32 handle;
  __u32 access; /* DRM_NPU_ACCESS_* (at least one bit) */
};

/* SUBMIT flags. */
/* Emulator only (DRM_NPU_CAP_SKIP_VALIDATION): send the command buffer to the device without
 * validating it, to exercise the device's own fault reporting. */
#define DRM_NPU_SUBMIT_SKIP_VALIDATION (1u << 0)
/* DRM_NPU_CAP_RACECHECK: run the job under the synchronization checker (docs/racecheck.md);
 * QUERY JOB_HAZARDS reports what it found. Results and cycle counts do not change. */
#define DRM_NPU_SUBMIT_RACECHECK (1u << 1)
/* (API 1.3, DRM_NPU_CAP_FENCES) return the job's out-fence in @fence_fd. */
#define DRM_NPU_SUBMIT_FENCE_OUT (1u << 2)
#define DRM_NPU_SUBMIT_FLAGS_VALID \
  (DRM_NPU_SUBMIT_SKIP_VALIDATION | DRM_NPU_SUBMIT_RACECHECK | DRM_NPU_SUBMIT_FENCE_OUT)

/* Most in-fences one SUBMIT may name. */
#define DRM_NPU_MAX_IN_FENCES 32

/* Most BOs one SUBMIT may reference. */
#define DRM_NPU_MAX_BO_REFS 4096

/**
 * struct drm_npu_submit - queue a command buffer on a context.
 * @ctx_id: in, the context.
 * @flags: in, DRM_NPU_SUBMIT_*.
 * @cmd_handle: in, BO holding the command buffer (must also be in @bos with READ access).
 * @bo_count: in, entries at @bos (1 .. DRM_NPU_MAX_BO_REFS).
 * @cmd_offset: in, byte offset of the command buffer in its BO (multiple of 8).
 * @cmd_size: in, bytes of the command buffer.
 * @bos: in, user pointer to @bo_count struct drm_npu_bo_ref.
 * @seqno: out, the job's sequence number in its context (starts at 1, increases by 1).
 * @in_fences: in (API 1.3), user pointer to @in_fence_count __s32 fence descriptors (from
 *             SUBMIT's FENCE_OUT, in this process): the job starts only after every one has
 *             signalled. If a fence's job did not end OK, this job never runs: it retires
 *             ABORTED with fault DRM_NPU_FAULT_DEPENDENCY (its context is not banned).
 * @in_fence_count: in (API 1.3), 0 .. DRM_NPU_MAX_IN_FENCES.
 * @fence_fd: out (API 1.3), with DRM_NPU_SUBMIT_FENCE_OUT: a new close-on-exec descriptor, the
 *            job's fence: readable (poll POLLIN) once the job retired, whatever its status;
 *            from then on it holds one byte, the job's DRM_NPU_JOB_* status (read it with
 *            recv(MSG_PEEK), or FENCE_WAIT). It may be dup()ed, passed over a UNIX socket and
 *            outlive this file. -1 without the flag.
 *
 * The command buffer is copied and validated before this returns (see docs/isa.md); later
 * writes to its BO do not affect the job.
 *
 * Errors: EINVAL bad flags/pad, empty or malformed command buffer, or one whose semaphores
 * deadlock or overflow whatever the timing (the log names the command index and field),
 * duplicate or invalid access bits; ENOENT unknown context or handle;
 * EFAULT @bos unreadable, or a command addresses device memory outside the referenced BOs
 * or with an access the BO was not referenced for; EOVERFLOW the command stream reaches
 * outside its BO; ECANCELED the context is banned; ENOMEM queue full; (1.3) EINVAL
 * @in_fence_count above the maximum or a descriptor that is no fence of this device, EBADF a
 * descriptor that is not open, EFAULT @in_fences unreadable, EMFILE no descriptor left for
 * @fence_fd; (1.4) EDQUOT the file's limit of jobs in flight (checked after the queue-full
 * ENOMEM of the context).
 *
 * Grown in API 1.3 (from 48 bytes): a 1.2 caller's smaller SUBMIT is zero-extended (no
 * fences), as the kernel's drm_ioctl() does, and gets its 48 bytes back.
 */
struct drm_npu_submit {
  __u32 ctx_id;
  __u32 flags;
  __u32 cmd_handle;
  __u32 bo_count;
  __u64 cmd_offset;
  __u64 cmd_size;
  __u64 bos;
  __u64 seqno;
  __u64 in_fences;      /* API 1.3 */
  __u32 in_fence_count; /* API 1.3 */
  __s32 fence_fd;       /* API 1.3 */
};
/* The size of struct drm_npu_submit before API 1.3. */
#define DRM_NPU_SUBMIT_SIZE_V1 48

/* Job status (struct drm_npu_wait.status). */
#define DRM_NPU_JOB_OK 0
#define DRM_NPU_JOB_ERROR 1   /* the job faulted: see @fault */
#define DRM_NPU_JOB_ABORTED 2 /* never ran or stopped: context banned or destroyed, reset */
#define DRM_NPU_JOB_TIMEOUT 3 /* WAIT's timeout passed first (job still pending) */

/**
 * struct drm_npu_wait - wait for a job.
 * @ctx_id: in.
 * @flags: in, must be 0.
 * @seqno: in, sequence number from SUBMIT.
 * @timeout_ns: in, absolute CLOCK_MONOTONIC deadline in ns; 0 polls.
 * @status: out, DRM_NPU_JOB_*.
 * @pad: must be 0.
 * @fault: out, the job's fault when @status is ERROR.
 * @submit_ns, @start_ns, @end_ns: out, CLOCK_MONOTONIC host times of the job.
 * @cycles: out, modeled device cycles of the job (deterministic).
 *
 * Returns 0 once the job retired (whatever @status). Errors: EBUSY poll and not done;
 * ETIMEDOUT deadline passed (@status TIMEOUT); ENOENT unknown context, seqno never handed
 * out or no longer retained; EINVAL flags/pad; ENODEV the device is gone.
 */
struct drm_npu_wait {
  __u32 ctx_id;
  __u32 flags;
  __u64 seqno;
  __s64 timeout_ns;
  __u32 status;
  __u32 pad;
  struct drm_npu_fault fault;
  __u64 submit_ns;
  __u64 start_ns;
  __u64 end_ns;
  __u64 cycles;
};

/**
 * struct drm_npu_bo_wait - wait until no queued or running job uses a BO (API 1.3,
 * DRM_NPU_CAP_BO_WAIT), e.g. before the CPU reads a BO that jobs write, without knowing which
 * jobs (or which contexts) those are.
 * @handle: in, a BO of this file.
 * @flags: in, must be 0.
 * @timeout_ns: in, absolute CLOCK_MONOTONIC deadline in ns; 0 polls; INT64_MAX waits for ever.
 *
 * Counts every job that lists the BO's memory, of any context, queued or running when the
 * call is made or submitted while it waits. Returns 0 once none is left (whatever the jobs'
 * status). Errors: EINVAL non-zero @flags or negative @timeout_ns; ENOENT unknown handle;
 * EBUSY poll and a job still uses it; ETIMEDOUT deadline passed.
 */
struct drm_npu_bo_wait {
  __u32 handle;
  __u32 flags;
  __s64 timeout_ns;
};

/* ---------------------------------------------------------------------------------------- */
/* API 1.3: fences, buffer sharing, context events                                            */
/* ---------------------------------------------------------------------------------------- */

/* FENCE_WAIT flags. */
#define DRM_NPU_FENCE_WAIT_ALL (1u << 0) /* wait for every fence (default: any one) */

/**
 * struct drm_npu_fence_wait - wait for any or all of a set of fences (API 1.3,
 * DRM_NPU_CAP_FENCES), with one absolute deadline. Plain poll() on the fence descriptors
 * works too (they are readable once signalled); this call also reports which signalled and
 * how their jobs ended.
 * @fences: in, user pointer to @count __s32 fence descriptors.
 * @count: in, 1 .. DRM_NPU_MAX_IN_FENCES.
 * @flags: in, DRM_NPU_FENCE_WAIT_*.
 * @timeout_ns: in, absolute CLOCK_MONOTONIC deadline; 0 polls; INT64_MAX waits for ever.
 * @first: out, the lowest index in @fences of a signalled fence.
 * @status: out, the DRM_NPU_JOB_* status of @first's job (each fence's own status byte
 *          tells the others').
 * @signalled: out, how many of the fences have signalled.
 * @pad: must be 0.
 *
 * Errors: EINVAL bad @count, @flags or @pad, negative @timeout_ns, a descriptor that is no
 * fence of this device; EBADF a descriptor that is not open; EFAULT @fences unreadable; EBUSY
 * poll and not done; ETIMEDOUT deadline passed.
 */
struct drm_npu_fence_wait {
  __u64 fences;
  __u32 count;
  __u32 flags;
  __s64 timeout_ns;
  __u32 first;
  __u32 status;
  __u32 signalled;
  __u32 pad;
};

/* BO_EXPORT flags. */
#define DRM_NPU_EXPORT_CLOEXEC (1u << 0) /* the new descriptor is close-on-exec */

/**
 * struct drm_npu_bo_export - a descriptor for a BO's pages (API 1.3, DRM_NPU_CAP_BO_SHARING),
 * to import into another file, in this process or another (pass it over a UNIX socket), as
 * DRM PRIME does. The descriptor can also be mmap()ed (MAP_SHARED) directly. The pages live
 * while any handle, mapping, queued job or exported descriptor holds them.
 * @handle: in, a BO of this file.
 * @flags: in, DRM_NPU_EXPORT_CLOEXEC.
 * @fd: out, the new descriptor.
 * @pad: must be 0.
 *
 * Errors: EINVAL unknown @flags or non-zero @pad; ENOENT unknown handle; EMFILE no descriptor.
 */
struct drm_npu_bo_export {
  __u32 handle;
  __u32 flags;
  __s32 fd;
  __u32 pad;
};

/**
 * struct drm_npu_bo_import - make an exported BO a BO of this file (API 1.3,
 * DRM_NPU_CAP_BO_SHARING). Importing a BO this file already has (its own export, or a second
 * import) gives the existing handle, as PRIME does.
 * @fd: in, a descriptor from BO_EXPORT of this device (any file, any process).
 * @flags: in, DRM_NPU_BO_DEVICE_READ_ONLY and/or DRM_NPU_BO_FIXED_VA, as BO_CREATE; out,
 *         DRM_NPU_BO_IMPORT_EXISTED added when the file had the BO already (the handle is its
 *         existing one, the in-flags were not applied).
 * @handle: out, the BO's handle in this file.
 * @pad: must be 0.
 * @size: out, bytes of the BO.
 * @device_addr: out, its device VA in this file's address space; in with FIXED_VA (and must
 *               be 0 without it).
 *
 * Errors: EBADF @fd is not open; EINVAL @fd is no BO of this device, unknown flags, non-zero
 * @pad, the FIXED_VA rules of BO_CREATE; EEXIST FIXED_VA range taken; ENOMEM address space
 * full; EDQUOT (1.4) the file's BO memory limit (an imported BO counts for every file holding
 * it).
 */
#define DRM_NPU_BO_IMPORT_EXISTED (1u << 31) /* out: the file's existing handle */

struct drm_npu_bo_import {
  __s32 fd;
  __u32 flags;
  __u32 handle;
  __u32 pad;
  __u64 size;
  __u64 device_addr;
};

/* Context events, counted by the CTX_EVENTS descriptor. */
#define DRM_NPU_CTX_EVENT_FAULT (1u << 0)  /* a job of the context faulted (and banned it) */
#define DRM_NPU_CTX_EVENT_RESET (1u << 1)  /* the device was reset (the watchdog) */

/**
 * struct drm_npu_ctx_events - a descriptor that becomes readable when something happens to a
 * context (API 1.3, DRM_NPU_CAP_CTX_EVENTS): one of its jobs faults (the context is then
 * banned), or the device is reset, by any context's job. It is an eventfd: read() returns the
 * number of events since the last read (and resets it); QUERY CONTEXT_STATE tells what
 * happened. An event loop learns of a fault without a WAIT.
 * @ctx_id: in, a context of this file.
 * @flags: in, must be 0.
 * @fd: out, the new close-on-exec descriptor (each call makes a new one).
 * @pad: must be 0.
 *
 * Errors: EINVAL non-zero @flags/@pad; ENOENT unknown context; EMFILE no descriptor.
 */
struct drm_npu_ctx_events {
  __u32 ctx_id;
  __u32 flags;
  __s32 fd;
  __u32 pad;
};

/* drm_npu_job_race.flags */
#define DRM_NPU_RACE_OTHER_FILE (1u << 0) /* the other job is another file's (ctx, seqno 0) */

/**
 * struct drm_npu_job_race - two jobs that touch the same bytes of one BO's memory, at least
 * one writing, with nothing ordering them: different contexts, no chain of fences from one
 * to the other, and the earlier one still pending when the later one was submitted (a job
 * that had retired by then is ordered by the host's own wait). Found by the synchronization
 * checker for jobs submitted with RACECHECK (QUERY JOB_RACES of the later job).
 * @kind: DRM_NPU_HAZARD_RAW/WAR/WAW, named from the earlier job (RAW: it writes what the
 *        later one reads).
 * @flags: DRM_NPU_RACE_*.
 * @other_ctx: the earlier job's context (in this file; 0 with OTHER_FILE).
 * @bo_handle: this file's handle of the memory (0 if it has none any more).
 * @other_seqno: the earlier job's seqno (0 with OTHER_FILE).
 * @begin, @end: the bytes both touch, as offsets in the BO.
 * @first: the earlier job's command; @second: this job's command.
 */
struct drm_npu_job_race {
  __u32 kind;
  __u32 flags;
  __u32 other_ctx;
  __u32 bo_handle;
  __u64 other_seqno;
  __u64 begin;
  __u64 end;
  struct drm_npu_hazard_cmd first;
  struct drm_npu_hazard_cmd second;
};

/** struct drm_npu_job_races - QUERY JOB_RACES: header, then @num_races entries. */
struct drm_npu_job_races {
  __u64 seqno;
  __u32 flags; /* DRM_NPU_HAZARDS_CHECKED when the job ran under the checker */
  __u32 num_races;
  __u64 total;
};

#if defined(__cplusplus)
}
#endif

#endif /* NPU_ACCEL_H */
