// safe_points() (npu/isa/safe_points.h).
#include "npu/isa/safe_points.h"

namespace npu::isa {

std::vector<uint32_t> safe_points(std::span<const npu_cmd> cmds) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < cmds.size(); ++i) {
    if (is_safe_point(cmds[i])) out.push_back(i);
  }
  return out;
}

}  // namespace npu::isa
