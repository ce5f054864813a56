/* Compiles the uapi headers alone as C11 and pins their layout: every ioctl struct is a
 * multiple of 8 bytes and every ISA command is exactly NPU_CMD_SIZE bytes. */
#include "npu_accel.h"
#include "npu_isa.h"

#include <stddef.h>

#define MULT8(T) _Static_assert(sizeof(struct T) % 8 == 0, #T " must be a multiple of 8 bytes")
#define CMD(T) _Static_assert(sizeof(struct T) == NPU_CMD_SIZE, #T " must be 128 bytes")

MULT8(drm_npu_get_param);
MULT8(drm_npu_query);
MULT8(drm_npu_device_info);
MULT8(drm_npu_engine_info);
MULT8(drm_npu_fault);
MULT8(drm_npu_context_state);
MULT8(drm_npu_counters);
MULT8(drm_npu_cmd_profile);
MULT8(drm_npu_job_profile);
MULT8(drm_npu_hazard_cmd);
MULT8(drm_npu_hazard);
MULT8(drm_npu_job_hazards);
MULT8(drm_npu_bo_create);
MULT8(drm_npu_bo_info);
MULT8(drm_npu_bo_close);
MULT8(drm_npu_ctx_create);
MULT8(drm_npu_ctx_destroy);
MULT8(drm_npu_bo_ref);
MULT8(drm_npu_submit);
MULT8(drm_npu_wait);
MULT8(drm_npu_bo_wait);
MULT8(drm_npu_bo_export);
MULT8(drm_npu_bo_import);
MULT8(drm_npu_ctx_events);
MULT8(drm_npu_fence_wait);
MULT8(drm_npu_job_race);
MULT8(drm_npu_job_races);
MULT8(drm_npu_quota);

/* API 1.3 grew SUBMIT at its end: the 1.2 fields keep their offsets. */
_Static_assert(offsetof(struct drm_npu_submit, seqno) == 40, "1.2 SUBMIT layout");
_Static_assert(offsetof(struct drm_npu_submit, in_fences) == DRM_NPU_SUBMIT_SIZE_V1,
               "1.3 SUBMIT fields follow the 1.2 struct");
_Static_assert(sizeof(struct drm_npu_submit) == 64, "drm_npu_submit must be 64 bytes");
/* API 1.4: the counters grew at their end (a 1.3 caller's 200 bytes are a prefix), the job
 * profile's pad became @preemptions (the entries still start at 128 bytes). */
_Static_assert(offsetof(struct drm_npu_counters, jobs_submitted) == 200,
               "drm_npu_counters must keep its 1.3 prefix");
_Static_assert(sizeof(struct drm_npu_counters) == 232, "drm_npu_counters must be 232 bytes");
_Static_assert(sizeof(struct drm_npu_job_profile) == 128, "drm_npu_job_profile must be 128 bytes");
_Static_assert(sizeof(struct drm_npu_quota) == 56, "drm_npu_quota must be 56 bytes");
_Static_assert(sizeof(struct drm_npu_job_race) == 56, "drm_npu_job_race must be 56 bytes");

_Static_assert(sizeof(struct drm_npu_hazard) == 40, "drm_npu_hazard must be 40 bytes");
_Static_assert(sizeof(struct drm_npu_job_hazards) == 24, "drm_npu_job_hazards must be 24 bytes");
_Static_assert(sizeof(struct npu_cmdbuf_header) == 32, "npu_cmdbuf_header must be 32 bytes");
_Static_assert(sizeof(struct npu_cmd_header) == 8, "npu_cmd_header must be 8 bytes");
_Static_assert(sizeof(struct npu_chan_qparams) == 16, "npu_chan_qparams must be 16 bytes");
_Static_assert(sizeof(struct npu_qparam) == 8, "npu_qparam must be 8 bytes");
CMD(npu_cmd_end);
CMD(npu_cmd_fence);
CMD(npu_cmd_marker);
CMD(npu_cmd_sem);
CMD(npu_cmd_dma);
CMD(npu_cmd_conv2d);
CMD(npu_cmd_matmul);
CMD(npu_cmd_eltwise);
CMD(npu_cmd_activation);
CMD(npu_cmd_pool);
CMD(npu_cmd_softmax);
CMD(npu_cmd_scale_shift);
CMD(npu_cmd_quant);
CMD(npu_cmd_requant);
CMD(npu_cmd_transpose);
CMD(npu_cmd_reduce);
_Static_assert(sizeof(union npu_cmd) == NPU_CMD_SIZE, "npu_cmd must be 128 bytes");
_Static_assert(offsetof(struct npu_cmd_dma, dram_addr) % 8 == 0, "dram_addr aligned");

int npu_uapi_layout_check(void) { return (int)sizeof(union npu_cmd); }
