// float32 convolutions (one group) without unfolding: the kernel (conv_direct_kernels.h) keeps a
// block of output channels in its vectors and broadcasts each input pixel it needs straight from
// the input, so no column matrix is written; an unfolding writes every input KH KW / (sh sw)
// times (2.25 times for a 3x3 stride-2 conv, 12 times for a 7x7 stride-2 stem), and its
// bookkeeping per run of an output row cost a quarter of the stride-2 convs' time. Padding comes
// from one zero-padded copy of the input (none without padding: the input is read in place).
// Each output is its products added in tap order, one FMA each: the same bits as the unfolding
// path (conv_gemm.cpp).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/parallel.h"
#include "cpu/conv_common.h"
#include "cpu/conv_gemm.h"
#include "cpu/conv_winograd.h"

namespace bm::cpu {

using namespace conv_impl;

namespace {

constexpr int kDirectFilters = 3;  // conv_pack_cache.h: this file's kind of entry

// The input the kernel reads: rows along W at unit stride, channel c of image n at
// image(n) + c s[1], output pixel (oy, ox) of tap (ky, kx) at row oy sh + ky dh and column
// ox sw + kx dw of that plane. Without padding that is x itself; with padding a copy whose planes
// start at row -ph and column -pw and hold the zeros, only as many rows and columns as are read.
// The copy is made an image at a time by the thread that reads it, into a few slots of its own
// that it reuses (DirectImages), so it is written to and read from that core's cache; a copy of
// the whole batch before the kernel ran went out to memory and came back. 3-6% on ResNet's 3x3
// stride-2 convs at batch 8 on an Intel Xeon, one thread (old and new builds alternated); the
// copy's reads of the input still cost: the same convs on an input padded by the caller ran
// 2-16% faster (layer4.0 to layer2.0).
struct DirectInput {
  const float* x;
  const Geom& g;
  bool padded = false;
  int64_t s[3] = {0, 0, 0};  // image, channel, row strides (the column stride is 1)
  int64_t Hp = 0, Wp = 0, lo = 0, hi = 0;  // padded rows and columns; columns [lo, hi) hold input

  static int64_t padded_cols(const Geom& g) { return (g.OW - 1) * g.sw + (g.KW - 1) * g.dw + 1; }

  DirectInput(const float* x_, const Geom& g_) : x(x_), g(g_), padded(g_.ph != 0 || g_.pw != 0) {
    if (!padded) {
      s[0] = g.xs[0], s[1] = g.xs[1], s[2] = g.xs[2];
      return;
    }
    Hp = direct_padded_rows(g), Wp = padded_cols(g);
    s[2] = Wp, s[1] = Hp * Wp, s[0] = g.C * Hp * Wp;
    valid_range(Wp, g.W, 1, g.pw, 0, &lo, &hi);
  }

  // Image n's padded copy into d, plane by plane (no division per row: a row is a few dozen
  // floats). The padding's zeros sit at the same places for every image: they are written only
  // where d has not held an image before (`zeros`), and later images copy just their data.
  void copy_image(int64_t n, float* d, bool zeros) const {
    for (int64_t c = 0; c < g.C; ++c) {
      for (int64_t yy = 0; yy < Hp; ++yy, d += Wp) {
        const int64_t y = yy - g.ph;
        if (y < 0 || y >= g.H) {
          if (zeros) std::fill(d, d + Wp, 0.0f);
          continue;
        }
        if (zeros) std::fill(d, d + lo, 0.0f), std::fill(d + hi, d + Wp, 0.0f);
        const float* src = x + n * g.xs[0] + c * g.xs[1] + y * g.xs[2] + (lo - g.pw);
        // libc's copy (the row is at unit stride: direct_applies): the element loop, which GCC made
        // 16-byte moves behind overlap checks, took 6% of layer4.0's forward (batch 8, Zen 4, perf),
        // memcpy 2.5%.
        std::memcpy(d + lo, src, size_t(hi - lo) * sizeof(float));
      }
    }
  }
};

// One thread's view of the input: image n in place, or its padded copy in slot n % slots of the
// thread's own scratch (slots: the most images one block of tasks reads, so a block's images stay
// while its tasks run; consecutive blocks move forward through the batch).
class DirectImages {
 public:
  DirectImages(const DirectInput& in, int64_t slots) : in_(in), slots_(slots) {
    if (!in.padded) return;
    buf_ = std::make_unique<Scratch<float>>(slots * in.s[0]);
    tags_.assign(size_t(slots), -1);
  }
  const float* image(int64_t n) {
    if (!in_.padded) return in_.x + n * in_.s[0];
    const size_t slot = size_t(n % slots_);
    float* d = buf_->p + int64_t(slot) * in_.s[0];
    if (tags_[slot] != n) in_.copy_image(n, d, tags_[slot] < 0), tags_[slot] = n;
    return d;
  }

