// The indexing API from C++ (what autograd's rules call): TensorIndex lists, index / index_put_,
// index_select, index_add, nonzero, on the cpu and the simulator.
#include <doctest/doctest.h>

#include <vector>

#include "core/errors.h"
#include "core/ops_index.h"
#include "core/ops_math.h"

using namespace bm;

namespace {

TensorPtr iota(const Shape& shape, Device* dev) {
  return reshape(arange(Scalar::from_int(0), Scalar::from_int(shape_numel(shape)), Scalar::from_int(1), DType::Float32,
                        dev),
                 shape);
}

std::vector<float> values(const TensorPtr& t) {
  TensorPtr c = to_device(contiguous(t), cpu_device());
  wait_readable(*c);
  return std::vector<float>(c->data<float>(), c->data<float>() + c->numel());
}

TensorPtr ints(const std::vector<int64_t>& v, Device* dev) {
  return from_host(v.data(), {int64_t(v.size())}, {8}, DType::Int64, dev);
}

}  // namespace

TEST_CASE("index: basic indices are views, advanced ones gather with torch's placement") {
  for (Device* dev : available_devices()) {
    TensorPtr x = iota({2, 3, 4}, dev);
    TensorPtr v = index(x, {TensorIndex::from_int(1), TensorIndex::from_slice(std::nullopt, std::nullopt, 2)});
    CHECK_UNARY(v->storage == x->storage);
    CHECK(v->shape == Shape{2, 4});
    // x[[0, 1], :, [3, 0]]: separated advanced indices, their dims first
    TensorPtr g = index(x, {TensorIndex::from_tensor(ints({0, 1}, dev)), TensorIndex::from_slice({}, {}),
                            TensorIndex::from_tensor(ints({3, 0}, dev))});
    CHECK(g->shape == Shape{2, 3});
    CHECK(values(g) == std::vector<float>{3, 7, 11, 12, 16, 20});
    CHECK_THROWS_AS(index(x, {TensorIndex::from_int(2)}), IndexError);
  }
}

TEST_CASE("index_put_, index_add (duplicates accumulate in order) and nonzero") {
  for (Device* dev : available_devices()) {
    TensorPtr x = full({3, 2}, Scalar::from_double(0), DType::Float32, dev);
    index_put_(x, {TensorIndex::from_tensor(ints({2, 0, 2}, dev))}, Operand(Scalar::from_double(5)));
    CHECK(values(x) == std::vector<float>{5, 5, 0, 0, 5, 5});
    TensorPtr src = iota({3, 2}, dev);
    TensorPtr y = index_add(x, 0, ints({1, 1, 0}, dev), src);
    CHECK(values(y) == std::vector<float>{9, 10, 2, 4, 5, 5});
    TensorPtr nz = nonzero(binary(OpId::gt, y, Scalar::from_int(8)));
    CHECK(nz->shape == Shape{2, 2});
    CHECK(index_values_on_host(*nz) == std::vector<int64_t>{0, 0, 0, 1});
    CHECK_THROWS_AS(floor_divide(ints({1}, dev), Scalar::from_int(0)), ZeroDivisionError);
  }
}
