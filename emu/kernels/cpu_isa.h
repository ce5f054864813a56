// The instruction-set level of the engines' hot loops, chosen once at run time from the CPU's
// features (the library is built for baseline x86-64 and compiles each ISA-specific loop with
// a target attribute). The levels are ordered by preference; a kernel of level L uses only
// instructions of L and of the levels below it that L's CPUs always have:
//   Portable  plain C++ (SSE2 on x86-64), any CPU;
//   Avx2      AVX2 + FMA: fp32 8-wide tiles, the portable int8 loops compiled for AVX2;
//   AvxVnni   Avx2 + AVX-VNNI (vpdpbusd on 256-bit registers) for int8;
//   Avx512    AVX-512 F/BW/VL/VNNI: fp32 16-wide tiles, int8 vpdpbusd on 512-bit registers,
//             AVX512-BF16 (vdpbf16ps) for bf16 products where the CPU has it;
//   Amx       Avx512 + AMX tiles (int8 and bf16 tile products), on a CPU that has AMX-TILE,
//             AMX-INT8 and AMX-BF16 and a kernel that grants the process the tile data state
//             (arch_prctl ARCH_REQ_XCOMP_PERM, asked once here).
// Every level computes the same integers; float paths stay within the ISA's tolerance
// (docs/isa.md, sections 5 and 9). Thread-safe: the selection is an atomic, the CPU probe a
// function-local static.
#pragma once

#include <cstdint>

namespace npu::emu::kern {

enum class Isa : uint8_t { Auto, Portable, Avx2, AvxVnni, Avx512, Amx };

/// Forces the kernels to `isa` (Auto: the best this CPU supports; a level the CPU lacks falls
/// back to the best supported level below it). For tests and benchmarks; also read once from
/// NPU_EMU_ISA ("portable", "avx2", "avxvnni", "avx512", "amx").
void set_kernel_isa(Isa isa);
/// The level the kernels use now (never Auto).
Isa selected_isa();
/// Whether this CPU (and, for Amx, the operating system) supports `isa`.
bool isa_supported(Isa isa);
/// "portable", "avx2", "avxvnni", "avx512" or "amx".
const char* isa_name(Isa isa);
/// Whether the CPU has AVX512-BF16 (vdpbf16ps), used by bf16 products at level Avx512.
bool cpu_has_avx512_bf16();

/// About how many multiply-accumulates per nanosecond one thread's CONV2D/MATMUL tiles of
/// input dtype `dtype` run at on the selected level, output stage included (bench_kernels'
/// BM_Conv3x3Tile on a Sapphire Rapids-class core): the lanes' planner weighs commands by it.
uint64_t matrix_macs_per_ns(uint8_t dtype);

/// At least level `min` selected now.
inline bool isa_at_least(Isa min) {
  return static_cast<uint8_t>(selected_isa()) >= static_cast<uint8_t>(min);
}

}  // namespace npu::emu::kern
