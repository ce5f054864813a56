// Cancellation of a running command: a device reset must stop an engine mid-command, as a
// hardware watchdog does, so long loops poll cancelled() between blocks of work and stop
// early, leaving their output partly written (the job is failed anyway). The mechanism is the
// stack's one (npu/cancel.h); run_command installs the device's reset flag for its command.
#pragma once

#include "npu/cancel.h"

namespace npu::emu::kern {

using npu::cancelled;
using npu::CancelScope;

}  // namespace npu::emu::kern
