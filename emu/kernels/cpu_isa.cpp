// Run-time ISA selection of the engine kernels (cpu_isa.h).
#include "cpu_isa.h"

#include "npu_isa.h"

#include <atomic>
#include <cstdlib>
#include <string_view>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NPU_KERN_X86 1
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace npu::emu::kern {
namespace {

Isa env_isa() {
  const char* e = std::getenv("NPU_EMU_ISA");  // NOLINT(concurrency-mt-unsafe): read once
  if (e == nullptr) return Isa::Auto;
  const std::string_view s(e);
  if (s == "portable") return Isa::Portable;
  if (s == "avx2") return Isa::Avx2;
  if (s == "avxvnni") return Isa::AvxVnni;
  if (s == "avx512") return Isa::Avx512;
  if (s == "amx") return Isa::Amx;
  return Isa::Auto;
}

#ifdef NPU_KERN_X86
/// Asks Linux for the AMX tile data state (it is off by default for a process; without it
/// the first tile instruction raises SIGILL). True when granted.
bool request_amx() {
  constexpr int kArchReqXcompPerm = 0x1023;
  constexpr int kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#endif

#ifdef NPU_KERN_X86
/// CPUID leaf 7, sub-leaf `sub`, register `reg` (0 EAX .. 3 EDX), bit `bit`: the features the
/// compilers' __builtin_cpu_supports does not name everywhere (clang 14 knows neither AVX-VNNI
/// nor AMX).
bool cpuid7(unsigned sub, int reg, unsigned bit) {
  unsigned r[4] = {};
  if (__get_cpuid_count(7, sub, &r[0], &r[1], &r[2], &r[3]) == 0) return false;
  return ((r[reg] >> bit) & 1u) != 0;
}
constexpr int kEax = 0, kEdx = 3;
#endif

/// Bit i set: level i (the enum's value) runs on this CPU.
uint32_t supported_levels() {
  uint32_t s = 1u << static_cast<unsigned>(Isa::Portable);
#ifdef NPU_KERN_X86
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2) s |= 1u << static_cast<unsigned>(Isa::Avx2);
  if (avx2 && cpuid7(1, kEax, 4)) s |= 1u << static_cast<unsigned>(Isa::AvxVnni);
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vnni");
  if (avx512) s |= 1u << static_cast<unsigned>(Isa::Avx512);
  // AMX-BF16, AMX-TILE, AMX-INT8: leaf 7 EDX bits 22, 24, 25.
  if (avx512 && cpuid7(0, kEdx, 22) && cpuid7(0, kEdx, 24) && cpuid7(0, kEdx, 25) && request_amx())
    s |= 1u << static_cast<unsigned>(Isa::Amx);
#endif
  return s;
}

uint32_t supported() {
  static const uint32_t levels = supported_levels();
  return levels;
}

/// The best supported level at or below `want`.
Isa resolve(Isa want) {
  for (auto l = static_cast<unsigned>(want); l > static_cast<unsigned>(Isa::Portable); --l)
    if ((supported() >> l) & 1u) return static_cast<Isa>(l);
  return Isa::Portable;
}

std::atomic<Isa>& selected() {
  static std::atomic<Isa> isa{resolve(env_isa() == Isa::Auto ? Isa::Amx : env_isa())};
  return isa;
}

}  // namespace

Isa selected_isa() {
  return selected().load(std::memory_order_relaxed);
}

void set_kernel_isa(Isa isa) {
  selected().store(resolve(isa == Isa::Auto ? Isa::Amx : isa), std::memory_order_relaxed);
}

bool isa_supported(Isa isa) {
  return isa != Isa::Auto && ((supported() >> static_cast<unsigned>(isa)) & 1u) != 0;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Portable:
      return "portable";
    case Isa::Avx2:
      return "avx2";
    case Isa::AvxVnni:
      return "avxvnni";
    case Isa::Avx512:
      return "avx512";
    case Isa::Amx:
      return "amx";
    default:
      return "auto";
  }
}

uint64_t matrix_macs_per_ns(uint8_t dtype) {
  const Isa isa = selected_isa();
  if (dtype == NPU_DTYPE_INT8 || dtype == NPU_DTYPE_UINT8)
    return isa == Isa::Amx ? 160 : isa == Isa::Avx512 ? 90 : isa == Isa::AvxVnni ? 35 : 15;
  if (dtype == NPU_DTYPE_BF16 && (isa == Isa::Amx || (isa == Isa::Avx512 && cpu_has_avx512_bf16())))
    return isa == Isa::Amx ? 120 : 60;
  return isa_at_least(Isa::Avx512) ? 40 : 15;
}

bool cpu_has_avx512_bf16() {
#ifdef NPU_KERN_X86
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && cpuid7(1, kEax, 5);  // AVX512_BF16
  }();
  return has;
#else
  return false;
#endif
}

}  // namespace npu::emu::kern
