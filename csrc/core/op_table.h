// THE table of ops that have kernels. One row per op; the registry, the dispatcher, the coverage
// matrix, the docs table and the every-op-on-every-backend test all read it.
//
//   BM_OP(name, inputs, outputs, dtype rule, shape rule, dtypes the op accepts)
//
// dtype rules (see dispatch.cpp):
//   Same        output dtype = input dtype
//   ToFloat     bool/int inputs are cast to the default float dtype first (exp, sin, true divide...)
//   Promote     inputs promoted together (torch.result_type); output = that dtype
//   PromoteFloat  as Promote, then bool/int -> default float
//   Compare     computed in the promoted dtype, output bool
//   Where       cond must be bool; a and b promoted
//   SumLike     bool/int -> int64, floats keep their dtype
//   FloatOnly   floating inputs only; output = input dtype
//   Index       output int64
//   Cast        output dtype given by the caller (copy); Factory: no inputs, dtype given
// shape rules: Elementwise (broadcast), Reduce (dims, keepdim), SameShape, Matmul, Given
#define BM_OPS(X)                                                              \
  X(copy,        1, 1, Cast,         Elementwise, kAllMask)                     \
  X(fill,        0, 1, Factory,      Given,       kAllMask)                     \
  X(arange,      0, 1, Factory,      Given,       kAllMask & ~bit(DType::Bool)) \
  X(neg,         1, 1, Same,         Elementwise, kFloatMask | kIntMask)        \
  X(abs,         1, 1, Same,         Elementwise, kFloatMask | kIntMask)        \
  X(relu,        1, 1, Same,         Elementwise, kFloatMask | kIntMask)        \
  X(clamp,       1, 1, Same,         Elementwise, kFloatMask | kIntMask)        \
  X(exp,         1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(log,         1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(sqrt,        1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(rsqrt,       1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(sin,         1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(cos,         1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(tanh,        1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(sigmoid,     1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(add,         2, 1, Promote,      Elementwise, kAllMask)                     \
  X(sub,         2, 1, Promote,      Elementwise, kFloatMask | kIntMask)        \
  X(mul,         2, 1, Promote,      Elementwise, kAllMask)                     \
  X(div,         2, 1, PromoteFloat, Elementwise, kFloatMask)                   \
  X(pow,         2, 1, Promote,      Elementwise, kFloatMask | kIntMask)        \
  X(maximum,     2, 1, Promote,      Elementwise, kAllMask)                     \
  X(minimum,     2, 1, Promote,      Elementwise, kAllMask)                     \
  X(eq,          2, 1, Compare,      Elementwise, kAllMask)                     \
  X(ne,          2, 1, Compare,      Elementwise, kAllMask)                     \
  X(lt,          2, 1, Compare,      Elementwise, kAllMask)                     \
  X(le,          2, 1, Compare,      Elementwise, kAllMask)                     \
  X(gt,          2, 1, Compare,      Elementwise, kAllMask)                     \
  X(ge,          2, 1, Compare,      Elementwise, kAllMask)                     \
  X(where,       3, 1, Where,        Elementwise, kAllMask)                     \
  X(sum,         1, 1, SumLike,      Reduce,      kAllMask)                     \
  X(mean,        1, 1, FloatOnly,    Reduce,      kFloatMask)                   \
  X(var,         1, 1, FloatOnly,    Reduce,      kFloatMask)                   \
  X(amax,        1, 1, Same,         Reduce,      kAllMask)                     \
  X(amin,        1, 1, Same,         Reduce,      kAllMask)                     \
  X(argmax,      1, 1, Index,        Reduce,      kFloatMask | kIntMask)        \
  X(argmin,      1, 1, Index,        Reduce,      kFloatMask | kIntMask)        \
  X(softmax,     1, 1, FloatOnly,    SameShape,   kFloatMask)                   \
  X(log_softmax, 1, 1, FloatOnly,    SameShape,   kFloatMask)                   \
  X(matmul,      2, 1, Promote,      Matmul,      kFloatMask | kIntMask)     \
  X(uniform,     0, 1, Factory,      Given,       kFloatMask)                   \
  X(normal,      0, 1, Factory,      Given,       kFloatMask)                   \
  X(max_pool2d,  1, 1, Same,         Given,       kFloatMask | kIntMask)        \
  X(avg_pool2d,  1, 1, FloatOnly,    Given,       kFloatMask)                   \
  X(adaptive_avg_pool2d, 1, 1, FloatOnly, Given,  kFloatMask)                   \
  X(gelu,        1, 1, FloatOnly,    Elementwise, kFloatMask)                   \
  X(gelu_tanh,   1, 1, FloatOnly,    Elementwise, kFloatMask)                   \
  X(silu,        1, 1, FloatOnly,    Elementwise, kFloatMask)                   \
  X(layer_norm,  3, 1, FloatOnly,    Given,       kFloatMask)                   \
  X(batch_norm,  3, 1, Cast,         Given,       kFloatMask)                   \
  X(dropout,     1, 1, FloatOnly,    SameShape,   kFloatMask)                   \
  X(embedding,   2, 1, Cast,         Given,       kAllMask)                     \
  X(nll_loss,    3, 1, Cast,         Given,       kFloatMask)                   \
  X(conv2d,      3, 1, FloatOnly,    Given,       kFloatMask)                   \
  /* conv / pool backward (ops_nn_conv.cpp, ops_nn_pool.cpp) */                  \
  X(conv2d_backward_input,  2, 1, FloatOnly, Given, kFloatMask)                 \
  X(conv2d_backward_weight, 2, 1, FloatOnly, Given, kFloatMask)                 \
  X(max_pool2d_with_indices, 1, 1, Index,    Given, kFloatMask | kIntMask)      \
  X(max_pool2d_backward,    2, 1, Cast,      Given, kFloatMask)                 \
  X(avg_pool2d_backward,    1, 1, FloatOnly, Given, kFloatMask)                 \
  X(adaptive_avg_pool2d_backward, 1, 1, FloatOnly, Given, kFloatMask)           \
  /* backward kernels (h2): gradient rules that need their own kernel */       \
  X(softmax_backward,     2, 1, FloatOnly, SameShape,   kFloatMask)            \
  X(log_softmax_backward, 2, 1, FloatOnly, SameShape,   kFloatMask)            \
  X(gelu_backward,        2, 1, FloatOnly, Elementwise, kFloatMask)            \
  X(gelu_tanh_backward,   2, 1, FloatOnly, Elementwise, kFloatMask)            \
  X(silu_backward,        2, 1, FloatOnly, Elementwise, kFloatMask)            \
  X(relu_backward,        2, 1, FloatOnly, Elementwise, kFloatMask)            \
  X(layer_norm_backward,  3, 1, FloatOnly, Given,       kFloatMask)            \
  X(batch_norm_backward,  3, 1, Cast,      Given,       kFloatMask)            \
  X(nll_loss_backward,    3, 1, Cast,      Given,       kFloatMask)             \
  /* ---- optimizers (core/ops_optim.cpp): fused in-place steps, out = the parameter ---- */ \
  X(sgd_step,    2, 1, Cast,         Given,       kFloatMask)                   \
  X(adam_step,   4, 1, Cast,         Given,       kFloatMask)                   \
  /* ---- indexing, floor_divide / remainder, any / all (core/ops_index.h, core/ops_math.h) ---- */ \
  X(index_select, 2, 1, Cast,        Given,       kAllMask)                     \
  X(index_add,   3, 1, Cast,         Given,       kAllMask)                     \
  X(index_copy,  2, 1, Cast,         Given,       kAllMask)                     \
  X(nonzero,     1, 1, Index,        Given,       kAllMask)                     \
  X(floor_divide, 2, 1, Promote,     Elementwise, kFloatMask | kIntMask)        \
  X(remainder,   2, 1, Promote,      Elementwise, kFloatMask | kIntMask)        \
  X(any,         1, 1, Compare,      Reduce,      kAllMask)                     \
  X(all,         1, 1, Compare,      Reduce,      kAllMask)                     \
  /* ---- prod, scans, sort (core/ops_scan.h, core/ops_stats.h) ---- */          \
  X(prod,        1, 1, SumLike,      Reduce,      kAllMask)                     \
  X(cumsum,      1, 1, SumLike,      SameShape,   kAllMask)                     \
  X(cumprod,     1, 1, SumLike,      SameShape,   kAllMask)                     \
  X(argsort,     1, 1, Index,        SameShape,   kAllMask)                     \
  /* ---- dtypes / factories (core/random.cpp): randint ---- */                 \
  X(randint,     0, 1, Factory,      Given,       kIntMask | kFloatMask)        \
  /* ---- elementwise math (core/ops_elementwise.h; cpu/unary_math.cpp, cpu/binary_math.cpp) ---- */ \
  X(log1p,       1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(expm1,       1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(log2,        1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(log10,       1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(exp2,        1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(erf,         1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(erfinv,      1, 1, ToFloat,      Elementwise, kFloatMask)                   \
  X(sign,        1, 1, Same,         Elementwise, kAllMask)                     \
  X(floor,       1, 1, Same,         Elementwise, kFloatMask | kIntMask)        \
  X(ceil,        1, 1, Same,         Elementwise, kFloatMask | kIntMask)        \
  X(round,       1, 1, Same,         Elementwise, kFloatMask | kIntMask)        \
  X(trunc,       1, 1, Same,         Elementwise, kFloatMask | kIntMask)        \
  X(frac,        1, 1, Same,         Elementwise, kFloatMask)                   \
  X(nan_to_num,  1, 1, Same,         Elementwise, kAllMask)                     \
  X(isnan,       1, 1, Compare,      Elementwise, kAllMask)                     \
  X(isinf,       1, 1, Compare,      Elementwise, kAllMask)                     \
  X(isfinite,    1, 1, Compare,      Elementwise, kAllMask)                     \
  X(logical_not, 1, 1, Compare,      Elementwise, kAllMask)                     \
  X(bitwise_not, 1, 1, Same,         Elementwise, kIntMask | bit(DType::Bool))  \
  X(atan2,       2, 1, PromoteFloat, Elementwise, kFloatMask)                   \
  X(hypot,       2, 1, Promote,      Elementwise, kFloatMask)                   \
  X(fmod,        2, 1, Promote,      Elementwise, kFloatMask | kIntMask)        \
  X(logical_and, 2, 1, Compare,      Elementwise, kAllMask)                     \
  X(logical_or,  2, 1, Compare,      Elementwise, kAllMask)                     \
  X(logical_xor, 2, 1, Compare,      Elementwise, kAllMask)                     \
  X(bitwise_and, 2, 1, Promote,      Elementwise, kIntMask | bit(DType::Bool))  \
  X(bitwise_or,  2, 1, Promote,      Elementwise, kIntMask | bit(DType::Bool))  \
  X(bitwise_xor, 2, 1, Promote,      Elementwise, kIntMask | bit(DType::Bool))  \
  X(lerp,        3, 1, Promote,      Elementwise, kFloatMask)

// dropout: args.p, seed, rng_offset (the mask: Philox, as uniform). embedding (input = int32/int64
// indices, weight) and nll_loss (input, int64 target, optional weight) use the Cast rule so their
// index inputs keep their dtype: the kernel runs in args.out_dtype, the weight's / input's dtype.
// conv / pool backward. conv2d_backward_input (grad_out, weight) and conv2d_backward_weight
// (grad_out, input) read the conv_* args of the forward; their output shape is the input's / the
// weight's. max_pool2d_with_indices: the int64 index (into H * W of its plane, as torch) of each
// window's maximum; the values come from the max_pool2d row. max_pool2d_backward (grad_out, int64
// indices; Cast: runs in args.out_dtype, the grad's dtype), avg_pool2d_backward and
// adaptive_avg_pool2d_backward (grad_out) read the pool_* args and write the input's gradient by
// gathering, for each input element, the gradients of the windows that cover it in a fixed order.

// Backward rows (h2). softmax_backward(grad, out) = out * (grad - sum(grad * out, dim));
// log_softmax_backward(grad, out) = grad - exp(out) * sum(grad, dim) (args.dim). gelu_backward,
// gelu_tanh_backward, silu_backward(grad, x) = grad * act'(x), broadcasting like binary ops.
// layer_norm_backward(grad, input [, weight]): grad_input, mean and rstd recomputed per row (norm_*
// args as layer_norm). batch_norm_backward(grad, input, coef): out = (grad * a + (x - mean) * k) + c
// per channel, coef a (C, 4) acc-dtype tensor [a, k, mean, c] viewed over the input's shape
// (norm_training = false: out = grad * a). nll_loss_backward(grad, target [, weight]): the input's
// gradient, -w[t] * grad at each target's class, 0 elsewhere and at ignore_index.
// sgd_step (grad[, momentum_buffer]) and adam_step (grad, exp_avg, exp_avg_sq[, max_exp_avg_sq])
// update their output, the parameter, and their state inputs in place, in one pass; every tensor
// has the parameter's shape and dtype (the Cast rule: args.out_dtype = the parameter's dtype).

// index_select (x, 1-D int32/int64 index): out = rows index[k] of x along args.index_dim.
// index_add (base, src, csr): out = base + src's rows summed into the rows named by the index, in
// index order; csr (int64) = [row_ptr (base.shape[dim] + 1 entries) | order (the index's positions
// sorted stably by target row)], built on the host by core/ops_index.cpp. index_copy (src, pairs):
// writes rows of `out` in place: pairs (int64, shape (2, n)) = [target rows | source rows of src],
// targets unique (the host keeps the last write of each). nonzero: out (n, ndim) int64, given.
// floor_divide / remainder: torch's floor semantics; integer division by zero raises
// ZeroDivisionError (checked before anything is written). any / all: bool output, any input dtype.

// prod: a reduction like sum (bool/int -> int64, integers wrap like torch's int64 products; the
// product over zero elements is 1). cumsum / cumprod: inclusive scans along args.dim, in input order
// (half types accumulate in float, float32 in double on the CPU as torch does; integers in int64).
// argsort: int64 positions along args.dim that sort each row, stable (equal keys keep their order),
// NaN sorting as the largest value; args.descending reverses the order (NaN first), still stable.
//
// randint: out[i] = low + (Philox bits of element i) mod (high - low), args.s0 = low, s1 = high (ints),
// seed / rng_offset as uniform. A range of at most 2**32 takes one 32-bit word per element (block
// rng_offset + i / 4, word i % 4, as uniform); a wider one two words (block rng_offset + i / 2,
// words 2 * (i % 2) and the next, high word first), as float64 uniform draws them.
//
// Elementwise math (core/ops_elementwise.h), torch's dtype rules: floor / ceil / round / trunc of
// an integer tensor return it unchanged; sign keeps bool; isnan / isinf / isfinite and logical_*
// take any dtype and write bool (Compare computes nothing in the promoted dtype but the test);
// bitwise_* take integers and bool only. round: args.s0 = decimals (has_s0; none: 0), half to
// even. nan_to_num: args.s0 / s1 / s2 replace NaN / +inf / -inf where has_s0 / s1 / s2 (else 0,
// the dtype's largest / lowest finite value). fmod: C's truncated remainder (the dividend's sign);
// integer division by zero raises ZeroDivisionError, as remainder. lerp (input, end, weight):
// input + weight * (end - input), torch's two-sided formula.

// Kernels whose fast path is not deterministic (the same inputs may give different bits from run to
// run), as X(op, DeviceType) pairs: with bm.use_deterministic_algorithms(True) the dispatcher raises
// for them (core/determinism.h). Empty: every kernel reduces in a fixed order (the CPU's split
// reductions merge their fixed pieces in order; Metal's split reductions run a second pass over the
// partials; scatters are gathers over a host-sorted index; the shaders' only atomics are integer
// flags that any order sets alike). A kernel that adds float atomics, or merges partial results
// in arrival order, is listed here, e.g. `X(index_add, Metal)`, with a deterministic alternative
// chosen under the flag where one exists.
#define BM_NONDETERMINISTIC_OPS(X)
