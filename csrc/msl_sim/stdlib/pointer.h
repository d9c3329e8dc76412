// Checked pointers and parameter binding for simulated kernels.
// The pre-pass turns every `device T*` / `threadgroup T*` into ptr<T> and every
// `const device T*` / `constant T*` into cptr<T>. A checked pointer carries the Region it points
// into; each dereference checks the access lies inside it, so an out-of-bounds read or write is an
// IndexError naming the kernel, the buffer index and the thread instead of silent corruption.
// ptr<T> derives from cptr<T> so a template `f(const device T* p)` still deduces T from a ptr.
#pragma once
#include <cstddef>
#include <type_traits>

#include "msl_sim/abi.h"
#include "msl_sim/stdlib/vec.h"

namespace metal {
template <class T>
struct _atomic;
}

namespace bm::msl {

// An index that remembers where it was written: `p[i]` converts i to an Index at the call site,
// so the default arguments name the kernel's source line (the pre-pass keeps #line markers) and
// the race detector can say where each access happened.
struct Index {
  ptrdiff_t i;
  const char* file;
  int line;
  template <class I, std::enable_if_t<std::is_constructible_v<ptrdiff_t, I>, int> = 0>
  Index(I v, const char* f = __builtin_FILE(), int l = __builtin_LINE()) : i(ptrdiff_t(v)), file(f), line(l) {}
};

template <class T>
class cptr;
template <class T>
class ptr;

namespace detail {
template <class T>
struct is_atomic : std::false_type {};
template <class T>
struct is_atomic<metal::_atomic<T>> : std::true_type {};
}  // namespace detail

template <class T>
class cptr {
 public:
  using element_type = T;
  cptr() = default;
  cptr(std::nullptr_t) {}
  cptr(T* p, const Region* r) : p_(p), r_(r) {}
  // A raw pointer (`&buf[i]`, a decayed threadgroup array) finds its region again.
  cptr(const T* raw) : p_(const_cast<T*>(raw)), r_(find_region(raw)) {}
  // Reinterpretation, as MSL's `(const device float4*)p`: explicit, keeps the region.
  template <class U, std::enable_if_t<!std::is_same_v<U, T>, int> = 0>
  explicit cptr(const cptr<U>& o) : p_((T*)(o.raw())), r_(o.region()) {}

  // A row of a multi-dimensional threadgroup array (`As[i][k]`) is a checked pointer itself, so
  // each element access is checked and recorded on its own.
  decltype(auto) operator[](Index i) const {
    if constexpr (std::is_array_v<T>) return cptr<std::remove_extent_t<T>>(*row(p_ + i.i), r_);
    else return static_cast<const T&>(*check(p_ + i.i, kTrackReadOnly, i.file, i.line));
  }
  const T& operator*() const { return *check(p_, kTrackReadOnly, nullptr, 0); }
  const T* operator->() const { return check(p_, kTrackReadOnly, nullptr, 0); }
  cptr operator+(ptrdiff_t i) const { return cptr(p_ + i, r_); }
  cptr operator-(ptrdiff_t i) const { return cptr(p_ - i, r_); }
  friend cptr operator+(ptrdiff_t i, const cptr& p) { return p + i; }
  cptr& operator+=(ptrdiff_t i) { p_ += i; return *this; }
  cptr& operator-=(ptrdiff_t i) { p_ -= i; return *this; }
  cptr& operator++() { ++p_; return *this; }
  cptr& operator--() { --p_; return *this; }
  cptr operator++(int) { cptr t = *this; ++p_; return t; }
  cptr operator--(int) { cptr t = *this; --p_; return t; }
  ptrdiff_t operator-(const cptr& o) const { return p_ - o.p_; }
  bool operator==(const cptr& o) const { return p_ == o.p_; }
  bool operator!=(const cptr& o) const { return p_ != o.p_; }
  bool operator<(const cptr& o) const { return p_ < o.p_; }
  bool operator<=(const cptr& o) const { return p_ <= o.p_; }
  bool operator>(const cptr& o) const { return p_ > o.p_; }
  bool operator>=(const cptr& o) const { return p_ >= o.p_; }
  explicit operator bool() const { return p_ != nullptr; }

  T* raw() const { return p_; }
  const Region* region() const { return r_; }

 protected:
  void bounds(T* q) const {
    if (r_) {
      const char* a = reinterpret_cast<const char*>(q);
      if (a < r_->base || size_t(a - r_->base) + sizeof(T) > r_->length) fail_out_of_bounds(*r_, q, sizeof(T));
    } else if (!q) {
      fail_null_pointer(sizeof(T));
    }
  }
  // Bounds-checks an access and, when the race detector tracks this kind of access to the region,
  // records it. MSL allows nothing but atomic functions on atomic types, so those accesses are
  // atomic ones.
  T* check(T* q, uint8_t how, const char* file, int line) const {
    bounds(q);
    if (r_ && (r_->track & how)) {
      RaceLog* log = r_->log;
      if (sizeof(T) <= sizeof(RaceEntry::found) && !detail::is_atomic<T>::value && log->next != log->end) {
        RaceEntry* e = log->next++;
        e->region = r_;
        e->addr = reinterpret_cast<const char*>(q);
        e->file = file;
        e->line = line;
        e->size = uint32_t(sizeof(T));
        e->kind = Access::Plain;
        __builtin_memcpy(e->found, static_cast<const void*>(q), sizeof(T));
      } else {
        race_note(*r_, q, sizeof(T), detail::is_atomic<T>::value ? Access::Atomic : Access::Plain, file, line);
      }
    }
    return q;
  }
  T* row(T* q) const {
    bounds(q);
    return q;
  }
  T* p_ = nullptr;
  const Region* r_ = nullptr;
};

template <class T>
class ptr : public cptr<T> {
  using base = cptr<T>;

