// The C API (npu/npu.h): opaque handles wrapping the C++ objects, errors mapped to
// npu_status_t with the message kept in a thread-local string.
#include "npu/npu.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "npu/buffer.h"
#include "npu/command_buffer.h"
#include "npu/context.h"
#include "npu/device.h"
#include "npu/exception_boundary.h"
#include "npu/fence.h"
#include "npu/job.h"

struct npu_device {
  npu::Device device;
};
struct npu_buffer {
  npu::Buffer buffer;
};
struct npu_context {
  npu::Context context;
};
struct npu_cmdbuf {
  npu::CommandBuffer cmdbuf;
};
struct npu_job {
  npu::Job job;
};

namespace {

thread_local std::string t_error;
thread_local int t_errno = 0;

npu_status_t status_of(int code) {
  switch (code) {
    case 0:
      return NPU_OK;
    case EINVAL:
    case ERANGE:
    case EXDEV:
    case EBADF:
      return NPU_ERROR_INVALID_ARGUMENT;
    case ENOENT:
      return NPU_ERROR_NOT_FOUND;
    case ENOMEM:
      return NPU_ERROR_OUT_OF_MEMORY;
    case ETIMEDOUT:
      return NPU_ERROR_TIMEOUT;
    case EBUSY:
      return NPU_ERROR_BUSY;
    case ECANCELED:
      return NPU_ERROR_CANCELED;
    case EFAULT:
      return NPU_ERROR_FAULT;
    case ENODEV:
      return NPU_ERROR_NO_DEVICE;
    case EOPNOTSUPP:
    case EPROTO:
      return NPU_ERROR_UNSUPPORTED;
    case EEXIST:
      return NPU_ERROR_EXISTS;
    case EDQUOT:
      return NPU_ERROR_QUOTA;
    case EPERM:
      return NPU_ERROR_PERMISSION;
    default:
      return NPU_ERROR_UNKNOWN;
  }
}

npu_status_t fail(const char* fn, int code, const std::string& message) {
  t_error = std::string(fn) + ": " + message;
  t_errno = code;
  return status_of(code);
}

npu_status_t fail(const char* fn, const npu::Error& e) {
  return fail(fn, e.code, e.message);
}

#define NPU_C_CHECK(cond, fn, what) \
  if (!(cond)) return fail(fn, EINVAL, what)

/// The C boundary: no exception may cross it (std::bad_alloc is NPU_ERROR_OUT_OF_MEMORY).
template <typename Body>
npu_status_t guarded(const char* fn, Body&& body) noexcept {
  try {
    return body();
  } catch (...) {
    return fail(fn, npu::error_from_exception("", std::current_exception()));
  }
}

}  // namespace

