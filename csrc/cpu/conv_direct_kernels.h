// The direct convolution's product kernel (conv_direct.cpp), written once and compiled with the
// Winograd kernels for each instruction set (conv_winograd_kernels.h includes it inside its
// namespace BM_WINO_NS).
//
// Output channels go in the vector, input pixels are broadcast: a block of R consecutive output
// pixels of one row times two vectors of output channels, each k (= input channel, kernel tap) one
// load of the two filter vectors and one broadcast per pixel, read straight from the input at
// x + off[k] + s i. A broadcast reads any address, so no column matrix is written and strided
// pixels (stride 2) cost the same as adjacent ones. AVX-512 holds 14 pixels x 32 channels in 28
// registers, AVX2 6 pixels x 16 channels in 12. Each output is its products added in k order, one
// FMA each (AVX2 and AVX-512 agree bit for bit, and with the panel kernels on unfolded columns),
// or one multiply and one add in the baseline copy.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>

namespace bm::cpu::BM_WINO_NS {

#if defined(__AVX512F__)
using DirectVec = __m512;
#elif defined(__AVX2__) && defined(__FMA__)
using DirectVec = __m256;
#endif

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
constexpr int kDirectLanes = int(sizeof(DirectVec) / sizeof(float));
constexpr int kDirectChannels = 2 * kDirectLanes;                   // output channels per block
constexpr int kDirectPixels = sizeof(DirectVec) == 64 ? 14 : 6;      // 2 R accumulators + 3 registers
// Whether 1x1 convolutions take this kernel (forward and weight gradient). A 1x1 tap reads each
// input channel's plane once: AVX2's 6 x 16 block does 12 FMAs per cache line of a new plane, and
// the panel kernel on packed columns was faster (AMD Zen 3, batch 8, ResNet's 1x1 stride-2 layers:
// forward 1.3-1.6x, weight gradient 1.3-1.8x; on an Intel Xeon with BESSEMER_CPU_ISA=avx2 the two
// were even). AVX-512's 14 x 32 block does 28; on an Intel Xeon it was as fast as the panel kernel
// or faster on every forward row (min times, up to 1.4x) and 1.0-1.6x on the weight gradient.
constexpr bool kDirectPointwise = sizeof(DirectVec) == 64;
constexpr int64_t kDirectAhead = 8;  // how many k ahead the kernel prefetches its broadcasts

// acc[i * kDirectChannels + j] (i < R, j < kDirectChannels) = sum over k of w[k * kDirectChannels +
// j] * x[off[k] + pix(i)], the R pixels in two runs: pix(i) = S i for i < A, rs + S (i - A) after
// (S a compile-time pixel step, or s where S is 0; A = R: one run). The second run is the next
// row's: two short rows fill the registers together (7 pixels at a ResNet's last stage), and a
// block of pixels may wrap from the end of one row to the start of the next, so a 7-wide row needs
// no 3-pixel block on AVX2 (6 accumulators wait on their own FMA latency). One pass over the
// filters for both runs.
template <int R, int S, int A>
inline void direct_block(const float* w, const float* x, int64_t s, int64_t rs, const int32_t* off, int64_t K,
                         float* acc) {
  using V = DirectVec;
  const int64_t step = S ? S : s;
  if (K <= 0) {
    for (int i = 0; i < 2 * R * kDirectLanes; ++i) acc[i] = 0.0f;
    return;
  }
  V c0[R], c1[R];
  for (int i = 0; i < R; ++i) c0[i] = vset1(V{}, 0.0f), c1[i] = c0[i];
  int64_t k = 0;
  do {
    const V w0 = vload(V{}, w), w1 = vload(V{}, w + kDirectLanes);
    const float* p = x + off[k];
    const float* p2 = p + rs;
    // The operand rows of a later k: they jump between channels (and, in the weight gradient,
    // between pixels a whole row of channels apart), which the hardware prefetcher does not follow.
    // The first run's only: prefetching the second's as well made two-row blocks 4-9% slower on
    // an Intel Xeon (ResNet's layer4.0 3x3 stride 2 at batch 8, 2 threads; a standalone copy of
    // this kernel, alternated, two calls), and no faster on Zen 4.
    if (k + kDirectAhead < K) {
      const float* f = x + off[k + kDirectAhead];
      __builtin_prefetch(f), __builtin_prefetch(f + step * (A - 1));
    }
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const V b = vset1(V{}, i < A ? p[step * i] : p2[step * (i - A)]);
      c0[i] = vfma(b, w0, c0[i]), c1[i] = vfma(b, w1, c1[i]);
    }
    w += kDirectChannels;
  } while (++k < K);
  for (int i = 0; i < R; ++i) vstore(acc + i * kDirectChannels, c0[i]), vstore(acc + i * kDirectChannels + kDirectLanes, c1[i]);
}
#else
constexpr int kDirectChannels = 16, kDirectPixels = 8;
constexpr bool kDirectPointwise = true;  // the baseline panel kernel was 3x slower on 1x1 convolutions