 public:
  ptr() = default;
  ptr(std::nullptr_t) {}
  ptr(T* p, const Region* r) : base(p, r) {}
  ptr(T* raw) : base(raw) {}
  template <class U, std::enable_if_t<!std::is_same_v<U, T>, int> = 0>
  explicit ptr(const ptr<U>& o) : base(static_cast<T*>(static_cast<void*>(o.raw())), o.region()) {}

  decltype(auto) operator[](Index i) const {
    if constexpr (std::is_array_v<T>) return ptr<std::remove_extent_t<T>>(*this->row(this->p_ + i.i), this->r_);
    else return static_cast<T&>(*this->check(this->p_ + i.i, kTrackWritable, i.file, i.line));
  }
  T& operator*() const { return *this->check(this->p_, kTrackWritable, nullptr, 0); }
  T* operator->() const { return this->check(this->p_, kTrackWritable, nullptr, 0); }
  ptr operator+(ptrdiff_t i) const { return ptr(this->p_ + i, this->r_); }
  ptr operator-(ptrdiff_t i) const { return ptr(this->p_ - i, this->r_); }
  friend ptr operator+(ptrdiff_t i, const ptr& p) { return p + i; }
  using base::operator-;
  ptr& operator+=(ptrdiff_t i) { this->p_ += i; return *this; }
  ptr& operator-=(ptrdiff_t i) { this->p_ -= i; return *this; }
  ptr& operator++() { ++this->p_; return *this; }
  ptr& operator--() { --this->p_; return *this; }
  ptr operator++(int) { ptr t = *this; ++this->p_; return t; }
  ptr operator--(int) { ptr t = *this; --this->p_; return t; }
};

// reinterpret_cast<device T*>(p), rewritten by the pre-pass.
template <class P, class Q>
P ptr_cast(const Q& q) {
  if constexpr (std::is_pointer_v<Q>) return P(reinterpret_cast<typename P::element_type*>(q));
  else return P(q);
}

template <class T>
struct is_checked_ptr : std::false_type {};
template <class T>
struct is_checked_ptr<ptr<T>> : std::true_type {};
template <class T>
struct is_checked_ptr<cptr<T>> : std::true_type {};

// `threadgroup T name[N];` in a kernel body becomes a static slot plus per-group storage.
struct TgSlot {
  template <class T, size_t N>
  ptr<T> array(const char* name) {
    check<T>();
    const Region& r = threadgroup_variable(this, sizeof(T) * N, alignof(T), name);
    return ptr<T>(reinterpret_cast<T*>(r.base), &r);
  }
  template <class T>
  T& scalar(const char* name) {
    check<T>();
    return *reinterpret_cast<T*>(threadgroup_variable(this, sizeof(T), alignof(T), name).base);
  }

 private:
  template <class T>
  static void check() {
    static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>,
                  "threadgroup variables must be trivial types (MSL does not run constructors)");
  }
};

// ---- binding kernel parameters (used by generated trampolines) ----
template <class P>
struct Binder;
template <class T>
struct Binder<ptr<T>> {
  static ptr<T> from(const Region& r) { return ptr<T>(reinterpret_cast<T*>(r.base), &r); }
};
template <class T>
struct Binder<cptr<T>> {
  static cptr<T> from(const Region& r) { return cptr<T>(reinterpret_cast<T*>(r.base), &r); }
};
template <class T>
struct Binder<T&> {
  static T& from(const Region& r) {
    if (r.length < sizeof(T)) fail_out_of_bounds(r, r.base, sizeof(T));
    return *reinterpret_cast<T*>(r.base);
  }
};

template <class P>
P bind_buffer(int index) {
  return Binder<std::remove_cv_t<P>>::from(bound_buffer(index));
}
template <class P>
P bind_threadgroup(int index) {
  return Binder<std::remove_cv_t<P>>::from(bound_threadgroup(index));
}

// Thread-position attributes as uint, uint2, uint3, ushort2...
template <class P>
std::remove_cv_t<P> attr(const Dim3& d) {
  using T = std::remove_cv_t<P>;
  if constexpr (metal::detail::is_vec_v<T>) {
    if constexpr (T::size == 2) return T(d.x, d.y);
    else if constexpr (T::size == 3) return T(d.x, d.y, d.z);
    else static_assert(T::size < 4, "thread position attributes have at most 3 components");
  } else {
    return T(d.x);
  }
}
template <class P>
std::remove_cv_t<P> attr(uint32_t v) {
  return std::remove_cv_t<P>(v);
}

}  // namespace bm::msl
