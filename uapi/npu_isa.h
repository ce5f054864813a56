/* SPDX-License-Identifier: MIT */
/*
 * npu_isa.h - the command-buffer ISA: the binary contract between the compiler and the device.
 *
 * A command buffer is a struct npu_cmdbuf_header followed by num_cmds commands of exactly
 * NPU_CMD_SIZE (128) bytes each. Every command starts with struct npu_cmd_header, which names
 * the opcode and the engine that executes it; the rest of the command is self-contained (no
 * pointers to other commands). All integers are little-endian. Reserved fields must be zero.
 * docs/isa.md is the specification; this header is its machine-readable half.
 *
 * Address spaces: "dram" addresses are 64-bit device virtual addresses translated by the
 * MMU of the submitting file; "sram" addresses are byte offsets into the on-chip SRAM.
 * Activation tiles in SRAM are channels-last (HWC), weights OHWI, matrices row-major.
 */
#ifndef NPU_ISA_H
#define NPU_ISA_H

#include <linux/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define NPU_ISA_MAGIC 0x4355504eu /* "NPUC" little-endian */
#define NPU_ISA_VERSION_MAJOR 1
#define NPU_ISA_VERSION_MINOR 2 /* 1.1: fp16/bf16 (NPU_FEATURE_FP16); 1.2: safe points, MOMENTS */
#define NPU_CMD_SIZE 128
/* The most commands one command buffer may hold (2^20: 128 MiB of commands). Drivers refuse a
 * larger buffer before reading it; compilers split work across buffers (segments) instead. */
#define NPU_MAX_CMDS (1u << 20)

/* Features a command buffer may require (header.required_features). */
#define NPU_FEATURE_INT8 (1ull << 0)           /* int8/uint8 matrix datapath */
#define NPU_FEATURE_FP32 (1ull << 1)           /* fp32 matrix and vector datapath */
#define NPU_FEATURE_TRANSCENDENTAL (1ull << 2) /* exp/tanh/sigmoid/erf/... on the vector engine */
#define NPU_FEATURE_FP16 (1ull << 3) /* since 1.1: fp16/bf16 matrix datapath, DMA conversion */
#define NPU_FEATURES_ALL \
  (NPU_FEATURE_INT8 | NPU_FEATURE_FP32 | NPU_FEATURE_TRANSCENDENTAL | NPU_FEATURE_FP16)

/** struct npu_cmdbuf_header - 32 bytes at the start of every command buffer. */
struct npu_cmdbuf_header {
  __u32 magic;             /* NPU_ISA_MAGIC */
  __u16 version_major;     /* must equal NPU_ISA_VERSION_MAJOR */
  __u16 version_minor;     /* <= the device's minor */
  __u32 size;              /* total bytes: 32 + num_cmds * 128 */
  __u32 num_cmds;          /* >= 1; the last command must be NPU_OP_END */
  __u64 required_features; /* NPU_FEATURE_* the device must implement */
  __u64 reserved;
};

/* Engines. Engine ids are also the indices of per-engine counters. */
#define NPU_ENGINE_CP 0      /* command processor: END, FENCE, MARKER, NOP */
#define NPU_ENGINE_DMA_IN 1  /* DRAM -> SRAM */
#define NPU_ENGINE_DMA_OUT 2 /* SRAM -> DRAM */
#define NPU_ENGINE_MATRIX 3  /* conv2d, matmul */
#define NPU_ENGINE_VECTOR 4  /* elementwise, activations, pooling, softmax, (de/re)quantize, reductions */
#define NPU_NUM_ENGINES 5

