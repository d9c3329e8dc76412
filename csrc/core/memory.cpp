#include "core/memory.h"

#include <algorithm>
#include <cstdio>

#include "core/errors.h"

namespace bm {

namespace {
thread_local const char* tls_op = nullptr;
}  // namespace

const char* current_op() { return tls_op; }

OpScope::OpScope(const char* name) {
  if (!tls_op && name) {
    tls_op = name;
    set_ = true;
  }
}

OpScope::~OpScope() {
  if (set_) tls_op = nullptr;
}

std::string format_bytes(uint64_t n) {
  static const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (n < 1024) return std::to_string(n) + " B";
  double v = double(n) / 1024;
  int u = 0;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.2f %s", v, units[u]);
  return buf;
}

std::string MemoryAccount::message(size_t block, size_t requested, const std::string& why) const {
  const char* op = current_op();
  std::string m = std::string("[") + (op ? op : "alloc") + "] out of memory on " + device_ + ": asked for " +
                  format_bytes(requested) + " (" + std::to_string(requested) + " bytes";
  if (block != requested) m += ", a block of " + std::to_string(block) + " bytes";
  m += ") with " + format_bytes(s_.allocated) + " in use; " + why;
  return m;
}

void MemoryAccount::set_device_name(const std::string& name) {
  std::lock_guard<std::mutex> lk(m_);
  device_ = name;
}

void MemoryAccount::reserve(size_t block, size_t requested) {
  std::lock_guard<std::mutex> lk(m_);
  if (s_.limit && (block > s_.limit || s_.allocated > s_.limit - block)) {
    ++s_.num_ooms;
    throw OutOfMemoryError(message(block, requested, "the limit is " + format_bytes(s_.limit) + " (" +
                                                         std::to_string(s_.limit) + " bytes, bm.set_memory_limit)"));
  }
  s_.allocated += block;
  s_.requested += requested;
  ++s_.num_allocs;
  s_.allocated_peak = std::max(s_.allocated_peak, s_.allocated);
  s_.requested_peak = std::max(s_.requested_peak, s_.requested);
  s_.reserved_peak = std::max(s_.reserved_peak, s_.allocated + s_.cached);
}

void MemoryAccount::unreserve(size_t block, size_t requested) {
  std::lock_guard<std::mutex> lk(m_);
  s_.allocated -= block;
  s_.requested -= requested;
  --s_.num_allocs;
}

void MemoryAccount::release(size_t block, size_t requested, bool to_cache) {
  std::lock_guard<std::mutex> lk(m_);
  s_.allocated -= block;
  s_.requested -= requested;
  ++s_.num_frees;
  if (to_cache) s_.cached += block;
}

void MemoryAccount::cache_hit(size_t block) {
  std::lock_guard<std::mutex> lk(m_);
  s_.cached -= block;
  ++s_.num_cache_hits;
}

void MemoryAccount::cache_dropped(size_t bytes) {
  std::lock_guard<std::mutex> lk(m_);
  s_.cached -= bytes;
}

bool MemoryAccount::cache_over_limit() const {
  std::lock_guard<std::mutex> lk(m_);
  return s_.limit && s_.cached && s_.allocated + s_.cached > s_.limit;
}

void MemoryAccount::count_retry() {
  std::lock_guard<std::mutex> lk(m_);
  ++s_.num_alloc_retries;
}

void MemoryAccount::system_refused(size_t block, size_t requested) {
  std::lock_guard<std::mutex> lk(m_);
  ++s_.num_ooms;
  throw OutOfMemoryError(message(block, requested, "the system has no more memory to give"));
}

MemoryStats MemoryAccount::stats() const {
  std::lock_guard<std::mutex> lk(m_);
  return s_;
}

void MemoryAccount::reset_peaks() {
  std::lock_guard<std::mutex> lk(m_);
  s_.allocated_peak = s_.allocated;
  s_.requested_peak = s_.requested;
  s_.reserved_peak = s_.allocated + s_.cached;
}

uint64_t MemoryAccount::set_limit(uint64_t bytes) {
  std::lock_guard<std::mutex> lk(m_);
  uint64_t old = s_.limit;
  s_.limit = bytes;
  return old;
}

}  // namespace bm
