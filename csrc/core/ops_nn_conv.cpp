// conv2d's op function: argument checks in the project's order (devices, dtypes, shapes), the output
// shape, the empty-input cases, then the backend's kernel through run_op_into.
#include <array>
#include <string>

#include "core/dispatch.h"
#include "core/errors.h"
#include "core/ops.h"
#include "core/ops_conv.h"
#include "autograd/record.h"
#include "autograd/rules_nn.h"
#include "core/memory.h"

namespace bm {

namespace {

std::string pair_str(int64_t a, int64_t b) { return "(" + std::to_string(a) + ", " + std::to_string(b) + ")"; }

// An int or (h, w) pair argument as a pair.
std::array<int64_t, 2> as_pair(const char* op, const char* what, const std::vector<int64_t>& v) {
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  throw ValueError(std::string("[") + op + "] " + what + " must be an int or a pair of ints, got " +
                   std::to_string(v.size()) + " values");
}

// The forward's arguments resolved against an (N, C, H, W) input shape and a weight shape, checked
// in the forward's order; `op` tags the messages and `shown` is the input shape the caller gave.
struct ConvPlan {
  std::array<int64_t, 2> stride, dilation, pad_lo, pad_hi;
  int64_t N, C, H, W, O, KH, KW, G;
};

ConvPlan plan_conv(const char* op, const Shape& x4, const Shape& ws, const Shape& shown, const Conv2dOptions& o) {
  const std::string tag = std::string("[") + op + "] ";
  ConvPlan p;
  p.N = x4[0], p.C = x4[1], p.H = x4[2], p.W = x4[3];
  p.O = ws[0], p.KH = ws[2], p.KW = ws[3], p.G = o.groups;
  if (p.G < 1) throw ValueError(tag + "groups must be positive, got " + std::to_string(p.G));
  p.stride = as_pair(op, "stride", o.stride), p.dilation = as_pair(op, "dilation", o.dilation);
  if (p.stride[0] < 1 || p.stride[1] < 1)
    throw ValueError(tag + "stride must be positive, got " + pair_str(p.stride[0], p.stride[1]));
  if (p.dilation[0] < 1 || p.dilation[1] < 1)
    throw ValueError(tag + "dilation must be positive, got " + pair_str(p.dilation[0], p.dilation[1]));
  if (p.KH < 1 || p.KW < 1)
    throw ValueError(tag + "kernel size must be positive, got weight of shape " + shape_str(ws));
  const int64_t ekh = p.dilation[0] * (p.KH - 1) + 1, ekw = p.dilation[1] * (p.KW - 1) + 1;  // dilated extent
  p.pad_lo = p.pad_hi = {0, 0};
  if (o.padding_mode == "same") {
    if (p.stride[0] != 1 || p.stride[1] != 1)
      throw ValueError(tag + "padding='same' is not supported for strided convolutions, got stride " +
                       pair_str(p.stride[0], p.stride[1]));
    // torch: the odd one of an uneven total goes at the bottom/right
    p.pad_lo = {(ekh - 1) / 2, (ekw - 1) / 2};
    p.pad_hi = {ekh - 1 - p.pad_lo[0], ekw - 1 - p.pad_lo[1]};
  } else if (o.padding_mode == "valid") {
  } else if (o.padding_mode.empty()) {
    p.pad_lo = p.pad_hi = as_pair(op, "padding", o.padding);
    if (p.pad_lo[0] < 0 || p.pad_lo[1] < 0)
      throw ValueError(tag + "padding must be non-negative, got " + pair_str(p.pad_lo[0], p.pad_lo[1]));
  } else {
    throw ValueError(tag + "padding must be 'same', 'valid', an int or a pair of ints, got '" + o.padding_mode + "'");
  }
  if (p.O % p.G != 0)
    throw ValueError(tag + "out_channels (weight.shape[0] = " + std::to_string(p.O) +
                     ") must be divisible by groups (" + std::to_string(p.G) + ")");
  if (p.C != ws[1] * p.G)
    throw ValueError(tag + "given groups=" + std::to_string(p.G) + " and weight of shape " + shape_str(ws) +
                     ", expected input of shape " + shape_str(shown) + " to have " + std::to_string(ws[1] * p.G) +
                     " channels, but it has " + std::to_string(p.C));
  return p;
}

// The output (N, O, OH, OW); ValueError when the padded input is smaller than the dilated kernel.
Shape conv_output_shape(const char* op, const ConvPlan& p, const Shape& ws, const Shape& shown) {
  const int64_t ekh = p.dilation[0] * (p.KH - 1) + 1, ekw = p.dilation[1] * (p.KW - 1) + 1;
  const int64_t ph = p.H + p.pad_lo[0] + p.pad_hi[0], pw = p.W + p.pad_lo[1] + p.pad_hi[1];
  if (ph < ekh || pw < ekw)
    throw ValueError(std::string("[") + op + "] the padded input " + pair_str(ph, pw) +
                     " is smaller than the (dilated) kernel " + pair_str(ekh, ekw) + "; input shape " +
                     shape_str(shown) + ", weight shape " + shape_str(ws));
  return {p.N, p.O, (ph - ekh) / p.stride[0] + 1, (pw - ekw) / p.stride[1] + 1};
}

OpArgs conv_args(const ConvPlan& p) {
  OpArgs args;
  args.conv_stride = p.stride;
  args.conv_padding = p.pad_lo;
  args.conv_dilation = p.dilation;
  args.conv_groups = p.G;
  return args;
}

}  // namespace

TensorPtr conv2d(const TensorPtr& input, const TensorPtr& weight, const TensorPtr& bias, const Conv2dOptions& o) {
  OpScope scope("conv2d");  // named by OutOfMemoryError
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
  const ConvPlan p = plan_conv("conv2d", x->shape, ws, input->shape, o);
  if (bias && (bias->ndim() != 1 || bias->shape[0] != p.O))
    throw ValueError("[conv2d] bias must have shape (" + std::to_string(p.O) + ",) (weight.shape[0]), got " +
                     shape_str(bias->shape));
  TensorPtr out = empty_tensor(conv_output_shape("conv2d", p, ws, input->shape), input->dtype, dev);
  TensorPtr result = batched ? out : squeeze(out, Dims{0});
  if (out->numel() == 0) return result;
  if (x->numel() == 0) {
    // No input channels or no input pixels: every output is padding times weights, i.e. the bias.
    if (bias) copy_into(out, expand(view(bias, {1, p.O, 1, 1}), out->shape));
    else fill_into(out, Scalar::from_int(0));
    if (should_record({&input, &weight, &bias})) record_conv2d(input, weight, bias, o, result);
    return result;
  }

  std::vector<Operand> ins{x, weight};
  if (bias) ins.push_back(bias);
  run_op_into(OpId::conv2d, std::move(ins), conv_args(p), out);
  if (should_record({&input, &weight, &bias})) record_conv2d(input, weight, bias, o, result);
  return result;
}

namespace {

// The checks the two backward ops share, in the project's order: devices, dtypes (grad_output's
// a floating dtype the device has a kernel for, `other` the same), then the shapes: `given` is the
// shape the caller passes (the input's or the weight's), grad_output must be what the forward
// makes. Returns the plan; `*batched` tells whether the input is (N, C, H, W).
ConvPlan check_backward(OpId op, const TensorPtr& grad_out, const TensorPtr& other, const char* other_name,
                        const Shape& x_shape, const Shape& w_shape, bool* batched, const Conv2dOptions& o) {
  const char* name = op_row(op).name;
  const std::string tag = std::string("[") + name + "] ";
  check_same_device(name, {{"grad_output", grad_out.get()}, {other_name, other.get()}});
  check_dtype_supported(op, grad_out->dtype, grad_out->device());
  if (other->dtype != grad_out->dtype)
    throw TypeError(tag + "grad_output and " + other_name + " must have the same dtype, got grad_output " +
                    dtype_name(grad_out->dtype) + ", " + other_name + " " + dtype_name(other->dtype));
  if (x_shape.size() != 3 && x_shape.size() != 4)
    throw ValueError(tag + "expected a 3-D (unbatched) or 4-D (batched) input, got input of shape " +
                     shape_str(x_shape));
  if (w_shape.size() != 4)
    throw ValueError(tag + "weight must be 4-D (out_channels, in_channels / groups, kH, kW), got shape " +
                     shape_str(w_shape));
  for (const Shape* s : {&x_shape, &w_shape})
    for (int64_t d : *s)
      if (d < 0) throw ValueError(tag + "shapes must be non-negative, got " + shape_str(*s));
  *batched = x_shape.size() == 4;
  Shape x4 = x_shape;
  if (!*batched) x4.insert(x4.begin(), 1);
  const ConvPlan p = plan_conv(name, x4, w_shape, x_shape, o);
  Shape want = conv_output_shape(name, p, w_shape, x_shape);
  if (!*batched) want.erase(want.begin());
  if (grad_out->shape != want)
    throw ValueError(tag + "grad_output has shape " + shape_str(grad_out->shape) + ", but the convolution of input " +
                     shape_str(x_shape) + " with weight " + shape_str(w_shape) + " gives " + shape_str(want));
  return p;
}

TensorPtr as_batched(const TensorPtr& t, bool batched) { return batched ? t : unsqueeze(t, 0); }

}  // namespace

TensorPtr conv2d_backward_input(const TensorPtr& grad_out, const TensorPtr& weight, const Shape& input_shape,
                                const Conv2dOptions& o) {
  OpScope scope("conv2d_backward_input");  // named by OutOfMemoryError
  bool batched;
  const ConvPlan p = check_backward(OpId::conv2d_backward_input, grad_out, weight, "weight", input_shape,
                                    weight->shape, &batched, o);
  TensorPtr gx = empty_tensor({p.N, p.C, p.H, p.W}, grad_out->dtype, grad_out->device());
  TensorPtr result = batched ? gx : squeeze(gx, Dims{0});
  if (gx->numel() == 0) return result;
  if (grad_out->numel() == 0 || weight->numel() == 0) {  // no output channels
    fill_into(gx, Scalar::from_int(0));
    return result;
  }
  run_op_into(OpId::conv2d_backward_input, {as_batched(grad_out, batched), weight}, conv_args(p), gx);
  return result;
}

TensorPtr conv2d_backward_weight(const TensorPtr& grad_out, const TensorPtr& input, const Shape& weight_shape,
                                 const Conv2dOptions& o) {
  OpScope scope("conv2d_backward_weight");  // named by OutOfMemoryError
  bool batched;
  const ConvPlan p = check_backward(OpId::conv2d_backward_weight, grad_out, input, "input", input->shape,
                                    weight_shape, &batched, o);
  TensorPtr gw = empty_tensor(weight_shape, grad_out->dtype, grad_out->device());
  if (gw->numel() == 0) return gw;
  if (grad_out->numel() == 0 || input->numel() == 0) {  // no images, or only padding: no gradient
    fill_into(gw, Scalar::from_int(0));
    return gw;
  }
  run_op_into(OpId::conv2d_backward_weight, {as_batched(grad_out, batched), as_batched(input, batched)},
              conv_args(p), gw);
  return gw;
}

}  // namespace bm
