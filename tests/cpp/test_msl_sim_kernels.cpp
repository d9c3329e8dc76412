// Kernels shaped like the Metal backend's (tests/msl_sim/realistic.metal) give the numbers a
// straightforward CPU computation gives: a tiled matmul with 2-d threadgroup tiles and edge
// tiles, and a row softmax built on simd + threadgroup block reductions.
#include <doctest/doctest.h>

#include <cmath>

#include "core/half.h"
#include "sim_helpers.h"

using namespace bm;
using test::Sim;
using test::size3;

namespace {
std::vector<double> matmul_ref(const std::vector<float>& a, const std::vector<float>& b, uint32_t M, uint32_t K,
                               uint32_t N) {
  std::vector<double> c(M * N, 0.0);
  for (uint32_t i = 0; i < M; ++i)
    for (uint32_t k = 0; k < K; ++k)
      for (uint32_t j = 0; j < N; ++j) c[i * N + j] += double(a[i * K + k]) * b[k * N + j];
  return c;
}
}  // namespace

TEST_CASE("msl-sim kernels: tiled matmul with partial edge tiles, float and half") {
  Sim s;
  const uint32_t M = 37, K = 50, N = 23, T = 16;
  std::vector<float> a(M * K), b(K * N);
  for (uint32_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 7 % 13) - 6) / 8.0f;
  for (uint32_t i = 0; i < b.size(); ++i) b[i] = float(int(i * 5 % 11) - 5) / 4.0f;
  uint32_t dims[3] = {M, K, N};
  auto ref = matmul_ref(a, b, M, K, N);

  auto A = s.buffer(a), B = s.buffer(b), C = s.zeros(M * N * 4);
  auto& e = s.encode("matmul_tiled_float");
  e.set_buffer(A, 0, 0);
  e.set_buffer(B, 0, 1);
  e.set_buffer(C, 0, 2);
  e.set_bytes(dims, sizeof dims, 3);
  e.dispatch_threadgroups(size3((N + T - 1) / T, (M + T - 1) / T), size3(T, T));
  s.run();
  auto c = Sim::read<float>(C);
  for (uint32_t i = 0; i < M * N; ++i) REQUIRE(c[i] == doctest::Approx(ref[i]).epsilon(1e-6));

  // The half instantiation: inputs exactly representable, accumulation in float, one rounding.
  std::vector<half_t> ah(a.begin(), a.end()), bh(b.begin(), b.end());
  auto Ah = s.buffer(ah), Bh = s.buffer(bh), Ch = s.zeros(M * N * 2);
  auto& h = s.encode("matmul_tiled_half");
  h.set_buffer(Ah, 0, 0);
  h.set_buffer(Bh, 0, 1);
  h.set_buffer(Ch, 0, 2);
  h.set_bytes(dims, sizeof dims, 3);
  h.dispatch_threadgroups(size3((N + T - 1) / T, (M + T - 1) / T), size3(T, T));
  s.run();
  auto ch = Sim::read<half_t>(Ch);
  for (uint32_t i = 0; i < M * N; ++i) REQUIRE(ch[i].bits == half_t(float(ref[i])).bits);
}

TEST_CASE("msl-sim kernels: row softmax through simd and threadgroup block reductions") {
  Sim s;
  for (uint32_t cols : {5u, 100u, 1000u}) {
    for (uint32_t tg : {32u, 96u}) {  // one or three simdgroups per row
      const uint32_t rows = 3;
      std::vector<float> x(rows * cols);
      for (uint32_t i = 0; i < x.size(); ++i) x[i] = float(int(i * 37 % 101) - 50) / 7.0f;
      auto X = s.buffer(x), Y = s.zeros(x.size() * 4);
      auto& e = s.encode("softmax_rows_float");
      e.set_buffer(X, 0, 0);
      e.set_buffer(Y, 0, 1);
      e.set_bytes(&cols, 4, 2);
      e.dispatch_threadgroups(size3(rows), size3(tg));
      s.run();
      auto y = Sim::read<float>(Y);
      for (uint32_t r = 0; r < rows; ++r) {
        double m = -INFINITY, sum = 0;
        for (uint32_t i = 0; i < cols; ++i) m = std::max(m, double(x[r * cols + i]));
        for (uint32_t i = 0; i < cols; ++i) sum += std::exp(double(x[r * cols + i]) - m);
        for (uint32_t i = 0; i < cols; ++i) {
          INFO("cols " << cols << " tg " << tg << " row " << r << " col " << i);
          REQUIRE(y[r * cols + i] == doctest::Approx(std::exp(double(x[r * cols + i]) - m) / sum).epsilon(1e-5));
        }
      }
    }
  }
}