template <int R, int S, int A>
inline void direct_block(const float* w, const float* x, int64_t s, int64_t rs, const int32_t* off, int64_t K,
                         float* acc) {
  const int64_t step = S ? S : s;
  float a[R][kDirectChannels] = {};
  for (int64_t k = 0; k < K; ++k, w += kDirectChannels) {
    const float* p = x + off[k];
    for (int i = 0; i < R; ++i) {
      const float v = i < A ? p[step * i] : p[rs + step * (i - A)];
      for (int j = 0; j < kDirectChannels; ++j) a[i][j] += v * w[j];
    }
  }
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < kDirectChannels; ++j) acc[i * kDirectChannels + j] = a[i][j];
}
#endif

#if defined(__AVX2__)
// The 8 x 8 block r[i][j] (eight rows of 8 floats) turned in registers: on return r[j] holds column
// j (three rounds of shuffles).
inline void transpose8x8(__m256 r[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  // r[0..3] hold columns (0, 1, 2, 3) and (4, 5, 6, 7) of rows 0-3 in their two halves, r[4..7]
  // those of rows 4-7: column j of all 8 rows joins a half of each.
  for (int j = 0; j < 4; ++j) {
    t[j] = _mm256_permute2f128_ps(r[j], r[j + 4], 0x20);
    t[j + 4] = _mm256_permute2f128_ps(r[j], r[j + 4], 0x31);
  }
  for (int j = 0; j < 8; ++j) r[j] = t[j];
}
#endif

#if defined(__AVX512F__)
// The 16 x 16 block r[i][j] turned in registers: on return r[j] holds column j (four rounds of
// shuffles).
inline void transpose16x16(__m512 r[16]) {
  // The zero-masked forms with every lane on: the same instructions, and GCC 12 does not warn that
  // the plain forms' undefined pass-through operand "may be used uninitialized".
  constexpr __mmask16 all = 0xFFFF;
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(all, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(all, r[i], r[i + 1]);
  }
  // Lane L (128 bits) of r[4 q + m] now holds columns 4 L + m of rows 4 q .. 4 q + 3.
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_maskz_shuffle_ps(all, t[i], t[i + 2], 0x44);
    r[i + 1] = _mm512_maskz_shuffle_ps(all, t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm512_maskz_shuffle_ps(all, t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm512_maskz_shuffle_ps(all, t[i + 1], t[i + 3], 0xEE);
  }
  // Column c = 4 L + m is lane L of r[m], r[4 + m], r[8 + m], r[12 + m]: lanes (0, 2) and (1, 3) of
  // each pair first, then the pairs joined.
  for (int m = 0; m < 4; ++m) {
    t[m] = _mm512_maskz_shuffle_f32x4(all, r[m], r[4 + m], 0x88);       // r[m] lanes 0, 2; r[4 + m] lanes 0, 2
    t[4 + m] = _mm512_maskz_shuffle_f32x4(all, r[m], r[4 + m], 0xDD);   // lanes 1, 3
    t[8 + m] = _mm512_maskz_shuffle_f32x4(all, r[8 + m], r[12 + m], 0x88);
    t[12 + m] = _mm512_maskz_shuffle_f32x4(all, r[8 + m], r[12 + m], 0xDD);
  }
  for (int m = 0; m < 4; ++m) {
    r[m] = _mm512_maskz_shuffle_f32x4(all, t[m], t[8 + m], 0x88);
    r[8 + m] = _mm512_maskz_shuffle_f32x4(all, t[m], t[8 + m], 0xDD);
    r[4 + m] = _mm512_maskz_shuffle_f32x4(all, t[4 + m], t[12 + m], 0x88);
    r[12 + m] = _mm512_maskz_shuffle_f32x4(all, t[4 + m], t[12 + m], 0xDD);
  }
}
#endif

// dst[x * C + c] = src[c * cs + x] for x < n, c < C: rows of C planes turned channels-last (the
// direct weight gradient's input copy). AVX2 turns 8 x 8 tiles in registers (eight 8-float loads,
// transpose8x8, eight 8-float stores); a store per element to lines C floats apart cost two to four
// times as much.
inline void channels_last_rows(const float* src, int64_t cs, int64_t C, int64_t n, float* dst) {
  int64_t c0 = 0;
#if defined(__AVX2__)
  for (; c0 + 8 <= C; c0 += 8) {
    int64_t x0 = 0;
    for (; x0 + 8 <= n; x0 += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + (c0 + i) * cs + x0);
      transpose8x8(r);
      for (int j = 0; j < 8; ++j) _mm256_storeu_ps(dst + (x0 + j) * C + c0, r[j]);
    }
    for (; x0 < n; ++x0)
      for (int64_t c = c0; c < c0 + 8; ++c) dst[x0 * C + c] = src[c * cs + x0];
  }
#endif
  for (int64_t x0 = 0; x0 < n; x0 += 16) {  // the channels left: 16 columns' pixels stay in L1
    const int64_t x1 = std::min(n, x0 + 16);
    for (int64_t c = c0; c < C; ++c)
      for (int64_t x = x0; x < x1; ++x) dst[x * C + c] = src[c * cs + x];
  }
}

#if defined(__AVX2__) && defined(__FMA__)
// (store_lanes for __m256: conv_winograd_kernels.h)
inline void turn(__m256 r[8]) { transpose8x8(r); }
#endif
#if defined(__AVX512F__)
inline void store_lanes(float* d, __m512 v, int n) { _mm512_mask_storeu_ps(d, __mmask16((1u << std::min(16, n)) - 1), v); }
inline void turn(__m512 r[16]) { transpose16x16(r); }
#endif

#if defined(__AVX2__) && defined(__FMA__)
// direct_store_row's blocks of L = lanes-of-V channels from j0 on, as long as whole blocks remain:
// L x L blocks of acc turned in registers (v[j]: channel j0 + j's L pixels), then R - i0 (at most
// L) pixels of each channel stored. Moves j0 past the channels done.
template <typename V>
inline void store_turned_blocks(const float* acc, int R, int64_t channels, int64_t cb, const float* bias, float* out,
                                int64_t cs, int64_t& j0) {
  constexpr int L = int(sizeof(V) / sizeof(float));
  for (; j0 + L <= channels; j0 += L) {
    for (int i0 = 0; i0 < R; i0 += L) {
      V v[L];
      for (int i = 0; i < L; ++i) v[i] = vload(V{}, acc + (i0 + i) * cb + j0);
      turn(v);
      for (int j = 0; j < L; ++j) {
        if (bias) v[j] = v[j] + vset1(V{}, bias[j0 + j]);
        store_lanes(out + (j0 + j) * cs + i0, v[j], R - i0);
      }
    }
  }
}
#endif

// out[j * cs + i] = acc[i * cb + j] + (bias ? bias[j] : 0) for i < R, j < channels: one row of a
// direct kernel's outputs (R pixels x cb channels, pixel by pixel) into R adjacent pixels of each
// of `channels` output planes cs floats apart. AVX-512 turns 16 x 16 blocks in registers, AVX2
// 8 x 8 ones (the 16 or 8 rows read may run past R, inside acc's kDirectMaxBlock floats; the
// stores stop at R). The same sums as the scalar loop: the same bits. (Per 8 x 8 block on
// AVX-512, the 256-bit loads of the kernel's 512-bit stores and the stores of each row's tail cost
// 1-4% of a 3x3 stride-2 conv and 6-17% of a 1x1 on Zen 4.)
inline void direct_store_row(const float* acc, int R, int64_t channels, int64_t cb, const float* bias, float* out,
                             int64_t cs) {
  int64_t j0 = 0;
#if defined(__AVX512F__)
  store_turned_blocks<__m512>(acc, R, channels, cb, bias, out, cs, j0);
#endif
#if defined(__AVX2__) && defined(__FMA__)
  store_turned_blocks<__m256>(acc, R, channels, cb, bias, out, cs, j0);  // the channels left
#endif
  for (; j0 < channels; ++j0) {
    const float b = bias ? bias[j0] : 0.0f;
    for (int i = 0; i < R; ++i) out[j0 * cs + i] = acc[i * cb + j0] + b;
  }
}

using DirectBlockFn = void (*)(const float*, const float*, int64_t, int64_t, const int32_t*, int64_t, float*);

// direct_block<R, S, R> for R = 1 .. kDirectPixels (one run), indexed by R - 1; direct_block<2 q,
// S, q> for q = 1 .. kDirectPixels / 2 (two rows), indexed by q - 1; direct_block<kDirectPixels,
// S, A> for A = 1 .. kDirectPixels - 1 (a block wrapping into the next row), indexed by A - 1.
template <int S, int... Rm1>
constexpr auto direct_blocks(std::integer_sequence<int, Rm1...>) {
  return std::array<DirectBlockFn, sizeof...(Rm1)>{direct_block<Rm1 + 1, S, Rm1 + 1>...};
}
template <int S, int... Qm1>
constexpr auto direct_blocks2(std::integer_sequence<int, Qm1...>) {
  return std::array<DirectBlockFn, sizeof...(Qm1)>{direct_block<2 * (Qm1 + 1), S, Qm1 + 1>...};
}
template <int S, int... Am1>
constexpr auto direct_blocks_wrap(std::integer_sequence<int, Am1...>) {
  return std::array<DirectBlockFn, sizeof...(Am1)>{direct_block<kDirectPixels, S, Am1 + 1>...};
}

// The kernel's entry: R pixels (R <= kDirectPixels) in two runs, the first `split` pixels s floats
// apart from x and the rest s floats apart from x + rs (split = R: one run). Steps 1 and 2 (stride
// 1 and 2 with the input's unit stride along a row) have their own copies with the step in the
// addresses. Splits without a copy of their own (neither R / 2 nor a full block) run as two calls:
// the same sums.
inline void direct_pixels(const float* w, const float* x, int64_t s, int64_t rs, int split, const int32_t* off,
                          int64_t K, int R, float* acc) {
  using Seq = std::make_integer_sequence<int, kDirectPixels>;
  using Seq2 = std::make_integer_sequence<int, kDirectPixels / 2>;
  using SeqW = std::make_integer_sequence<int, kDirectPixels - 1>;
  static constexpr auto step1 = direct_blocks<1>(Seq{}), step2 = direct_blocks<2>(Seq{}), any = direct_blocks<0>(Seq{});
  static constexpr auto step1r = direct_blocks2<1>(Seq2{}), step2r = direct_blocks2<2>(Seq2{}),
                        anyr = direct_blocks2<0>(Seq2{});
  static constexpr auto step1w = direct_blocks_wrap<1>(SeqW{}), step2w = direct_blocks_wrap<2>(SeqW{}),
                        anyw = direct_blocks_wrap<0>(SeqW{});
  if (split >= R) {
    const auto& table = s == 1 ? step1 : s == 2 ? step2 : any;
    table[size_t(R - 1)](w, x, s, 0, off, K, acc);
  } else if (2 * split == R) {
    const auto& table = s == 1 ? step1r : s == 2 ? step2r : anyr;
    table[size_t(split - 1)](w, x, s, rs, off, K, acc);
  } else if (R == kDirectPixels) {
    const auto& table = s == 1 ? step1w : s == 2 ? step2w : anyw;
    table[size_t(split - 1)](w, x, s, rs, off, K, acc);
  } else {
    direct_pixels(w, x, s, 0, split, off, K, split, acc);
    direct_pixels(w, x + rs, s, 0, R - split, off, K, R - split, acc + split * kDirectChannels);
  }
}

}  // namespace bm::cpu::BM_WINO_NS
