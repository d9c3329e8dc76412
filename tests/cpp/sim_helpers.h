// Helpers for tests that run kernels through the simulator's runtime (runtime.h).
#pragma once
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "metal/runtime.h"

namespace bm::test {

struct Sim {
  std::unique_ptr<metal::Runtime> rt = metal::make_sim_runtime();
  std::unique_ptr<metal::CommandBuffer> cb;

  template <class T>
  std::shared_ptr<metal::Buffer> buffer(const std::vector<T>& v) {
    auto b = rt->new_buffer(v.size() * sizeof(T));
    std::memcpy(b->contents(), v.data(), v.size() * sizeof(T));
    return b;
  }
  std::shared_ptr<metal::Buffer> zeros(size_t bytes) { return rt->new_buffer(bytes); }

  template <class T>
  static std::vector<T> read(const std::shared_ptr<metal::Buffer>& b) {
    std::vector<T> v(b->length() / sizeof(T));
    std::memcpy(v.data(), b->contents(), v.size() * sizeof(T));
    return v;
  }

  // A fresh command buffer's encoder with `kernel`'s pipeline set.
  metal::ComputeEncoder& encode(const std::string& kernel) {
    cb = rt->new_command_buffer();
    metal::ComputeEncoder& e = cb->compute_encoder();
    e.set_pipeline(rt->pipeline(kernel));
    return e;
  }
  void run() {
    cb->commit();
    cb->wait_until_completed();
  }
};

inline metal::Size3 size3(uint64_t w, uint64_t h = 1, uint64_t d = 1) { return metal::Size3{w, h, d}; }

}  // namespace bm::test
