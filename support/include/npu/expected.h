// npu::Error and npu::Expected<T>: the project's one error policy. Fallible functions return
// Expected<T> (or Expected<void>), which is [[nodiscard]]; an Error carries an errno-style code
// and a lowercase message naming what was wrong and where (file, op, command index, field).
// Exceptions are not used for expected failures.
#pragma once

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace npu {

/// An error: errno-style code (EINVAL, ENOENT, ...) and a message saying what and where.
struct Error {
  int code = EINVAL;
  std::string message;
};

/// Builds an Error; the message is lowercase and has no trailing period.
inline Error make_error(int code, std::string message) {
  return Error{code, std::move(message)};
}

/// A value or an Error. Check with `if (!r)` and read `r.error()`; `*r` / `r->` on success.
template <typename T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }
  Error& error() { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

/// Expected<void>: success or an Error.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), ok_(false) {}

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }
  Error& error() { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

/// Success value for Expected<void>.
inline Expected<void> ok() {
  return {};
}

}  // namespace npu

/// Evaluates an Expected expression and returns its Error from the enclosing function.
#define NPU_TRY(expr)                                               \
  do {                                                              \
    if (auto npu_try_ = (expr); !npu_try_) return npu_try_.error(); \
  } while (0)