/* Opcodes. */
#define NPU_OP_END 0x01         /* CP: end of the command stream (exactly once, last) */
#define NPU_OP_FENCE 0x02       /* CP: barrier across all engines, optional interrupt */
#define NPU_OP_MARKER 0x03      /* any engine: profiling marker */
#define NPU_OP_NOP 0x04         /* any engine: does nothing, costs its latency */
#define NPU_OP_SEM_SIGNAL 0x05  /* any non-CP engine: add count to a semaphore */
#define NPU_OP_SEM_WAIT 0x06    /* any non-CP engine: wait for count, then subtract it */
#define NPU_OP_DMA_LOAD 0x10    /* DMA_IN: strided 3-D box DRAM -> SRAM with padding fill */
#define NPU_OP_DMA_STORE 0x11   /* DMA_OUT: strided 3-D box SRAM -> DRAM */
#define NPU_OP_CONV2D 0x20      /* MATRIX: 2-D convolution of one HWC tile */
#define NPU_OP_MATMUL 0x21      /* MATRIX: batched matrix multiply */
#define NPU_OP_ELTWISE 0x30     /* VECTOR: binary elementwise with broadcasting */
#define NPU_OP_ACTIVATION 0x31  /* VECTOR: unary function */
#define NPU_OP_POOL 0x32        /* VECTOR: max / average / global pooling of an HWC tile */
#define NPU_OP_SOFTMAX 0x33     /* VECTOR: softmax over the innermost axis */
#define NPU_OP_SCALE_SHIFT 0x34 /* VECTOR: per-channel y = x * scale[c] + shift[c] */
#define NPU_OP_QUANTIZE 0x35    /* VECTOR: fp32 -> int8/uint8 */
#define NPU_OP_DEQUANTIZE 0x36  /* VECTOR: int8/uint8/int32 -> fp32 */
#define NPU_OP_REQUANTIZE 0x37  /* VECTOR: int8/uint8/int32 -> int8/uint8 */
#define NPU_OP_TRANSPOSE 0x38   /* VECTOR: 4-D permutation (layout change) */
#define NPU_OP_REDUCE 0x39      /* VECTOR: reduce the middle axis of [outer][len][inner] */
#define NPU_OP_MOMENTS 0x3A     /* VECTOR: mean and mean of squares in one read */

/* Element types. */
#define NPU_DTYPE_INT8 1
#define NPU_DTYPE_UINT8 2
#define NPU_DTYPE_INT32 3
#define NPU_DTYPE_FP32 4
#define NPU_DTYPE_FP16 5 /* since 1.1: IEEE 754 binary16 */
#define NPU_DTYPE_BF16 6 /* since 1.1: bfloat16 (the upper half of an fp32) */

/** struct npu_cmd_header - first 8 bytes of every command. */
struct npu_cmd_header {
  __u8 opcode; /* NPU_OP_* */
  __u8 engine; /* NPU_ENGINE_* that executes it; must be one the opcode allows */
  __u16 flags; /* opcode-specific NPU_*_FLAG_* bits; others must be 0 */
  __u32 reserved;
};

/** END, NOP: no payload. */
struct npu_cmd_end {
  struct npu_cmd_header hdr;
  __u8 reserved[120];
};

/* FENCE flags. */
#define NPU_FENCE_FLAG_IRQ 0x1 /* raise an interrupt carrying @value when the fence passes */
/* (ISA 1.2) A safe point: nothing the commands after the fence read in SRAM was written before
 * it, and every semaphore is 0 there (the validator checks the semaphores). The device may
 * switch to another job at the fence, once every engine drained, and resume this one later
 * from the next command (docs/isa.md section 10). */
#define NPU_FENCE_FLAG_PREEMPT 0x2

/** FENCE: every engine finishes all earlier commands before any later command starts. */
struct npu_cmd_fence {
  struct npu_cmd_header hdr;
  __u32 value; /* interrupt payload, reported in the job profile */
  __u8 reserved[116];
};

/** MARKER: records (engine, cycle, @id) in the job timeline. */
struct npu_cmd_marker {
  struct npu_cmd_header hdr;
  __u32 id;
  __u8 reserved[116];
};

