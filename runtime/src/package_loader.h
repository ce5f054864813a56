// Package loader: a validated package turned into a loaded model's state on a device.
//
// Semantics: load_package() validates the package against the device's config
// (format::validate_package), checks every buffer's fixed address against the device's VA
// range and alignment, allocates each buffer at its address (BufferOptions::fixed_va;
// constants filled from their section and device read-only, the others zeroed), maps it (the
// host copies in and out at each run), creates a Context, lists the graph inputs and
// outputs, and builds, validates and uploads each device segment's command buffer
// (prepare_device_segments), so that the first run costs what the others do. Errors name the
// package (`name`) and, for a buffer, the buffer: "m.npub: buffer 'act': address 0x100000010 is not
// aligned to the device's VA alignment 0x1000".
//
// Threading: none shared; the device may be used by other threads meanwhile.
// Lifetime: the state keeps the device (through its Buffers, Context and Device handle).
#pragma once

#include <memory>
#include <string>

#include "model_state.h"
#include "npu/device.h"
#include "npu/expected.h"
#include "npu/format/package.h"

namespace npu::runtime {

/// Loads `package` on `device`; `name` prefixes errors (see above).
Expected<std::unique_ptr<ModelState>> load_package(const Device& device, format::Package package,
                                                   std::string name);

}  // namespace npu::runtime
