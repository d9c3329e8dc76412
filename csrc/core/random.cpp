#include "core/random.h"

#include <map>

#include "core/errors.h"
#include "core/ops.h"

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

}  // namespace bm
