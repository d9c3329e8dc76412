// conv2d's op function: argument checks in the project's order (devices, dtypes, shapes), the output
// shape, the empty-input cases, then the backend's kernel through run_op_into.
#include <string>

#include "core/dispatch.h"
#include "core/errors.h"
#include "core/ops.h"
#include "core/ops_conv.h"

namespace bm {

namespace {

std::string pair_str(int64_t a, int64_t b) { return "(" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

// An int or (h, w) pair argument as a pair.
std::array<int64_t, 2> as_pair(const char* what, const std::vector<int64_t>& v) {
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  throw ValueError(std::string("[conv2d] ") + what + " must be an int or a pair of ints, got " +
                   std::to_string(v.size()) + " values");
}

}  // namespace

TensorPtr conv2d(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias, const Conv2dOptions& o) {
  // 1. devices, before anything else can fail (also for empty tensors)
  std::vector<std::pair<const char*, const Tensor*>> named{{"input", input.get()}, {"weight", weight.get()}};
  if (bias) named.push_back({"bias", bias.get()});
  check_same_device("conv2d", named);
  Device* dev = input->device();

  // 2. dtypes: a floating dtype the device has a kernel for, the same for every tensor (as torch)
  check_dtype_supported(OpId::conv2d, input->dtype, dev);
  if (weight->dtype != input->dtype || (bias && bias->dtype != input->dtype))
    throw TypeError(std::string("[conv2d] input, weight and bias must have the same dtype, got input ") +
                    dtype_name(input->dtype) + ", weight " + dtype_name(weight->dtype) +
                    (bias ? std::string(", bias ") + dtype_name(bias->dtype) : std::string()));

  // 3. shapes and arguments
  const Shape& ws = weight->shape;
  if (input->ndim() != 3 && input->ndim() != 4)
    throw ValueError("[conv2d] expected a 3-D (unbatched) or 4-D (batched) input, got input of shape " +
                     shape_str(input->shape));
  if (weight->ndim() != 4)
    throw ValueError("[conv2d] weight must be 4-D (out_channels, in_channels / groups, kH, kW), got shape " +
                     shape_str(ws));
  const bool batched = input->ndim() == 4;
  TensorPtr x = batched ? input : unsqueeze(input, 0);
  const int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  const int64_t O = ws[0], KH = ws[2], KW = ws[3], G = o.groups;
  if (G < 1) throw ValueError("[conv2d] groups must be positive, got " + std::to_string(G));
  auto stride = as_pair("stride", o.stride), dilation = as_pair("dilation", o.dilation);
  if (stride[0] < 1 || stride[1] < 1)
    throw ValueError("[conv2d] stride must be positive, got " + pair_str(stride[0], stride[1]));
  if (dilation[0] < 1 || dilation[1] < 1)
    throw ValueError("[conv2d] dilation must be positive, got " + pair_str(dilation[0], dilation[1]));
  if (KH < 1 || KW < 1)
    throw ValueError("[conv2d] kernel size must be positive, got weight of shape " + shape_str(ws));
  const int64_t ekh = dilation[0] * (KH - 1) + 1, ekw = dilation[1] * (KW - 1) + 1;  // dilated extent
  std::array<int64_t, 2> pad_lo{0, 0}, pad_hi{0, 0};
  if (o.padding_mode == "same") {
    if (stride[0] != 1 || stride[1] != 1)
      throw ValueError("[conv2d] padding='same' is not supported for strided convolutions, got stride " +
                       pair_str(stride[0], stride[1]));
    // torch: the odd one of an uneven total goes at the bottom/right
    pad_lo = {(ekh - 1) / 2, (ekw - 1) / 2};
    pad_hi = {ekh - 1 - pad_lo[0], ekw - 1 - pad_lo[1]};
  } else if (o.padding_mode == "valid") {
  } else if (o.padding_mode.empty()) {
    pad_lo = pad_hi = as_pair("padding", o.padding);
    if (pad_lo[0] < 0 || pad_lo[1] < 0)
      throw ValueError("[conv2d] padding must be non-negative, got " + pair_str(pad_lo[0], pad_lo[1]));
  } else {
    throw ValueError("[conv2d] padding must be 'same', 'valid', an int or a pair of ints, got '" + o.padding_mode +
                     "'");
  }
  if (O % G != 0)
    throw ValueError("[conv2d] out_channels (weight.shape[0] = " + std::to_string(O) +
                     ") must be divisible by groups (" + std::to_string(G) + ")");
  if (C != ws[1] * G)
    throw ValueError("[conv2d] given groups=" + std::to_string(G) + " and weight of shape " + shape_str(ws) +
                     ", expected input of shape " + shape_str(input->shape) + " to have " +
                     std::to_string(ws[1] * G) + " channels, but it has " + std::to_string(C));
  if (bias && (bias->ndim() != 1 || bias->shape[0] != O))
    throw ValueError("[conv2d] bias must have shape (" + std::to_string(O) + ",) (weight.shape[0]), got " +
                     shape_str(bias->shape));
  const int64_t ph = H + pad_lo[0] + pad_hi[0], pw = W + pad_lo[1] + pad_hi[1];
  if (ph < ekh || pw < ekw)
    throw ValueError("[conv2d] the padded input " + pair_str(ph, pw) + " is smaller than the (dilated) kernel " +
                     pair_str(ekh, ekw) + "; input shape " + shape_str(input->shape) + ", weight shape " +
                     shape_str(ws));

  const int64_t OH = (ph - ekh) / stride[0] + 1, OW = (pw - ekw) / stride[1] + 1;
  TensorPtr out = empty_tensor({N, O, OH, OW}, input->dtype, dev);
  TensorPtr result = batched ? out : squeeze(out, Dims{0});
  if (out->numel() == 0) return result;
  if (x->numel() == 0) {
    // No input channels or no input pixels: every output is padding times weights, i.e. the bias.
    if (bias) copy_into(out, expand(view(bias, {1, O, 1, 1}), out->shape));
    else fill_into(out, Scalar::from_int(0));
    return result;
  }

  OpArgs args;
  args.conv_stride = stride;
  args.conv_padding = pad_lo;
  args.conv_dilation = dilation;
  args.conv_groups = G;
  std::vector<Operand> ins{x, weight};
  if (bias) ins.push_back(bias);
  run_op_into(OpId::conv2d, std::move(ins), args, out);
  return result;
}

}  // namespace bm
