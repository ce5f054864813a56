// npu.Device as the bindings hold it: an open libnpu Device (a cheap, copyable handle; see
// npu/device.h for its threading and lifetime rules). Sessions opened on an npu.Device use it
// for their first model instance and its device string for more.
#pragma once

#include "npu/device.h"

namespace npu::python {

struct DeviceHandle {
  Device device;
};

}  // namespace npu::python