 private:
  const DirectInput& in_;
  int64_t slots_;
  std::unique_ptr<Scratch<float>> buf_;
  std::vector<int64_t> tags_;
};

}  // namespace

bool direct_fills_channel_blocks(int64_t channels) {
  const int64_t cb = winograd_kernels().direct_channels, blocks = (channels + cb - 1) / cb;
  return channels > 0 && 4 * channels >= 3 * blocks * cb;
}

bool direct_takes_filter(const Geom& g) { return g.KH != 1 || g.KW != 1 || winograd_kernels().direct_pointwise; }

std::vector<int64_t> direct_runs(int64_t n) {
  const int64_t most = winograd_kernels().direct_pixels_max, parts = (n + most - 1) / most;
  std::vector<int64_t> starts(static_cast<size_t>(parts + 1));
  for (int64_t i = 0; i <= parts; ++i) starts[size_t(i)] = parts ? n * i / parts : 0;
  return starts;
}

namespace {

// The calls over `rows` rows of `width` >= `most` pixels read as one run: blocks of `most`, the
// last one shorter (and inside the last row, as width >= most).
void wrapped_runs(int64_t width, int64_t rows, int64_t most, std::vector<DirectRun>& runs) {
  for (int64_t p = 0, P = rows * width; p < P; p += most) {
    const int64_t R = std::min(most, P - p), x0 = p % width;
    runs.push_back({p / width, x0, int(R), int(std::min(R, width - x0))});
  }
}

}  // namespace

DirectRows direct_rows(int64_t width, int64_t height) {
  const int64_t most = winograd_kernels().direct_pixels_max;
  DirectRows d;
  if (width <= 0 || height <= 0) return d;
  if (2 * width <= most) {  // two rows to a call
    d.group = 2;
    d.full.push_back({0, 0, int(2 * width), int(width)});
    if (height % 2) d.last.push_back({0, 0, int(width), int(width)});
  } else if (width < most) {  // one row to a call
    d.full.push_back({0, 0, int(width), int(width)});
  } else {
    auto calls = [&](int64_t rows) { return (rows * width + most - 1) / most; };
    int64_t best = -1;
    for (int64_t G = 1; G <= std::min(height, most); ++G) {
      const int64_t n = height / G * calls(G) + calls(height % G);
      if (best < 0 || n < best) best = n, d.group = G;
    }
    wrapped_runs(width, d.group, most, d.full);
    wrapped_runs(width, height % d.group, most, d.last);
  }
  d.groups = (height + d.group - 1) / d.group;
  return d;
}

int64_t direct_padded_rows(const Geom& g) { return (g.OH - 1) * g.sh + (g.KH - 1) * g.dh + 1; }

bool direct_applies(const Geom& g) {
  // Output channels in the kernel's vectors; the input read along rows at unit stride.
  if (g.G != 1 || g.C == 0 || (g.W > 1 && g.xs[3] != 1) || !direct_fills_channel_blocks(g.O) ||
      !direct_takes_filter(g))
    return false;
  // The kernel's tap offsets are 32-bit: the last element read, from its image's first.
  const bool padded = g.ph != 0 || g.pw != 0;
  const int64_t last = padded ? g.C * direct_padded_rows(g) * DirectInput::padded_cols(g)
                              : (g.C - 1) * g.xs[1] + (g.H - 1) * g.xs[2] + g.W;
  return last < (int64_t(1) << 31);
}

void conv2d_direct(const float* x, const Geom& g, const float* wm, const float* bias, float* out, const int64_t* os,
                   FilterOrigin origin) {
  const WinogradKernels& k = winograd_kernels();
  const int64_t O = g.O, K = g.K, cb = k.direct_channels, OB = (O + cb - 1) / cb;
  // The filters as blocks of cb output channels, tap by tap.
  const std::shared_ptr<const PackedFilters> filters = row_blocked_filters(kDirectFilters, wm, O, K, cb, origin);
  const float* w = filters->packed.data();
  const DirectInput in(x, g);

  // off[kk], kk = (c, ky, kx): where tap kk reads, from its output pixel's position.
  std::vector<int32_t> off(static_cast<size_t>(K));
  for (int64_t kk = 0; kk < K; ++kk) {
    const int64_t c = kk / (g.KH * g.KW), ky = kk / g.KW % g.KH, kx = kk % g.KW;
    off[size_t(kk)] = int32_t(c * in.s[1] + ky * g.dh * in.s[2] + kx * g.dw);
  }
  // The batch's output rows stacked image after image, so a call's second run may be the next
  // image's first row: a 7x7 output's last row no longer goes alone into AVX-512's 14-pixel block
  // (8 images: 28 calls, not 24 + 8 half-empty ones), and AVX2's 6-pixel blocks wrap through the
  // stack (66 calls, not 72). 2-4% on ResNet's stride-2 convs with 7x7 outputs, batch 8, on AMD and
  // Intel: a half-empty block costs over half a full one, not a whole one.
  const DirectRows rows = direct_rows(g.OW, g.N * g.OH);
  const int64_t RG = rows.groups;
  // Tasks (block, ob, group) with about one image's groups to a block: consecutive tasks share
  // the block's filters (kept in cache) and one image's rows.
  const int64_t GB = std::min(RG, (g.OH + rows.group - 1) / rows.group), NB = (RG + GB - 1) / GB;
  // The most images a block's tasks read (its rows, and a run's second part the row after).
  int64_t slots = 1;
  for (int64_t b = 0; b < NB; ++b) {
    const int64_t r0 = b * GB * rows.group, r1 = std::min(g.N * g.OH, (b + 1) * GB * rows.group + 1) - 1;
    slots = std::max(slots, r1 / g.OH - r0 / g.OH + 1);
  }
  parallel_for(0, NB * OB * GB, 1, [&](int64_t t0, int64_t t1) {
    float acc[kDirectMaxBlock];
    DirectImages images(in, slots);
    // Where stacked output row r (image r / OH, row r % OH) reads from.
    auto row_at = [&](int64_t r) { return images.image(r / g.OH) + r % g.OH * g.sh * in.s[2]; };
    // `width` outputs in acc from (stacked row r, ox0), plus the bias.
    auto store = [&](const float* a, int64_t ob, int64_t r, int64_t ox0, int64_t width) {
      float* d = out + r / g.OH * os[0] + ob * cb * os[1] + r % g.OH * os[2] + ox0 * os[3];
      const float* bb = bias ? bias + ob * cb : nullptr;
      const int64_t channels = std::min(cb, O - ob * cb);
      if (os[3] == 1) return k.direct_store_row(a, int(width), channels, cb, bb, d, os[1]);  // turned in registers
      for (int64_t j = 0; j < channels; ++j)
        for (int64_t i = 0; i < width; ++i) d[j * os[1] + i * os[3]] = a[i * cb + j] + (bb ? bb[j] : 0.0f);
    };
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t ob = t / GB % OB, gi = t / (OB * GB) * GB + t % GB;
      if (gi >= RG) continue;  // the last block's missing groups
      const bool last = gi == RG - 1 && !rows.last.empty();
      for (const DirectRun& r : last ? rows.last : rows.full) {
        const int64_t row = gi * rows.group + r.row;
        const float* p = row_at(row) + r.x0 * g.sw;
        // To the second run (in the same scratch or input as the first: a pointer difference).
        const int64_t rs = r.split < r.R ? row_at(row + 1) - p : 0;
        k.direct_pixels(w + ob * K * cb, p, g.sw, rs, r.split, off.data(), K, r.R, acc);
        store(acc, ob, row, r.x0, r.split);
        if (r.split < r.R) store(acc + r.split * cb, ob, row + 1, 0, r.R - r.split);
      }
    }
  });
}

}  // namespace bm::cpu
