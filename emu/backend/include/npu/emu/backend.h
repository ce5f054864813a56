// The emulator as a libnpu backend: registration of the "emu" device-string scheme.
//
// Semantics: libnpu (npu::npu) is the driver only and does not link the emulator. This
// library (CMake target npu::emu_backend, included in npu::emu) registers the "emu" scheme
// in libnpu's backend registry (npu::register_kernel_backend, npu/kernel.h) with
// EmulatorKernel::create as its factory, so Device::open("emu:...") — and the default device
// "emu:" — work in any program that links it. Registration happens by itself before main():
// the CMake target carries the link option LINKER:--undefined=npu_emu_backend_anchor, which
// keeps the registering object in the link (a static archive's unreferenced objects are
// dropped, static initializers and all). Programs linked without CMake either pass that
// option too (pkg-config npu-emu does) or call register_backend() themselves.
//
// Threading: register_backend() may be called from any thread, any number of times.
// Lifetime: the registration lasts until the process ends.
#pragma once

#include "npu/expected.h"

namespace npu::emu {

/// Registers the "emu" scheme. Idempotent: every call after the first returns the first
/// call's result (ok, or EEXIST when another factory had taken "emu" before).
Expected<void> register_backend();

}  // namespace npu::emu

extern "C" {
/// The symbol the link option --undefined= names; calling it does nothing.
void npu_emu_backend_anchor(void);
}
