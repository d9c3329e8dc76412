// exp for float32 written with plain arithmetic and selects (bm_exp_f32 from shaders/bm_exp_f32.h,
// the formula the shaders use too), for scalar calls from baseline code: softmax's column mode and
// its backward. The vectorised loops are in activation_f32.cpp and softmax_rows.cpp.
#pragma once

#include "bm_exp_f32.h"  // shaders/bm_exp_f32.h: the formula, shared with the Metal shaders

namespace bm::cpu {

inline float exp_f32(float x) { return bm_exp_f32(x); }

}  // namespace bm::cpu
