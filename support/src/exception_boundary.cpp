// error_from_exception (npu/exception_boundary.h): maps an exception to an Error.
#include "npu/exception_boundary.h"

#include <new>
#include <string>

namespace npu {

Error error_from_exception(std::string_view where, const std::exception_ptr& e) {
  std::string prefix(where);
  if (!prefix.empty()) prefix += ": ";
  try {
    std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    return make_error(ENOMEM, prefix +
                                  "out of memory (the input asks for more than this "
                                  "machine has; docs/reliability.md lists the limits)");
  } catch (const std::exception& x) {
    return make_error(EIO, prefix + "internal error: " + x.what());
  } catch (...) {
    return make_error(EIO, prefix + "internal error: unknown exception");
  }
}

}  // namespace npu