/**
 * SEM_SIGNAL / SEM_WAIT: counting semaphores between engines. Within one command buffer a
 * semaphore is signalled by exactly one engine and waited on by exactly one engine, so
 * which signal releases which wait never depends on host scheduling.
 */
struct npu_cmd_sem {
  struct npu_cmd_header hdr;
  __u32 sem;   /* semaphore id, < DRM_NPU_PARAM_NUM_SEMAPHORES */
  __u32 count; /* >= 1 */
  __u8 reserved[112];
};

/**
 * DMA_LOAD / DMA_STORE: move a 3-D box of elements. Box dims are (x, y, z), x innermost.
 * The DRAM side is fully strided (bytes, any x stride including 0 for broadcast); the SRAM
 * side has contiguous x and byte strides for y and z. DMA_LOAD surrounds the box in SRAM with
 * pad_before/pad_after elements per dim filled with @pad_value (low elem_size bytes), so the
 * SRAM box is (size + pad_before + pad_after) per dim. DMA_STORE must have zero padding.
 *
 * Conversion (since 1.1, NPU_FEATURE_FP16): with dram_dtype and sram_dtype both 0 the DMA
 * moves elem_size-byte elements unchanged. Otherwise both name one of FP32, FP16, BF16 and the
 * DMA converts every element from the source's type to the destination's (fp32 -> fp16/bf16
 * rounds to nearest even, overflows to +-inf, keeps NaN a NaN; widening is exact). elem_size
 * must then be the size of sram_dtype; the DRAM side's element size is that of dram_dtype
 * (its strides stay in bytes) and pad_value is an sram_dtype bit pattern.
 */
struct npu_cmd_dma {
  struct npu_cmd_header hdr;
  __u64 dram_addr;
  __u32 sram_addr;
  __u32 elem_size;      /* 1, 2 or 4 bytes */
  __u32 size[3];        /* elements in x, y, z; each >= 1 */
  __u32 dram_stride[3]; /* bytes between consecutive x, y, z steps in DRAM */
  __u32 sram_stride[2]; /* bytes between consecutive y, z steps in SRAM (x is contiguous) */
  __u16 pad_before[3];
  __u16 pad_after[3];
  __u32 pad_value;
  __u8 dram_dtype; /* NPU_DTYPE_* or 0 (no conversion); since 1.1 */
  __u8 sram_dtype; /* NPU_DTYPE_* or 0 (no conversion); since 1.1 */
  __u8 reserved[54];
};

/* CONV2D / MATMUL flags. */
#define NPU_MM_FLAG_BIAS 0x1        /* fp32: add the float bias[oc] at chan_addr */
#define NPU_MM_FLAG_TRANSPOSE_B 0x2 /* MATMUL: B is stored [N][K] */

/**
 * struct npu_chan_qparams - per-output-channel parameters of integer CONV2D/MATMUL at
 * chan_addr (16 bytes each, one per output channel / column).
 * acc = sum((x - in_zp) * (w - w_zp)) + bias; for int8/uint8 outputs
 * y = clamp(round_half_even(acc * multiplier / 2^shift) + out_zp, clamp_min, clamp_max);
 * for int32 outputs y = acc.
 */
struct npu_chan_qparams {
  __s32 bias;
  __s32 multiplier; /* 0 .. 2^31-1 */
  __s32 shift;      /* 0 .. 62 */
  __s32 w_zp;       /* weight zero point of this channel */
};

/**
 * CONV2D: one tile. Input [in_h][in_w][in_c], weights [out_c][k_h][k_w][in_c/groups],
 * output [out_h][out_w][out_c], all contiguous in SRAM. Padding is implicit: positions
 * outside the input tile contribute zero after zero-point subtraction. Groups divide in_c and
 * out_c (depthwise: groups == in_c == out_c). Integer modes read struct npu_chan_qparams
 * [out_c] at chan_addr; float modes read float (fp32) bias[out_c] at chan_addr when
 * NPU_MM_FLAG_BIAS. Half modes (since 1.1, NPU_FEATURE_FP16): (fp16, fp16, fp16|fp32) and
 * (bf16, bf16, bf16|fp32); products are exact in fp32 and accumulate in fp32, bias and the
 * fp32 clamp apply in fp32, and an fp16/bf16 output rounds to nearest even at the end.
 * out_h/out_w must equal the usual (in + pads - dil*(k-1) - 1) / stride + 1.
 */
