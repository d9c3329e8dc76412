// C++ unit tests for the core's building blocks (run by ctest).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cmath>

#include "core/errors.h"
#include "core/ops.h"

using namespace bm;

TEST_CASE("half conversion round-trips every finite half and rounds to nearest even") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t h = uint16_t(b);
    float f = half_bits_to_float(h);
    if (std::isnan(f)) continue;
    CHECK(float_to_half_bits(f) == h);
  }
  CHECK(float_to_half_bits(1.0f + 1.0f / 2048) == 0x3c00);  // tie -> even
  CHECK(float_to_half_bits(65520.0f) == 0x7c00);            // overflow -> inf
  CHECK(float_to_half_bits(5.9604645e-8f) == 0x0001);       // smallest subnormal
}

TEST_CASE("bfloat16 rounds to nearest even") {
  CHECK(float_to_bf16_bits(1.0f) == 0x3f80);
  CHECK(bf16_bits_to_float(float_to_bf16_bits(1.00390625f)) == 1.0f);  // tie -> even
  CHECK(std::isnan(bf16_bits_to_float(float_to_bf16_bits(NAN))));
}

TEST_CASE("type promotion follows torch") {
  CHECK(promote_types(DType::Int32, DType::Int64) == DType::Int64);
  CHECK(promote_types(DType::Int64, DType::Float16) == DType::Float16);
  CHECK(promote_types(DType::Float16, DType::BFloat16) == DType::Float32);
  CHECK(promote_types(DType::Bool, DType::Int32) == DType::Int32);
  auto x = full({2}, Scalar::from_int(1), DType::Int32, cpu_device());
  CHECK(result_type({Operand(x), Operand(Scalar::from_double(1.5))}) == DType::Float32);
  CHECK(result_type({Operand(x), Operand(Scalar::from_int(7))}) == DType::Int32);
  auto z = full({}, Scalar::from_double(1), DType::Float64, cpu_device());
  CHECK(result_type({Operand(x), Operand(z)}) == DType::Float64);  // 0-d of a higher category wins
  auto h = full({2}, Scalar::from_double(1), DType::Float16, cpu_device());
  CHECK(result_type({Operand(h), Operand(z)}) == DType::Float16);  // same category: dims win
}

TEST_CASE("broadcasting and its errors") {
  CHECK(broadcast_shapes("add", {3, 1}, {4}) == Shape{3, 4});
  CHECK_THROWS_AS(broadcast_shapes("add", {3}, {4}), ValueError);
}

TEST_CASE("views share storage and compute strides like torch") {
  auto t = full({2, 3, 4}, Scalar::from_double(0), DType::Float32, cpu_device());
  auto tt = transpose(t, 0, 2);
  CHECK(tt->strides == Shape{1, 4, 12});
  CHECK(tt->storage == t->storage);
  CHECK_THROWS_AS(view(tt, {24}), ValueError);
  auto r = reshape(tt, {24});
  CHECK(r->storage != t->storage);  // reshape copies when a view is impossible
  auto s = slice(t, 2, 1, std::nullopt, 2);
  CHECK(s->shape == Shape{2, 3, 2});
  CHECK(s->offset == 1);
  CHECK(s->strides == Shape{12, 4, 2});
  CHECK_THROWS_AS(select(t, 0, 2), IndexError);
  CHECK_THROWS_AS(normalize_dim("sum", 3, 3), IndexError);
}

TEST_CASE("allocation failures are errors, not crashes") {
  CHECK_THROWS_AS(empty_tensor({int64_t(1) << 62}, DType::Float32, cpu_device()), OutOfMemoryError);
  CHECK_THROWS_AS(empty_tensor({-1}, DType::Float32, cpu_device()), ValueError);
}

#include "philox.h"

TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors") {
  auto a = bm_philox4x32_10(0, 0, 0, 0, 0, 0);
  CHECK(a.v[0] == 0x6627e8d5u);
  CHECK(a.v[3] == 0x9b00dbd8u);
  auto b = bm_philox4x32_10(~0u, ~0u, ~0u, ~0u, ~0u, ~0u);
  CHECK(b.v[0] == 0x408f276du);
  CHECK(b.v[1] == 0x41c83b0eu);
  CHECK(b.v[2] == 0xa20bc7c6u);
  CHECK(b.v[3] == 0x6d5451fdu);
  auto c = bm_philox4x32_10(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u);
  CHECK(c.v[0] == 0xd16cfe09u);
  CHECK(c.v[1] == 0x94fdccebu);
  CHECK(c.v[2] == 0x5001e420u);
  CHECK(c.v[3] == 0x24126ea1u);
  CHECK(bm_uniform_f32(0xffffffffu) < 1.0f);
}

TEST_CASE("every core write into read-only storage is refused before it writes (the dispatcher's backstop)") {
  auto t = full({4}, Scalar::from_double(3), DType::Float32, cpu_device());
  auto src = full({4}, Scalar::from_double(1), DType::Float32, cpu_device());
  auto view = slice(t, 0, 1, std::nullopt, 2);  // views share the storage, and its flag
  const uint64_t version = t->storage->version;
  t->storage->readonly = true;
  // Core writers with no entry-point check of their own: only run_op_into stands between them and
  // the memory.
  CHECK_THROWS_WITH_AS(fill_into(t, Scalar::from_int(0)), doctest::Contains("[fill] cannot write into a read-only"), Error);
  CHECK_THROWS_AS(copy_into(view, slice(src, 0, 1, std::nullopt, 2)), Error);
  CHECK_THROWS_AS(run_op_into(OpId::add, {t, src}, OpArgs{}, t), Error);
  CHECK_THROWS_WITH_AS(check_inplace_target("add_", *view), doctest::Contains("[add_] cannot write"), Error);
  for (int i = 0; i < 4; ++i) CHECK(t->data<float>()[i] == 3.0f);
  CHECK(t->storage->version == version);
  t->storage->readonly = false;  // control: the same writes go through
  fill_into(t, Scalar::from_int(0));
  CHECK(t->data<float>()[0] == 0.0f);
  CHECK(t->storage->version == version + 1);
  // a zero stride over several elements: refused for elementwise in-place writes
  CHECK_THROWS_AS(check_inplace_target("add_", *expand(slice(t, 0, 0, 1, 1), {3})), ValueError);
}
