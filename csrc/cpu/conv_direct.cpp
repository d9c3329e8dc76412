// float32 convolutions (one group) without unfolding: the product kernel reads each tap's inputs
// in place from a copy of the input that is zero-padded and split into stride phases, so the
// 7x7 stride-2 stem of a ResNet (147 taps, each input read 12 times by im2col) writes no column
// matrix at all. The filters are conv2d_panel_gemm's cached panels; each output is its products
// added in tap order, one FMA each: the same bits as the unfolding path.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/parallel.h"
#include "cpu/conv_common.h"
#include "cpu/conv_gemm.h"
#include "cpu/conv_winograd.h"

namespace bm::cpu {

using namespace conv_impl;

namespace {

// The phase planes. Padded input row yy = R yr + fy and column xx = S i + fx (R, S the strides)
// is q[n][c][fy][fx][yr][i], rows Wq floats long. Output (oy, ox) of tap (ky, kx) then reads
// phase ((ky dh) % R, (kx dw) % S) at row oy + (ky dh) / R and column ox + (kx dw) / S: a fixed
// offset per tap from the output's own index oy Wq + ox. Outputs are computed on that flattened
// index, so a chunk of consecutive outputs is consecutive floats of every tap even across output
// rows; the Wq - OW columns past each row's end are computed and dropped.
struct Phases {
  int64_t R, S, Hr, Wq, sub, plane, img;
  explicit Phases(const Geom& g)
      : R(g.sh), S(g.sw), Hr(g.OH + (g.KH - 1) * g.dh / g.sh), Wq(g.OW + (g.KW - 1) * g.dw / g.sw),
        sub(Hr * Wq), plane(R * S * sub), img(g.C * plane) {}
};

}  // namespace

bool direct_applies(const Geom& g) {
  // Output rows of at least 48 columns: with fewer, more of each row's products are dropped and
  // the unfolding path wins. The tap offsets must fit the kernel's 32-bit table.
  if (g.G != 1 || g.O <= 2 || g.OW < 48) return false;
  const Phases ph(g);
  return ph.img + 64 < (int64_t(1) << 31);
}

void conv2d_direct(const float* x, const Geom& g, const float* wm, const float* bias, float* out, const int64_t* os,
                   FilterOrigin origin) {
  const WinogradKernels& k = winograd_kernels();
  const int64_t O = g.O, K = g.K, OP = (O + kPanelRows - 1) / kPanelRows, W2 = k.direct_cols;
  const std::shared_ptr<const PackedFilters> filters = panel_filters(wm, O, K, origin);
  const float* a = filters->packed.data();
  const Phases ph(g);
  const int64_t R = ph.R, S = ph.S, Wq = ph.Wq;

  // The last chunk of the last image reads up to W2 floats past the planes: zeros.
  Scratch<float> q(g.N * ph.img + W2 + Wq);
  std::fill(q.p + g.N * ph.img, q.p + g.N * ph.img + W2 + Wq, 0.0f);
  const int64_t rows = g.N * g.C * R * ph.Hr;  // (n, c, fy, yr)
  parallel_for(0, rows, std::max<int64_t>(1, 4096 / (S * Wq)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / (g.C * R * ph.Hr), c = r / (R * ph.Hr) % g.C, fy = r / ph.Hr % R, yr = r % ph.Hr;
      const int64_t y = R * yr + fy - g.ph;
      const float* src = y >= 0 && y < g.H ? x + n * g.xs[0] + c * g.xs[1] + y * g.xs[2] : nullptr;
      for (int64_t fx = 0; fx < S; ++fx) {
        float* d = q.p + n * ph.img + c * ph.plane + (fy * S + fx) * ph.sub + yr * Wq;
        // i in [lo, hi) reads input column S i + fx - pw; zeros around it.
        int64_t lo = Wq, hi = Wq;
        if (src) valid_range(Wq, g.W, S, g.pw, fx, &lo, &hi);
        lo = std::min(lo, Wq), hi = std::max(lo, hi);
        std::fill(d, d + lo, 0.0f);
        std::fill(d + hi, d + Wq, 0.0f);
        if (lo < hi) store_run(d + lo, src + (S * lo + fx - g.pw) * g.xs[3], S * g.xs[3], hi - lo);
      }
    }
  });
  // off[kk], kk = (c, ky, kx): where tap kk reads, from output index 0 of the image.
  std::vector<int32_t> off(static_cast<size_t>(K));
  for (int64_t kk = 0; kk < K; ++kk) {
    const int64_t c = kk / (g.KH * g.KW), ky = kk / g.KW % g.KH, kx = kk % g.KW;
    const int64_t fy = ky * g.dh % R, fx = kx * g.dw % S;
    off[size_t(kk)] = int32_t(c * ph.plane + (fy * S + fx) * ph.sub + ky * g.dh / R * Wq + kx * g.dw / S);
  }

  // One task: W2 consecutive flattened outputs of one image against every filter panel (which
  // stay in cache); the outputs of the row ends are dropped.
  const int64_t J = (g.OH - 1) * Wq + g.OW, chunks = (J + W2 - 1) / W2, tasks = g.N * chunks;
  parallel_for(0, tasks, 1, [&](int64_t t0, int64_t t1) {
    float acc[kPanelRows * 32];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t n = t / chunks, j0 = t % chunks * W2, j1 = std::min(J, j0 + W2);
      const float* base = q.p + n * ph.img + j0;
      for (int64_t op = 0; op < OP; ++op) {
        k.direct_product(a + op * K * kPanelRows, base, off.data(), K, acc, W2);
        const int64_t nrows = std::min<int64_t>(kPanelRows, O - op * kPanelRows);
        for (int64_t j = j0; j < j1;) {  // one output row's run at a time
          const int64_t oy = j / Wq, ox = j % Wq;
          if (ox >= g.OW) {
            j = (oy + 1) * Wq;
            continue;
          }
          const int64_t len = std::min(j1 - j, g.OW - ox);
          for (int64_t r = 0; r < nrows; ++r) {
            const int64_t o = op * kPanelRows + r;
            const float bv = bias ? bias[o] : 0.0f;
            const float* src = acc + r * W2 + (j - j0);
            float* d = out + n * os[0] + o * os[1] + oy * os[2] + ox * os[3];
            if (os[3] == 1) {
              for (int64_t i = 0; i < len; ++i) d[i] = src[i] + bv;
            } else {
              for (int64_t i = 0; i < len; ++i) d[i * os[3]] = src[i] + bv;
            }
          }
          j += len;
        }
      }
    }
  });
}

}  // namespace bm::cpu
