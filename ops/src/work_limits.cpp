// Work and output size limits (work_limits.h).
#include "work_limits.h"

#include <string>

namespace npu::ops::detail {

Expected<void> check_work(const OpCall& c, int64_t outputs, int64_t per_output, const char* what) {
  uint64_t work = 0;
  const bool overflow = outputs < 0 || per_output < 0 ||
                        __builtin_mul_overflow(static_cast<uint64_t>(outputs),
                                               static_cast<uint64_t>(per_output), &work);
  if (!overflow && work <= c.max_work) return ok();
  const std::string amount = overflow ? std::string("more than 2^63 ") + what
                                      : std::to_string(work) + " " + what + " (" +
                                            std::to_string(outputs) + " outputs × " +
                                            std::to_string(per_output) + ")";
  return make_error(
      EFBIG, c.op + ": " + amount + " exceed the host limit of " + std::to_string(c.max_work));
}

Expected<void> check_output(const OpCall& c, DType t, const Shape& shape) {
  uint64_t bytes = format::dtype_size(t);
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      return op_error(c, "output shape " + shape_text(shape) + " has a negative dimension");
    empty = empty || d == 0;
  }
  for (int64_t d : shape) {
    if (empty) break;
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes) ||
        bytes > c.max_output_bytes) {
      return make_error(EFBIG, c.op + ": output shape " + shape_text(shape) + " is too large");
    }
  }
  return npu::ok();
}

Expected<NpyArray> alloc_output(const OpCall& c, DType t, Shape shape) {
  NPU_TRY(check_output(c, t, shape));
  return NpyArray::zeros(t, std::move(shape));
}

}  // namespace npu::ops::detail