struct npu_cmd_conv2d {
  struct npu_cmd_header hdr;
  __u32 in_addr;
  __u32 w_addr;
  __u32 out_addr;
  __u32 chan_addr;
  __u16 in_h, in_w, in_c;
  __u16 out_h, out_w, out_c;
  __u16 k_h, k_w;
  __u16 groups;
  __u16 reserved1;
  __u8 stride_h, stride_w;
  __u8 dil_h, dil_w;
  __u8 pad_top, pad_left, pad_bottom, pad_right;
  __u8 in_dtype, w_dtype, out_dtype, reserved0; /* (int8|uint8, int8|uint8, int8|uint8|int32),
                                                   (fp32, fp32, fp32), (fp16, fp16, fp16|fp32)
                                                   or (bf16, bf16, bf16|fp32) */
  __s32 in_zp;
  __s32 out_zp;
  __s32 clamp_min, clamp_max;   /* integer output clamp (within the output type) */
  float fclamp_min, fclamp_max; /* fp32 output clamp (use -inf/inf for none) */
  __u8 reserved[48];
};

/**
 * MATMUL: out[b] = A[b] x B[b] for b < batch. A is [m][k], B is [k][n] (or [n][k] with
 * NPU_MM_FLAG_TRANSPOSE_B), out is [m][n], row-major in SRAM; batch strides are in elements
 * (0 broadcasts the operand). Quantization and the dtype combinations (half modes included)
 * as CONV2D with channels = columns n.
 */
struct npu_cmd_matmul {
  struct npu_cmd_header hdr;
  __u32 a_addr;
  __u32 b_addr;
  __u32 out_addr;
  __u32 chan_addr;
  __u32 m, k, n;
  __u32 batch;
  __u32 a_batch_stride, b_batch_stride, out_batch_stride;
  __u8 a_dtype, b_dtype, out_dtype, reserved0;
  __s32 a_zp;
  __s32 out_zp;
  __s32 clamp_min, clamp_max;
  float fclamp_min, fclamp_max;
  __u8 reserved[48];
};

/** struct npu_vtensor - a strided 4-D view in SRAM; strides in elements (0 broadcasts). */
struct npu_vtensor {
  __u32 addr;
  __u32 stride[4];
};

/* ELTWISE ops. */
#define NPU_ELTWISE_ADD 1
#define NPU_ELTWISE_SUB 2
#define NPU_ELTWISE_MUL 3
#define NPU_ELTWISE_DIV 4
#define NPU_ELTWISE_MAX 5
#define NPU_ELTWISE_MIN 6
#define NPU_ELTWISE_POW 7   /* fp32 only */
#define NPU_ELTWISE_PRELU 8 /* a >= 0 ? a : a * b (fp32 only) */

/**
 * ELTWISE: out[i] = op(a[i], b[i]) over shape[4]; broadcasting through zero strides.
 * dtype fp32, int32 (wrapping; DIV truncates, x/0 = 0) or int8 (saturating; DIV truncates).
 */
struct npu_cmd_eltwise {
  struct npu_cmd_header hdr;
  __u8 op;
  __u8 dtype;
  __u16 reserved0;
  __u32 shape[4];
  struct npu_vtensor a, b, out;
  __u8 reserved[40];
};