extern "C" {

const char* npu_last_error(void) {
  return t_error.c_str();
}

int npu_last_errno(void) {
  return t_errno;
}

const char* npu_status_string(npu_status_t status) {
  switch (status) {
    case NPU_OK:
      return "ok";
    case NPU_ERROR_INVALID_ARGUMENT:
      return "invalid argument";
    case NPU_ERROR_NOT_FOUND:
      return "not found";
    case NPU_ERROR_OUT_OF_MEMORY:
      return "out of memory";
    case NPU_ERROR_TIMEOUT:
      return "timeout";
    case NPU_ERROR_BUSY:
      return "busy";
    case NPU_ERROR_CANCELED:
      return "canceled";
    case NPU_ERROR_FAULT:
      return "fault";
    case NPU_ERROR_NO_DEVICE:
      return "no device";
    case NPU_ERROR_UNSUPPORTED:
      return "unsupported";
    case NPU_ERROR_EXISTS:
      return "exists";
    case NPU_ERROR_UNKNOWN:
      return "unknown error";
    case NPU_ERROR_QUOTA:
      return "over quota";
    case NPU_ERROR_PERMISSION:
      return "permission denied";
  }
  return "unknown status";
}

npu_status_t npu_device_open(const char* device, npu_device_t** out) {
  return guarded("npu_device_open", [&]() -> npu_status_t {
    NPU_C_CHECK(out != nullptr, "npu_device_open", "out is null");
    auto d = npu::Device::open(device != nullptr ? device : "");
    if (!d) return fail("npu_device_open", d.error());
    *out = new (std::nothrow) npu_device{std::move(*d)};
    return *out != nullptr ? NPU_OK : fail("npu_device_open", ENOMEM, "out of host memory");
  });
}

void npu_device_close(npu_device_t* device) {
  delete device;
}

npu_status_t npu_device_get_param(npu_device_t* device, uint32_t param, uint64_t* value) {
  return guarded("npu_device_get_param", [&]() -> npu_status_t {
    NPU_C_CHECK(device != nullptr && value != nullptr, "npu_device_get_param",
                "device or value is null");
    auto v = device->device.get_param(param);
    if (!v) return fail("npu_device_get_param", v.error());
    *value = *v;
    return NPU_OK;
  });
}

npu_status_t npu_device_quota(npu_device_t* device, struct drm_npu_quota* out) {
  return guarded("npu_device_quota", [&]() -> npu_status_t {
    NPU_C_CHECK(device != nullptr && out != nullptr, "npu_device_quota", "device or out is null");
    auto q = device->device.quota();
    if (!q) return fail("npu_device_quota", q.error());
    *out = *q;
    return NPU_OK;
  });
}

npu_status_t npu_buffer_alloc(npu_device_t* device, uint64_t size, uint32_t flags,
                              uint64_t fixed_va, npu_buffer_t** out) {
  return guarded("npu_buffer_alloc", [&]() -> npu_status_t {
    NPU_C_CHECK(device != nullptr && out != nullptr, "npu_buffer_alloc", "device or out is null");
    if ((flags & ~DRM_NPU_BO_FLAGS_VALID) != 0) {
      return fail("npu_buffer_alloc", EINVAL, "unknown flags " + std::to_string(flags));
    }
    if ((flags & DRM_NPU_BO_FIXED_VA) == 0 && fixed_va != 0) {
      return fail("npu_buffer_alloc", EINVAL, "fixed_va given without DRM_NPU_BO_FIXED_VA");
    }
    npu::BufferOptions options;
    options.device_read_only = (flags & DRM_NPU_BO_DEVICE_READ_ONLY) != 0;
    if ((flags & DRM_NPU_BO_FIXED_VA) != 0) options.fixed_va = fixed_va;
    auto b = npu::Buffer::allocate(device->device, size, options);
    if (!b) return fail("npu_buffer_alloc", b.error());
    *out = new (std::nothrow) npu_buffer{std::move(*b)};
    return *out != nullptr ? NPU_OK : fail("npu_buffer_alloc", ENOMEM, "out of host memory");
  });
}

npu_status_t npu_buffer_map(npu_buffer_t* buffer, void** ptr) {
  return guarded("npu_buffer_map", [&]() -> npu_status_t {
    NPU_C_CHECK(buffer != nullptr && ptr != nullptr, "npu_buffer_map", "buffer or ptr is null");
    auto m = buffer->buffer.map();
    if (!m) return fail("npu_buffer_map", m.error());
    *ptr = m->data();
    return NPU_OK;
  });
}

npu_status_t npu_buffer_wait_idle(npu_buffer_t* buffer, int64_t timeout_ns) {
  return guarded("npu_buffer_wait_idle", [&]() -> npu_status_t {
    NPU_C_CHECK(buffer != nullptr, "npu_buffer_wait_idle", "buffer is null");
    const auto timeout =
        timeout_ns < 0 ? std::chrono::nanoseconds::max() : std::chrono::nanoseconds(timeout_ns);
    auto r = buffer->buffer.wait_idle(timeout);
    if (!r) return fail("npu_buffer_wait_idle", r.error());
    return NPU_OK;
  });
}

npu_status_t npu_buffer_export(const npu_buffer_t* buffer, int* fd) {
  return guarded("npu_buffer_export", [&]() -> npu_status_t {
    NPU_C_CHECK(buffer != nullptr && fd != nullptr, "npu_buffer_export", "buffer or fd is null");
    auto e = buffer->buffer.export_fd();
    if (!e) return fail("npu_buffer_export", e.error());
    *fd = e->release();
    return NPU_OK;
  });
}

npu_status_t npu_buffer_import(npu_device_t* device, int fd, uint32_t flags, uint64_t fixed_va,
                               npu_buffer_t** out) {
  return guarded("npu_buffer_import", [&]() -> npu_status_t {
    NPU_C_CHECK(device != nullptr && out != nullptr, "npu_buffer_import", "device or out is null");
    if ((flags & ~DRM_NPU_BO_FLAGS_VALID) != 0) {
      return fail("npu_buffer_import", EINVAL, "unknown flags " + std::to_string(flags));
    }
    npu::BufferOptions options;
    options.device_read_only = (flags & DRM_NPU_BO_DEVICE_READ_ONLY) != 0;
    if ((flags & DRM_NPU_BO_FIXED_VA) != 0) options.fixed_va = fixed_va;
    auto b = device->device.import_buffer(fd, options);
    if (!b) return fail("npu_buffer_import", b.error());
    *out = new (std::nothrow) npu_buffer{std::move(*b)};
    return *out != nullptr ? NPU_OK : fail("npu_buffer_import", ENOMEM, "out of host memory");
  });
}

uint64_t npu_buffer_device_address(const npu_buffer_t* buffer) {
  return buffer != nullptr ? buffer->buffer.device_address() : 0;
}
uint64_t npu_buffer_size(const npu_buffer_t* buffer) {
  return buffer != nullptr ? buffer->buffer.size() : 0;
}
uint32_t npu_buffer_handle(const npu_buffer_t* buffer) {
  return buffer != nullptr ? buffer->buffer.handle() : 0;
}
void npu_buffer_free(npu_buffer_t* buffer) {
  delete buffer;
}

npu_status_t npu_context_create(npu_device_t* device, uint32_t priority, npu_context_t** out) {
  return guarded("npu_context_create", [&]() -> npu_status_t {
    NPU_C_CHECK(device != nullptr && out != nullptr, "npu_context_create", "device or out is null");
    auto c = npu::Context::create(device->device, static_cast<npu::Priority>(priority));
    if (!c) return fail("npu_context_create", c.error());
    *out = new (std::nothrow) npu_context{std::move(*c)};
    return *out != nullptr ? NPU_OK : fail("npu_context_create", ENOMEM, "out of host memory");
  });
}

uint32_t npu_context_id(const npu_context_t* context) {
  return context != nullptr ? context->context.id() : 0;
}

npu_status_t npu_context_banned(npu_context_t* context, int* banned) {
  return guarded("npu_context_banned", [&]() -> npu_status_t {
    NPU_C_CHECK(context != nullptr && banned != nullptr, "npu_context_banned",
                "context or banned is null");
    auto s = context->context.state();
    if (!s) return fail("npu_context_banned", s.error());
    *banned = s->banned ? 1 : 0;
    return NPU_OK;
  });
}

npu_status_t npu_context_event_fd(npu_context_t* context, int* fd) {
  return guarded("npu_context_event_fd", [&]() -> npu_status_t {
    NPU_C_CHECK(context != nullptr && fd != nullptr, "npu_context_event_fd",
                "context or fd is null");
    auto e = context->context.event_fd();
    if (!e) return fail("npu_context_event_fd", e.error());
    *fd = e->release();
    return NPU_OK;
  });
}

void npu_context_destroy(npu_context_t* context) {
  delete context;
}

npu_status_t npu_cmdbuf_create(npu_device_t* device, const void* bytes, size_t size,
                               npu_cmdbuf_t** out) {
  return guarded("npu_cmdbuf_create", [&]() -> npu_status_t {
    NPU_C_CHECK(device != nullptr && out != nullptr && (bytes != nullptr || size == 0),
                "npu_cmdbuf_create", "device, bytes or out is null");
    auto cb = npu::CommandBuffer::from_bytes(device->device,
                                             std::span(static_cast<const std::byte*>(bytes), size));
    *out = new (std::nothrow) npu_cmdbuf{std::move(cb)};
    return *out != nullptr ? NPU_OK : fail("npu_cmdbuf_create", ENOMEM, "out of host memory");
  });
}

npu_status_t npu_cmdbuf_use(npu_cmdbuf_t* cmdbuf, npu_buffer_t* buffer, uint32_t access) {
  return guarded("npu_cmdbuf_use", [&]() -> npu_status_t {
    NPU_C_CHECK(cmdbuf != nullptr && buffer != nullptr, "npu_cmdbuf_use",
                "cmdbuf or buffer is null");
    if (access == 0 || (access & ~uint32_t{DRM_NPU_ACCESS_READ | DRM_NPU_ACCESS_WRITE}) != 0) {
      return fail("npu_cmdbuf_use", EINVAL,
                  "bo " + std::to_string(buffer->buffer.handle()) + ": bad access bits " +
                      std::to_string(access));
    }
    cmdbuf->cmdbuf.use(buffer->buffer, static_cast<npu::Access>(access));
    return NPU_OK;
  });
}

void npu_cmdbuf_destroy(npu_cmdbuf_t* cmdbuf) {
  delete cmdbuf;
}

namespace {

// npu_cmdbuf_submit with in-fences (the caller's descriptors, dup()ed for the submit).
npu_status_t submit_after(const char* who, npu_context_t* context, npu_cmdbuf_t* cmdbuf,
                          uint32_t flags, const int* fences, size_t num_fences, npu_job_t** out) {
  NPU_C_CHECK(context != nullptr && cmdbuf != nullptr && out != nullptr, who,
              "context, cmdbuf or out is null");
  NPU_C_CHECK(fences != nullptr || num_fences == 0, who, "fences is null");
  if ((flags & ~(NPU_SUBMIT_SKIP_VALIDATION | NPU_SUBMIT_RACECHECK | NPU_SUBMIT_FENCE_OUT)) != 0) {
    return fail(who, EINVAL, "unknown flags " + std::to_string(flags));
  }
  std::vector<npu::Fence> after;
  for (size_t i = 0; i < num_fences; ++i) {
    const int fd = ::fcntl(fences[i], F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      return fail(
          who, EBADF,
          "in-fence " + std::to_string(i) + " (fd " + std::to_string(fences[i]) + ") is not open");
    }
    after.emplace_back(npu::UniqueFd(fd));
  }
  npu::FinalizeOptions options;
  options.skip_validation = (flags & NPU_SUBMIT_SKIP_VALIDATION) != 0;
  if (auto f = cmdbuf->cmdbuf.finalize(options); !f) return fail(who, f.error());
  auto job =
      context->context.submit(cmdbuf->cmdbuf, {.racecheck = (flags & NPU_SUBMIT_RACECHECK) != 0,
                                               .fence_out = (flags & NPU_SUBMIT_FENCE_OUT) != 0,
                                               .after = after});
  if (!job) return fail(who, job.error());
  *out = new (std::nothrow) npu_job{std::move(*job)};
  return *out != nullptr ? NPU_OK : fail(who, ENOMEM, "out of host memory");
}

}  // namespace

npu_status_t npu_cmdbuf_submit(npu_context_t* context, npu_cmdbuf_t* cmdbuf, uint32_t flags,
                               npu_job_t** out) {
  return guarded("npu_cmdbuf_submit", [&]() -> npu_status_t {
    return submit_after("npu_cmdbuf_submit", context, cmdbuf, flags, nullptr, 0, out);
  });
}

npu_status_t npu_cmdbuf_submit_after(npu_context_t* context, npu_cmdbuf_t* cmdbuf, uint32_t flags,
                                     const int* fences, size_t num_fences, npu_job_t** out) {
  return guarded("npu_cmdbuf_submit_after", [&]() -> npu_status_t {
    return submit_after("npu_cmdbuf_submit_after", context, cmdbuf, flags, fences, num_fences, out);
  });
}

npu_status_t npu_job_fence(const npu_job_t* job, int* fd) {
  return guarded("npu_job_fence", [&]() -> npu_status_t {
    NPU_C_CHECK(job != nullptr && fd != nullptr, "npu_job_fence", "job or fd is null");
    auto f = job->job.fence();
    if (!f) return fail("npu_job_fence", f.error());
    *fd = f->release();
    return NPU_OK;
  });
}

npu_status_t npu_fence_wait(const int* fences, size_t num_fences, uint32_t flags,
                            int64_t timeout_ns, size_t* first) {
  return guarded("npu_fence_wait", [&]() -> npu_status_t {
    NPU_C_CHECK(fences != nullptr && num_fences > 0, "npu_fence_wait", "no fences");
    NPU_C_CHECK((flags & ~NPU_FENCE_WAIT_ALL) == 0, "npu_fence_wait", "unknown flags");
    // Borrowed descriptors: the Fences are released (not closed) below.
    std::vector<npu::Fence> list;
    for (size_t i = 0; i < num_fences; ++i) list.emplace_back(npu::UniqueFd(fences[i]));
    const auto timeout = timeout_ns < 0 ? npu::Job::kForever : std::chrono::nanoseconds(timeout_ns);
    npu_status_t st = NPU_OK;
    if ((flags & NPU_FENCE_WAIT_ALL) != 0) {
      if (auto r = npu::wait_all(list, timeout); !r) st = fail("npu_fence_wait", r.error());
      if (st == NPU_OK && first != nullptr) *first = 0;
    } else if (auto r = npu::wait_any(list, timeout); !r) {
      st = fail("npu_fence_wait", r.error());
    } else if (first != nullptr) {
      *first = *r;
    }
    for (npu::Fence& f : list) f.release();
    return st;
  });
}

npu_status_t npu_fence_status(int fence, uint32_t* status) {
  return guarded("npu_fence_status", [&]() -> npu_status_t {
    NPU_C_CHECK(status != nullptr, "npu_fence_status", "status is null");
    npu::Fence f{npu::UniqueFd(fence)};
    auto r = f.status();
    f.release();  // borrowed
    if (!r) return fail("npu_fence_status", r.error());
    *status = static_cast<uint32_t>(*r);
    return NPU_OK;
  });
}

npu_status_t npu_submit(npu_context_t* context, const void* bytes, size_t size,
                        const npu_buffer_use_t* uses, size_t num_uses, uint32_t flags,
                        npu_job_t** out) {
  return guarded("npu_submit", [&]() -> npu_status_t {
    NPU_C_CHECK(context != nullptr && out != nullptr && (uses != nullptr || num_uses == 0),
                "npu_submit", "context, uses or out is null");
    NPU_C_CHECK(bytes != nullptr && size != 0, "npu_submit", "command buffer is empty");
    npu_cmdbuf cb{npu::CommandBuffer::from_bytes(
        context->context.device(), std::span(static_cast<const std::byte*>(bytes), size))};
    for (size_t i = 0; i < num_uses; ++i) {
      if (const npu_status_t st = npu_cmdbuf_use(&cb, uses[i].buffer, uses[i].access);
          st != NPU_OK) {
        return fail("npu_submit", t_errno, t_error.substr(sizeof("npu_cmdbuf_use: ") - 1));
      }
    }
    if (const npu_status_t st = npu_cmdbuf_submit(context, &cb, flags, out); st != NPU_OK) {
      return fail("npu_submit", t_errno, t_error.substr(sizeof("npu_cmdbuf_submit: ") - 1));
    }
    return NPU_OK;
  });
}

npu_status_t npu_job_wait(npu_job_t* job, int64_t timeout_ns, npu_job_result_t* result) {
  return guarded("npu_job_wait", [&]() -> npu_status_t {
    NPU_C_CHECK(job != nullptr && result != nullptr, "npu_job_wait", "job or result is null");
    const auto timeout = timeout_ns < 0 ? npu::Job::kForever : std::chrono::nanoseconds(timeout_ns);
    auto r = job->job.wait(timeout);
    if (!r) return fail("npu_job_wait", r.error());
    *result = {};
    result->status = static_cast<uint32_t>(r->status);
    result->fault.kind = r->fault.kind;
    result->fault.engine = r->fault.engine;
    result->fault.cmd_index = r->fault.cmd_index;
    result->fault.address = r->fault.address;
    result->submit_ns = r->submit_ns;
    result->start_ns = r->start_ns;
    result->end_ns = r->end_ns;
    result->cycles = r->cycles;
    return NPU_OK;
  });
}

npu_status_t npu_job_hazards(npu_job_t* job, npu_hazard_t* out, size_t capacity, size_t* count) {
  return guarded("npu_job_hazards", [&]() -> npu_status_t {
    NPU_C_CHECK(job != nullptr && count != nullptr && (out != nullptr || capacity == 0),
                "npu_job_hazards", "job, out or count is null");
    auto r = job->job.hazards();
    if (!r) return fail("npu_job_hazards", r.error());
    if (!r->checked) {
      return fail("npu_job_hazards", EINVAL,
                  "ctx " + std::to_string(job->job.context_id()) + " seqno " +
                      std::to_string(job->job.seqno()) +
                      ": the job was not submitted with NPU_SUBMIT_RACECHECK");
    }
    *count = static_cast<size_t>(r->total);
    const size_t n = std::min(capacity, r->hazards.size());
    for (size_t i = 0; i < n; ++i) {
      const npu::Hazard& h = r->hazards[i];
      out[i] = {static_cast<uint32_t>(h.kind),
                static_cast<uint32_t>(h.space),
                h.begin,
                h.end,
                h.first.cmd_index,
                h.second.cmd_index,
                h.first.engine,
                h.first.opcode,
                h.second.engine,
                h.second.opcode};
    }
    return NPU_OK;
  });
}

uint64_t npu_job_seqno(const npu_job_t* job) {
  return job != nullptr ? job->job.seqno() : 0;
}

void npu_job_release(npu_job_t* job) {
  delete job;
}

}  // extern "C"
