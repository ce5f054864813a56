// SectionBytes: the immutable bytes of one package section, either owned (a vector handed over
// by the compiler or a test) or a view of memory owned elsewhere (the mapped .npub file that
// read_package() parsed). Either way the object holds a shared reference to whatever backs the
// bytes, so the bytes stay valid for as long as this object or any copy of it lives: a Package,
// and every copy of it, can outlive the MappedFile, the buffer or the function it came from.
// Copies are cheap (they share the backing memory, which is never written through them); to
// change a section, assign it a new vector. Equality compares contents, never identity.
// Threading: like a const std::vector, safe to read from several threads at once.
// A view of a mapped file shares that file's pages: a file truncated or rewritten in place
// (rather than replaced, as write_package() does) while a view lives is undefined behaviour, as
// for any mmap'd file (SIGBUS on truncation).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace npu::format {

class SectionBytes {
 public:
  SectionBytes() = default;
  /// Owned bytes (implicit, so `Section{kind, name, std::move(vector)}` reads naturally).
  SectionBytes(std::vector<std::byte> bytes)  // NOLINT(google-explicit-constructor)
      : owner_(std::make_shared<const std::vector<std::byte>>(std::move(bytes))),
        bytes_(*static_cast<const std::vector<std::byte>*>(owner_.get())) {}
  /// A view of `bytes`, which `owner` keeps valid for as long as it is held.
  SectionBytes(std::span<const std::byte> bytes, std::shared_ptr<const void> owner)
      : owner_(std::move(owner)), bytes_(bytes) {}

  SectionBytes(const SectionBytes&) = default;
  SectionBytes& operator=(const SectionBytes&) = default;
  // A moved-from object is empty, never a view of memory it no longer keeps alive.
  SectionBytes(SectionBytes&& o) noexcept
      : owner_(std::move(o.owner_)), bytes_(std::exchange(o.bytes_, {})) {}
  SectionBytes& operator=(SectionBytes&& o) noexcept {
    owner_ = std::move(o.owner_);
    bytes_ = std::exchange(o.bytes_, {});
    return *this;
  }

  std::span<const std::byte> span() const { return bytes_; }
  const std::byte* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  const std::byte* begin() const { return bytes_.data(); }
  const std::byte* end() const { return bytes_.data() + bytes_.size(); }
  const std::byte& operator[](size_t i) const { return bytes_[i]; }
  std::vector<std::byte> to_vector() const { return {bytes_.begin(), bytes_.end()}; }

  /// What keeps the bytes alive (the owned vector or the view's owner); for tests.
  const std::shared_ptr<const void>& owner() const { return owner_; }

  bool operator==(const SectionBytes& o) const { return std::ranges::equal(bytes_, o.bytes_); }

 private:
  std::shared_ptr<const void> owner_;
  std::span<const std::byte> bytes_;
};

}  // namespace npu::format