/* ACTIVATION functions (fp32 unless noted). */
#define NPU_ACT_COPY 1       /* y = x (any dtype, fp16/bf16 included): strided copy */
#define NPU_ACT_RELU 2       /* fp32, int8, int32 */
#define NPU_ACT_LEAKY_RELU 3 /* x >= 0 ? x : alpha * x */
#define NPU_ACT_CLIP 4       /* min(max(x, alpha), beta); fp32, int8, int32 (bounds rounded) */
#define NPU_ACT_SIGMOID 5
#define NPU_ACT_TANH 6
#define NPU_ACT_GELU 7        /* 0.5 x (1 + erf(x / sqrt 2)) */
#define NPU_ACT_HARDSWISH 8   /* x * min(max(x + 3, 0), 6) / 6 */
#define NPU_ACT_HARDSIGMOID 9 /* max(0, min(1, alpha * x + beta)) */
#define NPU_ACT_EXP 10
#define NPU_ACT_LOG 11
#define NPU_ACT_SQRT 12
#define NPU_ACT_ABS 13 /* fp32, int8, int32 */
#define NPU_ACT_NEG 14 /* fp32, int8 (saturating), int32 */
#define NPU_ACT_ERF 15
#define NPU_ACT_SOFTPLUS 16 /* log(1 + exp(x)) */
#define NPU_ACT_ELU 17      /* x >= 0 ? x : alpha * (exp(x) - 1) */
#define NPU_ACT_RECIPROCAL 18
#define NPU_ACT_MAX 18

/** ACTIVATION: out[i] = f(in[i]) over shape[4]. */
struct npu_cmd_activation {
  struct npu_cmd_header hdr;
  __u8 func;
  __u8 dtype;
  __u16 reserved0;
  __u32 shape[4];
  struct npu_vtensor in, out;
  float alpha, beta;
  __u8 reserved[52];
};

/* POOL kinds and flags. */
#define NPU_POOL_MAX 1
#define NPU_POOL_AVG 2
#define NPU_POOL_FLAG_COUNT_PAD 0x1 /* AVG: padded positions count in the divisor */

/**
 * POOL: input [in_h][in_w][channels], output [out_h][out_w][channels], contiguous. Padded
 * positions are ignored by MAX. dtype fp32, int8 or uint8 (AVG rounds half to even).
 * Global pooling is k = in dims with stride 1 and no padding.
 */
struct npu_cmd_pool {
  struct npu_cmd_header hdr;
  __u8 kind;
  __u8 dtype;
  __u16 reserved0;
  __u32 in_addr, out_addr;
  __u16 in_h, in_w, channels;
  __u16 out_h, out_w;
  __u16 k_h, k_w;
  __u8 stride_h, stride_w;
  __u8 pad_top, pad_left, pad_bottom, pad_right;
  __u8 reserved[88];
};

/* SOFTMAX flags. */
#define NPU_SOFTMAX_FLAG_LOG 0x1 /* log-softmax */

/** SOFTMAX: rows of @len contiguous fp32 values; max-subtracted for stability. */
struct npu_cmd_softmax {
  struct npu_cmd_header hdr;
  __u32 in_addr, out_addr;
  __u32 rows, len;
  __u8 reserved[104];
};

/** SCALE_SHIFT: fp32 [outer][channels] contiguous; y = x * scale[c] + shift[c]. */
struct npu_cmd_scale_shift {
  struct npu_cmd_header hdr;
  __u32 in_addr, out_addr;
  __u32 scale_addr, shift_addr; /* float[channels] each */
  __u32 outer, channels;
  __u8 reserved[96];
};

/** struct npu_qparam - per-channel (scale, zero point) of QUANTIZE / DEQUANTIZE. */
struct npu_qparam {
  float scale;
  __s32 zp;
};

/**
 * QUANTIZE: y = saturate(round_half_even(x / scale) + zp), fp32 -> int8/uint8.
 * DEQUANTIZE: y = (float)(x - zp) * scale, int8/uint8/int32 -> fp32.
 * @count contiguous elements. With channels == 1 the command's scale/zp apply; otherwise
 * element i uses qparams[(i / inner) % channels] (struct npu_qparam at params_addr).
 */
