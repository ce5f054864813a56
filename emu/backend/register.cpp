// Registers the "emu" scheme in libnpu's backend registry, explicitly (register_backend())
// or by itself before main() (the registrar below; see npu/emu/backend.h for why the link
// needs --undefined=npu_emu_backend_anchor to keep this object).
#include <memory>

#include "npu/emu/backend.h"
#include "npu/emu/emulator_kernel.h"
#include "npu/kernel.h"

namespace npu::emu {

Expected<void> register_backend() {
  // A function-local static: initialized once, thread-safe, the first call's result kept.
  static const Expected<void> result = register_kernel_backend(
      "emu", [](std::string_view device) -> Expected<std::shared_ptr<KernelInterface>> {
        auto k = EmulatorKernel::create(device);
        if (!k) return k.error();
        return std::shared_ptr<KernelInterface>(std::move(*k));
      });
  return result;
}

namespace {

// Runs during static initialization of any program this object is linked into. A failure
// (another factory already holds "emu") is reported by an explicit register_backend().
[[maybe_unused]] const bool registered = [] { return static_cast<bool>(register_backend()); }();

}  // namespace

}  // namespace npu::emu

extern "C" void npu_emu_backend_anchor(void) {}
