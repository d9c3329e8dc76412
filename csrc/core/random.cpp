#include "core/random.h"

#include <algorithm>
#include <limits>
#include <map>
#include <type_traits>
#include <vector>

#include "core/errors.h"
#include "core/ops.h"
#include "philox.h"  // shaders/philox.h: randperm's words, as the kernels compute them

namespace bm {

namespace {
std::mutex g_gens_m;
std::map<Device*, Generator*>& gens() {
  static auto* m = new std::map<Device*, Generator*>();  // leaked: generators live for the process
  return *m;
}

void draw(OpId op, const TensorPtr& out, double a, double b, Generator* gen, const char* name) {
  if (!gen) gen = &default_generator(out->device());
  if (gen->device != out->device())
    throw DeviceMismatchError(std::string("[") + name + "] generator is on " + gen->device->name + ", output on " +
                              out->device()->name);
  if (!is_floating(out->dtype))
    throw UnsupportedError(std::string("[") + name + "] expected a floating point output, got " + dtype_name(out->dtype));
  check_inplace_target(name, *out);  // before the generator's counter moves
  OpArgs args;
  args.s0 = Scalar::from_double(a);
  args.s1 = Scalar::from_double(b);
  args.out_dtype = out->dtype;
  // float64 takes two 32-bit words per value, the other dtypes one.
  auto [seed, first] = gen->reserve(out->dtype == DType::Float64 ? 2 * out->numel() : out->numel());
  args.seed = seed;
  args.rng_offset = first;
  run_op_into(op, {}, args, out);
}
}  // namespace

Generator& default_generator(Device* d) {
  std::lock_guard<std::mutex> lk(g_gens_m);
  Generator*& g = gens()[d];
  if (!g) g = new Generator(d);
  return *g;
}

void manual_seed_all(uint64_t seed) {
  for (Device* d : available_devices()) default_generator(d).manual_seed(seed);
}

void uniform_(const TensorPtr& out, double low, double high, Generator* gen) {
  if (!(low <= high)) throw ValueError("[uniform_] expected low <= high, got " + std::to_string(low) + " and " + std::to_string(high));
  draw(OpId::uniform, out, low, high, gen, "uniform_");
}

void normal_(const TensorPtr& out, double mean, double std, Generator* gen) {
  if (!(std >= 0)) throw ValueError("[normal_] expected std >= 0, got " + std::to_string(std));
  draw(OpId::normal, out, mean, std, gen, "normal_");
}

void randint_(const TensorPtr& out, int64_t low, int64_t high, Generator* gen) {
  if (!(low < high))
    throw ValueError("[randint] expected low < high, got low=" + std::to_string(low) + " and high=" + std::to_string(high));
  if (out->dtype == DType::Bool)
    throw UnsupportedError("[randint] dtype bool is not supported (supported: integer and floating dtypes)");
  if (is_integral(out->dtype)) {
    visit_dtype(out->dtype, [&](auto v) {
      using T = decltype(v);
      if constexpr (std::is_integral_v<T>) {
        using lim = std::numeric_limits<T>;
        if (low < int64_t(lim::lowest()) || high - 1 > int64_t(lim::max()))
          throw ValueError("[randint] the range [" + std::to_string(low) + ", " + std::to_string(high) +
                           ") does not fit in " + dtype_name(out->dtype));
      }
    });
  }
  if (!gen) gen = &default_generator(out->device());
  if (gen->device != out->device())
    throw DeviceMismatchError("[randint] generator is on " + gen->device->name + ", output on " + out->device()->name);
  check_inplace_target("randint", *out);  // before the generator's counter moves
  OpArgs args;
  args.s0 = Scalar::from_int(low);
  args.s1 = Scalar::from_int(high);
  args.out_dtype = out->dtype;
  const bool wide = uint64_t(high) - uint64_t(low) > (uint64_t(1) << 32);
  auto [seed, first] = gen->reserve(wide ? 2 * out->numel() : out->numel());
  args.seed = seed;
  args.rng_offset = first;
  run_op_into(OpId::randint, {}, args, out);
}

TensorPtr randperm(int64_t n, DType dtype, Device* device, Generator* gen) {
  if (n < 0) throw ValueError("[randperm] n must be non-negative, got " + std::to_string(n));
  if (dtype == DType::Bool) throw UnsupportedError("[randperm] dtype bool is not supported");
  if (is_integral(dtype) && n > 0) {
    visit_dtype(dtype, [&](auto v) {
      using T = decltype(v);
      if constexpr (std::is_integral_v<T>)
        if (n - 1 > int64_t(std::numeric_limits<T>::max()))
          throw ValueError("[randperm] n = " + std::to_string(n) + " is too large for " + dtype_name(dtype));
    });
  }
  if (!gen) gen = &default_generator(device);
  if (gen->device != device)
    throw DeviceMismatchError("[randperm] generator is on " + gen->device->name + ", output on " + device->name);
  auto [seed, first] = gen->reserve(n);
  std::vector<int64_t> perm(size_t(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < n; ++i) perm[size_t(i)] = i;
  // Position i (from the end) swaps with j = word i mod (i + 1); word i is word i % 4 of block first + i / 4.
  bm_philox_out block{};
  for (int64_t i = n - 1; i > 0; --i) {
    if (i == n - 1 || i % 4 == 3) block = bm_philox_block(seed, first + uint64_t(i / 4));
    int64_t j = int64_t(uint64_t(block.v[i % 4]) % uint64_t(i + 1));
    std::swap(perm[size_t(i)], perm[size_t(j)]);
  }
  TensorPtr t = from_host(perm.data(), Shape{n}, Shape{int64_t(sizeof(int64_t))}, DType::Int64, device);
  return dtype == DType::Int64 ? t : cast(t, dtype);
}

}  // namespace bm