struct npu_cmd_quant {
  struct npu_cmd_header hdr;
  __u32 in_addr, out_addr;
  __u32 count;
  __u32 channels, inner;
  __u32 params_addr;
  float scale;
  __s32 zp;
  __u8 in_dtype, out_dtype;
  __u16 reserved0;
  __u8 reserved[84];
};

/**
 * REQUANTIZE: y = clamp(round_half_even((x - in_zp) * multiplier / 2^shift) + out_zp,
 * clamp_min, clamp_max), @count contiguous elements, int8/uint8/int32 -> int8/uint8.
 */
struct npu_cmd_requant {
  struct npu_cmd_header hdr;
  __u32 in_addr, out_addr;
  __u32 count;
  __s32 multiplier, shift;
  __s32 in_zp, out_zp;
  __s32 clamp_min, clamp_max;
  __u8 in_dtype, out_dtype;
  __u16 reserved0;
  __u8 reserved[80];
};

/**
 * TRANSPOSE: out = permute(in, perm). in is contiguous with dims in_shape[4] (outermost
 * first); out is contiguous with dims in_shape[perm[0..3]]. Any element size 1, 2 or 4.
 */
struct npu_cmd_transpose {
  struct npu_cmd_header hdr;
  __u32 in_addr, out_addr;
  __u32 in_shape[4];
  __u8 perm[4];
  __u32 elem_size;
  __u8 reserved[88];
};

/* REDUCE kinds. */
#define NPU_REDUCE_SUM 1
#define NPU_REDUCE_MEAN 2
#define NPU_REDUCE_MAX 3
#define NPU_REDUCE_MIN 4

/** REDUCE: fp32 in [outer][len][inner] contiguous -> out [outer][inner]. */
struct npu_cmd_reduce {
  struct npu_cmd_header hdr;
  __u8 kind;
  __u8 reserved0[3];
  __u32 in_addr, out_addr;
  __u32 outer, len, inner;
  __u8 reserved[96];
};

/**
 * MOMENTS: fp32 in [outer][len][inner] contiguous -> mean [outer][inner] = sum(x) / len and
 * sq [outer][inner] = sum(x * x) / len, both over the middle axis, in one read of the input.
 * Each product x * x is rounded to fp32 and both sums accumulate in fp32 in ascending l, so
 * the results are bit-identical to ELTWISE MUL (x, x) then REDUCE MEAN, and to REDUCE MEAN of
 * x. For LayerNorm (var = sq - mean^2) and RMSNorm (sq). mean and sq must not overlap.
 */
struct npu_cmd_moments {
  struct npu_cmd_header hdr;
  __u32 in_addr, mean_addr, sq_addr;
  __u32 outer, len, inner;
  __u8 reserved[96];
};

/** union npu_cmd - any command. */
union npu_cmd {
  struct npu_cmd_header hdr;
  struct npu_cmd_end end;
  struct npu_cmd_fence fence;
  struct npu_cmd_marker marker;
  struct npu_cmd_sem sem;
  struct npu_cmd_dma dma;
  struct npu_cmd_conv2d conv2d;
  struct npu_cmd_matmul matmul;
  struct npu_cmd_eltwise eltwise;
  struct npu_cmd_activation activation;
  struct npu_cmd_pool pool;
  struct npu_cmd_softmax softmax;
  struct npu_cmd_scale_shift scale_shift;
  struct npu_cmd_quant quant;
  struct npu_cmd_requant requant;
  struct npu_cmd_transpose transpose;
  struct npu_cmd_reduce reduce;
  struct npu_cmd_moments moments;
  __u8 bytes[NPU_CMD_SIZE];
};

#if defined(__cplusplus)
}
#endif

#endif /* NPU_ISA_H */
