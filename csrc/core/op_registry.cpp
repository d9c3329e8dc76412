#include "core/op_registry.h"

#include "autograd/rules.h"

namespace bm {

const std::vector<OpRow>& all_ops() {
  static const std::vector<OpRow> rows = {
#define BM_OP_ROW(name, nin, nout, dr, sr, dt) OpRow{#name, nin, nout, DTypeRule::dr, ShapeRule::sr, dt, grad_rule(OpId::name)},
      BM_OPS(BM_OP_ROW)
#undef BM_OP_ROW
  };
  return rows;
}

const OpRow& op_row(OpId id) { return all_ops()[size_t(id)]; }

template <> bool Scalar::to<bool>() const { return kind == Float ? f != 0 : i != 0; }
// The 8- and 16-bit integers wrap (through int64), as the casts of csrc/cpu/convert.h do.
template <> int8_t Scalar::to<int8_t>() const { return int8_t(kind == Float ? int64_t(f) : i); }
template <> uint8_t Scalar::to<uint8_t>() const { return uint8_t(kind == Float ? int64_t(f) : i); }
template <> int16_t Scalar::to<int16_t>() const { return int16_t(kind == Float ? int64_t(f) : i); }
template <> int32_t Scalar::to<int32_t>() const { return kind == Float ? int32_t(f) : int32_t(i); }
template <> int64_t Scalar::to<int64_t>() const { return kind == Float ? int64_t(f) : i; }
template <> float Scalar::to<float>() const { return kind == Float ? float(f) : float(i); }
template <> double Scalar::to<double>() const { return kind == Float ? f : double(i); }
template <> half_t Scalar::to<half_t>() const { return half_t(to<float>()); }
template <> bfloat16_t Scalar::to<bfloat16_t>() const { return bfloat16_t(to<float>()); }

}  // namespace bm
