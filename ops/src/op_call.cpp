// op_error (op_call.h).
#include "op_call.h"

namespace npu::ops::detail {

Error op_error(const OpCall& c, const std::string& what) {
  return make_error(EINVAL, c.op + ": " + what);
}

}  // namespace npu::ops::detail
