// check-support: partitioning as capability, then compile. Before anything is lowered, each
// node is placed on the device or on the host by the rules of support.cpp, and a host node
// carries the reason (shown by npu-compile's report). Later passes and the lowering read the
// placement instead of re-deciding it.
#include "npu/compiler/pass.h"
#include "npu/compiler/support.h"

namespace npu::compiler {

namespace {

class CheckSupportPass final : public Pass {
 public:
  std::string_view name() const override { return "check-support"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    for (Node& n : g.nodes) {
      std::string reason = device_support_reason(g, n);
      Placement p{reason.empty() ? Target::kDevice : Target::kHost, std::move(reason)};
      changed |= p.target != n.placement.target || p.reason != n.placement.reason;
      n.placement = std::move(p);
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> create_CheckSupportPass() {
  return std::make_unique<CheckSupportPass>();
}

}  // namespace npu::compiler
