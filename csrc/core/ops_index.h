// Indexing with torch's rules: t[idx] (index) and t[idx] = value (index_put_), and the ops they are
// built from: index_select, index_add, index_copy_, nonzero.
//
// Basic indices (ints, slices with positive steps, None, Ellipsis) give views: select / slice /
// unsqueeze. A slice with a negative step (torch refuses them; NumPy allows them) selects the same
// elements as a positive-step slice, reversed: t[idx] returns a flipped copy (not a view: kernels
// take non-negative strides only), and t[idx] = v writes v flipped into the positive-step view
// (together with tensor indices: UnsupportedError). Advanced indices (int32/int64 tensors, bool masks, Python bools) follow torch:
//   - a bool mask of k dims consumes k dims and becomes k index tensors through nonzero();
//   - a Python bool (or 0-d bool tensor) adds a dim of size 1 indexed by [0] (True) or [] (False);
//   - a 0-d integer tensor is an int (a view);
//   - the index tensors broadcast together to a shape B; when they index adjacent dims of the view
//     (after ints have removed theirs), B replaces those dims in place, otherwise B goes first;
//   - negative indices count from the end; out-of-range ones raise IndexError naming the op, the
//     index and the dim, found on the host before anything is launched (reading a device index
//     waits for the work that produces it).
// The advanced part is a composition of public ops — permute, reshape / view, index_select and
// reshape — so autograd's rules for those ops give the gradient of x[idx]: the dims indexed by
// advanced indices are merged into one (permuted to the front first when they are not adjacent)
// and rows are gathered by linear indices computed on the host.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "core/ops.h"

namespace bm {

struct TensorIndex {
  enum class Kind : uint8_t { Int, Slice, None, Ellipsis, Bool, Tensor };
  Kind kind = Kind::None;
  int64_t i = 0;                       // Int
  std::optional<int64_t> start, stop;  // Slice (Python semantics; nullopt = omitted)
  int64_t step = 1;                    // Slice; != 0 (a negative step gives a flipped copy)
  bool b = false;                      // Bool
  TensorPtr t;                         // Tensor: int32/int64 indices or a bool mask

  static TensorIndex from_int(int64_t v);
  static TensorIndex from_slice(std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step = 1);
  static TensorIndex none();
  static TensorIndex ellipsis();
  static TensorIndex from_bool(bool v);
  static TensorIndex from_tensor(TensorPtr t);
};

// t[idx]. Basic indexing only: a view of t. With advanced indices: a new tensor.
TensorPtr index(const TensorPtr& t, const std::vector<TensorIndex>& idx);

// t[idx] = value. value: a tensor broadcastable to the shape of t[idx] (leading size-1 dims are
// ignored, as torch does) or a Python number; converted to t's dtype. Duplicate advanced indices:
// the last write (in index order) wins, on every device. Errors name "index_put".
void index_put_(const TensorPtr& t, const std::vector<TensorIndex>& idx, const Operand& value);

// Rows index[k] of x along dim: x.shape with shape[dim] = index.numel(). index: 0-d or 1-D, int32
// or int64, any strides, values in [0, x.shape[dim]) (IndexError otherwise). A 0-d x is treated
// as shape (1,), and the result is 0-d again.
TensorPtr index_select(const TensorPtr& x, int64_t dim, const TensorPtr& index);

// Out of place: base with src's slice k added to base's slice index[k] along dim; duplicated
// indices accumulate, in index order (deterministic; cpu and metal give the same bits: each
// output element adds its contributions in order, half types in float32). This is the gradient of
// index_select and of embedding. src: base's dtype and shape, but shape[dim] = index.numel().
// Cost: the index is read on the host (a queue wait on Metal when a kernel produced it) and
// turned into per-row lists (O(index + base.shape[dim]) host work and upload); then one pass over
// the output, each element reading base and its contributions: O(base.numel() + src.numel()).
TensorPtr index_add(const TensorPtr& base, int64_t dim, const TensorPtr& index, const TensorPtr& src);

// In place: t's slice index[k] along dim := src's slice k (torch's index_copy_). Duplicated
// indices: the last one wins. src: t's dtype; shape as for index_add. This is index_put_'s writer.
void index_copy_(const TensorPtr& t, int64_t dim, const TensorPtr& index, const TensorPtr& src);

// Indices of the nonzero elements (NaN counts), int64 (n, t.ndim), in row-major order as torch.
// n is counted first (a sum read on the host: a queue wait on Metal).
TensorPtr nonzero(const TensorPtr& t);

// The values of an int32/int64 tensor in row-major logical order, read on the host (waits for
// the work that writes it).
std::vector<int64_t> index_values_on_host(const Tensor& t);

}  // namespace bm
