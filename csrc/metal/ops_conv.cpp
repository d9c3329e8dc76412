// conv2d on Metal (shaders/conv.metal): one launch, threadgroups over (output column tiles, output
// channel tiles, groups). The op layer hands over a 4-D input and weight, an optional bias and a
// non-empty output; every operand keeps its own strides and offset, so no layout is copied.
#include <cstdint>
#include <string>

#include "core/errors.h"
#include "metal/kernels.h"

namespace bm::metal {

namespace {

constexpr int64_t kTile = 32;            // CV_TILE in conv.metal
constexpr uint64_t kThreadsPerSide = 8;  // CV_T: the threadgroup is kThreadsPerSide^2 threads

// The geometry fields Conv2dArgs and Conv2dBackwardArgs share: input x (N, C, H, W), weight w
// (O, Cg, kH, kW), y with the output's shape (N, O, OH, OW), and the op's stride, padding,
// dilation and groups.
template <typename Args>
void set_geometry(const Tensor& x, const Tensor& w, const Tensor& y, const OpArgs& o, Args* a) {
  a->in_h = x.shape[2];
  a->in_w = x.shape[3];
  a->out_h = y.shape[2];
  a->out_w = y.shape[3];
  a->k_h = w.shape[2];
  a->k_w = w.shape[3];
  a->stride_h = o.conv_stride[0];
  a->stride_w = o.conv_stride[1];
  a->pad_h = o.conv_padding[0];
  a->pad_w = o.conv_padding[1];
  a->dil_h = o.conv_dilation[0];
  a->dil_w = o.conv_dilation[1];
  a->cin_g = x.shape[1] / o.conv_groups;
  a->cout_g = w.shape[0] / o.conv_groups;
}

void conv2d_kernel(const KernelCall& c) {
  const Tensor &x = *c.in[0], &w = *c.in[1];
  const Tensor* b = c.nin > 2 ? c.in[2] : nullptr;
  Tensor& out = *c.out;
  const OpArgs& o = *c.args;
  Conv2dArgs a{};
  set_geometry(x, w, out, o, &a);
  const int64_t groups = o.conv_groups;
  a.k_total = a.cin_g * a.k_h * a.k_w;
  a.cols = x.shape[0] * a.out_h * a.out_w;
  a.in_offset = x.offset;
  a.w_offset = w.offset;
  a.out_offset = out.offset;
  for (int d = 0; d < 4; ++d) {
    a.in_strides[d] = x.strides[d];
    a.w_strides[d] = w.strides[d];
    a.out_strides[d] = out.strides[d];
  }
  a.has_bias = b != nullptr;
  if (b) {
    a.bias_offset = b->offset;
    a.bias_stride = b->strides[0];
  }
  Size3 grid{uint64_t((a.cols + kTile - 1) / kTile), uint64_t((a.cout_g + kTile - 1) / kTile), uint64_t(groups)};
  // Without a bias, buffer(2) is bound to the weights; the shader never reads it then.
  backend_of(out).dispatch_groups(kernel_name("conv2d", out.dtype), {{&x, 0}, {&w, 1}, {b ? b : &w, 2}, {&out, 3}},
                                  &a, sizeof(a), 4, grid, Size3{kThreadsPerSide, kThreadsPerSide, 1});
}

// ---- conv2d_backward_input / conv2d_backward_weight (shaders/conv_backward.metal) ----
// in[0] = grad_output (N, O, OH, OW); in[1] = the weight (input gradient) or the input (weight
// gradient); out = the gradient. The geometry comes from the shapes: (N, C, H, W) is the output's
// (input gradient) or in[1]'s (weight gradient), (O, Cg, kH, kW) the weight's or the output's.
void conv2d_backward_kernel(const KernelCall& c, bool weight_grad) {
  const Tensor &g = *c.in[0], &other = *c.in[1];
  Tensor& out = *c.out;
  const Tensor& x = weight_grad ? other : out;  // (N, C, H, W)
  const Tensor& w = weight_grad ? out : other;  // (O, Cg, kH, kW)
  const OpArgs& o = *c.args;
  Conv2dBackwardArgs a{};
  set_geometry(x, w, g, o, &a);
  const int64_t groups = o.conv_groups;
  a.batch = x.shape[0];
  if (weight_grad) {
    a.rows = a.cout_g;
    a.cols = a.cin_g * a.k_h * a.k_w;
    a.k_total = a.batch * a.out_h * a.out_w;
  } else {
    a.rows = a.cin_g;
    a.cols = a.batch * a.in_h * a.in_w;
    a.k_total = a.cout_g * a.k_h * a.k_w;
  }
  a.g_offset = g.offset;
  a.a_offset = other.offset;
  a.r_offset = out.offset;
  for (int d = 0; d < 4; ++d) {
    a.g_strides[d] = g.strides[d];
    a.a_strides[d] = other.strides[d];
    a.r_strides[d] = out.strides[d];
  }
  const int64_t gx = (a.cols + kTile - 1) / kTile, gy = (a.rows + kTile - 1) / kTile;
  if (gx > int64_t(UINT32_MAX) || gy > int64_t(UINT32_MAX))
    throw ValueError(std::string("[") + (weight_grad ? "conv2d_backward_weight" : "conv2d_backward_input") +
                     "] the convolution is too large for one Metal launch");
  const char* base = weight_grad ? "conv2d_backward_weight" : "conv2d_backward_input";
  backend_of(out).dispatch_groups(kernel_name(base, out.dtype), {{&g, 0}, {&other, 1}, {&out, 2}}, &a, sizeof(a), 3,
                                  Size3{uint64_t(gx), uint64_t(gy), uint64_t(groups)},
                                  Size3{kThreadsPerSide, kThreadsPerSide, 1});
}

void conv2d_backward_input_kernel(const KernelCall& c) { conv2d_backward_kernel(c, false); }
void conv2d_backward_weight_kernel(const KernelCall& c) { conv2d_backward_kernel(c, true); }

}  // namespace

void register_conv_kernels(MetalBackend& b) {
  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16}) {  // the rows' mask minus float64
    b.set_kernel(OpId::conv2d, d, &conv2d_kernel);
    b.set_kernel(OpId::conv2d_backward_input, d, &conv2d_backward_input_kernel);
    b.set_kernel(OpId::conv2d_backward_weight, d, &conv2d_backward_weight_kernel);
  }
}

}  // namespace bm::metal
