// Argument struct of the row ops in shaders/scan.metal (cumsum, cumprod, argsort), shared by the
// host (csrc/metal/ops_scan.cpp) and the shaders; included by kargs.h's users through scan.metal
// only, so the other families' argument headers stay untouched.
#pragma once
#include "kargs.h"

// One op along one dim of length `len`; the other dims, merged like ReduceArgs' kept dims, number
// the rows (row-major). Strides and offsets are in elements. flag: argsort's descending order.
struct ScanArgs {
  bm_i64 n_rows;
  bm_i64 len;
  bm_i64 in_offset;
  bm_i64 out_offset;
  bm_i64 in_stride;    // along the dim
  bm_i64 out_stride;
  bm_i32 ndim;
  bm_i32 flag;
  bm_i64 shape[BM_MAX_DIMS];
  bm_i64 in_strides[BM_MAX_DIMS];
  bm_i64 out_strides[BM_MAX_DIMS];
};
