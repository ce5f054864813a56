// NoDestructor<T>: a T constructed in place and never destroyed, for the preload shim's
// process-wide state. The shim's hooks run inside other libraries' destructors and atexit
// handlers (a close() during exit), after ordinary statics would be gone; and after fork() the
// child must not destroy objects whose mutexes or condition variables other threads of the
// parent held. Reachable from static storage, so leak checkers do not report it.
#pragma once

#include <new>
#include <utility>

namespace npu::shim {

template <typename T>
class NoDestructor {
 public:
  template <typename... Args>
  explicit NoDestructor(Args&&... args) {
    ::new (static_cast<void*>(&storage_.value)) T(std::forward<Args>(args)...);
  }
  ~NoDestructor() = default;  // deliberately leaves value alive
  NoDestructor(const NoDestructor&) = delete;
  NoDestructor& operator=(const NoDestructor&) = delete;

  T& operator*() { return storage_.value; }
  T* operator->() { return &storage_.value; }

 private:
  union Storage {
    Storage() {}
    ~Storage() {}
    T value;
  } storage_;
};

}  // namespace npu::shim
