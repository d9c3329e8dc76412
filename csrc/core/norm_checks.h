// Argument checks shared by the normalisation ops and their backwards (ops_nn_norm.cpp,
// ops_nn_norm_backward.cpp), so a forward and its backward reject the same arguments with the same
// words (under their own [op] names).
#pragma once
#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "core/ops.h"

namespace bm::norm_detail {

using Named = std::vector<std::pair<const char*, const Tensor*>>;

// The given (non-null) tensors with their torch argument names, in the order given.
inline Named named(std::initializer_list<std::pair<const char*, const TensorPtr*>> args) {
  Named n;
  for (const auto& [name, t] : args)
    if (*t) n.push_back({name, t->get()});
  return n;
}

inline void check_floating(const char* op, const char* name, const Tensor& t) {
  if (!is_floating(t.dtype))
    throw UnsupportedError(std::string("[") + op + "] " + name + " must be a floating point tensor, got " +
                           dtype_name(t.dtype));
}

// The compute dtype of the statistics (and of batch_norm's scale/shift and the parameter
// gradients): float32, float64 for float64 inputs.
inline DType acc_dtype(DType input) { return input == DType::Float64 ? DType::Float64 : DType::Float32; }

// layer_norm's normalized_shape ns: at least one dim, and the input's trailing dims.
inline void check_normalized_shape(const char* op, const Shape& ns, const Tensor& input) {
  const size_t k = ns.size(), nd = input.shape.size();
  if (k == 0) throw ValueError(std::string("[") + op + "] normalized_shape must have at least one dim, got ()");
  if (k > nd || !std::equal(ns.begin(), ns.end(), input.shape.end() - int64_t(k)))
    throw ValueError(std::string("[") + op + "] normalized_shape " + shape_str(ns) + " does not match the input's shape " +
                     shape_str(input.shape) + ": its last " + std::to_string(k) + " dims must be " + shape_str(ns));
}

// layer_norm's parameters (args[from..]) are shaped normalized_shape.
inline void check_param_shapes(const char* op, const Named& args, size_t from, const Shape& ns) {
  for (size_t i = from; i < args.size(); ++i)
    if (args[i].second->shape != ns)
      throw ValueError(std::string("[") + op + "] " + args[i].first + " has shape " + shape_str(args[i].second->shape) +
                       " but normalized_shape is " + shape_str(ns));
}

}  // namespace bm::norm_detail
