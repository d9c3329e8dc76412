"""
bessemer C++ core
"""
from __future__ import annotations
import collections.abc
import numpy
import typing
import typing_extensions
__all__: list[str] = ['Device', 'DeviceMismatchError', 'Node', 'RaceError', 'Tensor', 'UnsupportedError', 'abs', 'adaptive_avg_pool2d', 'add', 'all', 'allclose', 'any', 'arange', 'are_deterministic_algorithms_enabled', 'arg_reduce', 'argsort', 'atan2', 'available_devices', 'avg_pool2d', 'batch_norm', 'bitwise_and', 'bitwise_not', 'bitwise_or', 'bitwise_xor', 'build_info', 'cast', 'cat', 'ceil', 'clamp', 'conv2d', 'copy_', 'cos', 'count_nonzero', 'cross_entropy', 'cumprod', 'cumsum', 'default_generator', 'device', 'diagonal', 'div', 'dropout', 'dtype', 'dtype_from_name', 'embedding', 'empty', 'empty_cache', 'eq', 'equal', 'erf', 'erfinv', 'exp', 'exp2', 'expm1', 'flip', 'floor', 'floor_divide', 'fmod', 'frac', 'from_dlpack', 'from_numpy', 'full', 'gather', 'ge', 'gelu', 'gelu_backward', 'gelu_tanh', 'gelu_tanh_backward', 'get_default_device', 'get_default_dtype', 'get_num_threads', 'gt', 'hypot', 'index_add', 'index_copy_', 'index_select', 'is_deterministic_algorithms_warn_only_enabled', 'is_grad_enabled', 'isclose', 'isfinite', 'isinf', 'isnan', 'layer_norm', 'le', 'lerp', 'linear', 'log', 'log10', 'log1p', 'log2', 'log_softmax', 'logical_and', 'logical_not', 'logical_or', 'logical_xor', 'logsumexp', 'lt', 'manual_seed', 'matmul', 'max_pool2d', 'max_pool2d_with_indices', 'maximum', 'median', 'median_dim', 'memory_stats', 'minimum', 'mul', 'nan_to_num', 'ne', 'neg', 'nll_loss', 'nonzero', 'normal_', 'op_table', 'pow', 'prod', 'queue_stats', 'randint_', 'randperm', 'reciprocal', 'relu', 'relu_', 'relu_backward', 'remainder', 'reset_peak_memory_stats', 'reset_queue_stats', 'roll', 'round', 'rsqrt', 'scatter', 'scatter_add', 'set_default_device', 'set_default_dtype', 'set_memory_limit', 'set_num_threads', 'sigmoid', 'sign', 'silu', 'silu_backward', 'sim_race_check', 'sim_set_race_check', 'sim_set_shuffle', 'sim_shuffle', 'sin', 'softmax', 'sort', 'sqrt', 'square', 'stack', 'std', 'sub', 'synchronize', 'tanh', 'to_device', 'topk', 'tril', 'triu', 'trunc', 'uniform_', 'unique', 'vector_norm', 'where']
class DeviceMismatchError(RuntimeError):
    pass
class UnsupportedError(TypeError):
    pass
class RaceError(RuntimeError):
    pass
class dtype:
    bfloat16: typing.ClassVar[dtype]
    bool: typing.ClassVar[dtype]
    float16: typing.ClassVar[dtype]
    float32: typing.ClassVar[dtype]
    float64: typing.ClassVar[dtype]
    int16: typing.ClassVar[dtype]
    int32: typing.ClassVar[dtype]
    int64: typing.ClassVar[dtype]
    int8: typing.ClassVar[dtype]
    uint8: typing.ClassVar[dtype]
    def __eq__(self: numpy.dtype[typing.Any], arg0: typing.Any) -> bool:
        ...
    def __hash__(self: numpy.dtype[typing.Any]) -> int:
        ...
    def __reduce__(self: numpy.dtype[typing.Any]) -> tuple[..., tuple[str]]:
        ...
    def __repr__(self: numpy.dtype[typing.Any]) -> str:
        ...
    def __str__(self: numpy.dtype[typing.Any]) -> str:
        ...
    @property
    def is_floating_point(self) -> bool:
        ...
    @property
    def itemsize(self) -> int:
        ...
    @property
    def name(self) -> str:
        ...
class Device:
    def __eq__(self, arg0: typing.Any) -> bool:
        ...
    def __hash__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def __str__(self) -> str:
        ...
    @property
    def description(self) -> str:
        ...
    @property
    def index(self) -> typing.Any:
        ...
    @property
    def type(self) -> str:
        ...
class Tensor:
    grad: typing.Any
    requires_grad: bool
    @staticmethod
    def bmm(input: Tensor, mat2: Tensor) -> Tensor:
        ...
    @staticmethod
    def chunk(input: Tensor, chunks: _int, dim: _int = 0) -> tuple:
        """
        At most ``chunks`` views of ceil(size / chunks) along ``dim`` (as torch: possibly fewer).
        """
    @staticmethod
    def diagonal(input: Tensor, offset: _int = 0, dim1: _int = 0, dim2: _int = 1) -> Tensor:
        """
        The diagonal (``offset`` above the main one) of dims dim1 and dim2, as the last dim; a view.
        """
    @staticmethod
    def flip(input: Tensor, dims) -> Tensor:
        ...
    @staticmethod
    def fliplr(input: Tensor) -> Tensor:
        ...
    @staticmethod
    def flipud(input: Tensor) -> Tensor:
        ...
    @staticmethod
    def gather(input: Tensor, dim: _int, index: Tensor, *, sparse_grad: _bool = False) -> Tensor:
        """
        out[...i...] = input[...index[...i...]... along dim]; index values in [0, size) (IndexError).
        """
    @staticmethod
    def ger(input: Tensor, vec2: Tensor) -> Tensor:
        """
        input[i] * vec2[j] (type promotion as mul).
        """
    @staticmethod
    def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
        """
        ``input`` with ``value`` (a number or a 0-d tensor, cast to input's dtype) where ``mask``.
        """
    @staticmethod
    def mm(input: Tensor, mat2: Tensor) -> Tensor:
        ...
    @staticmethod
    def moveaxis(input: Tensor, source, destination) -> Tensor:
        """
        Moves the dims ``source`` to the positions ``destination`` (ints or sequences); a view.
        """
    @staticmethod
    def movedim(input: Tensor, source, destination) -> Tensor:
        """
        Moves the dims ``source`` to the positions ``destination`` (ints or sequences); a view.
        """
    @staticmethod
    def narrow(input: Tensor, dim: _int, start, length: _int) -> Tensor:
        """
        Elements [start, start + length) along ``dim``; a view. ``start`` may be negative or a 0-d tensor.
        """
    @staticmethod
    def outer(input: Tensor, vec2: Tensor) -> Tensor:
        """
        input[i] * vec2[j] (type promotion as mul).
        """
    @staticmethod
    def repeat_interleave(input: Tensor, repeats = None, dim = None, *, output_size = None) -> Tensor:
        """
        Each element (slice along ``dim``; flattened when None) repeated ``repeats`` times (an int or
            a tensor of one value per element). repeat_interleave(repeats) alone gives the indices.
        """
    @staticmethod
    def roll(input: Tensor, shifts, dims = None) -> Tensor:
        ...
    @staticmethod
    def scatter(input: Tensor, dim: _int, index: Tensor, src = None, *, value = None, reduce = None) -> Tensor:
        """
        Out of place: ``input`` with src's elements (or ``value``) written at ``index`` along ``dim``.
            Duplicate targets: the last in the index's row-major order wins; reduce='add' adds them.
        """
    @staticmethod
    def scatter_add(input: Tensor, dim: _int, index: Tensor, src: Tensor) -> Tensor:
        """
        Out of place: ``input`` plus src's elements added at ``index`` along ``dim``, duplicates in
            index order (deterministic).
        """
    @staticmethod
    def split(tensor: Tensor, split_size_or_sections, dim: _int = 0) -> tuple:
        """
        Pieces of ``split_size`` along ``dim`` (the last one smaller), or of the listed sizes; views.
        """
    @staticmethod
    def swapaxes(input: Tensor, axis0: _int, axis1: _int) -> Tensor:
        ...
    @staticmethod
    def swapdims(input: Tensor, dim0: _int, dim1: _int) -> Tensor:
        ...
    @staticmethod
    def t(input: Tensor) -> Tensor:
        """
        The transpose of a 2-D tensor; a 0-d or 1-D tensor is returned as is (a view).
        """
    @staticmethod
    def tile(input: Tensor, dims) -> Tensor:
        ...
    @staticmethod
    def tril(input: Tensor, diagonal: _int = 0) -> Tensor:
        ...
    @staticmethod
    def triu(input: Tensor, diagonal: _int = 0) -> Tensor:
        ...
    @staticmethod
    def unbind(input: Tensor, dim: _int = 0) -> tuple:
        """
        The slices along ``dim``, each without that dim; views.
        """
    def __abs__(self) -> Tensor:
        ...
    def __add__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __and__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __array__(self, dtype: typing.Any = None, copy: typing.Any = None) -> typing.Any:
        ...
    def __array_ufunc__(self, ufunc, method: str, *inputs, **kwargs):
        ...
    def __bool__(self) -> bool:
        ...
    def __dlpack__(self, *, stream: typing.Any = None, max_version: typing.Any = None, dl_device: typing.Any = None, copy: typing.Any = None) -> typing.Any:
        """
        A DLPack capsule sharing this cpu tensor's memory (versioned when max_version >= (1, 0)).
        """
    def __dlpack_device__(self) -> tuple:
        ...
    def __eq__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __float__(self):
        ...
    def __floordiv__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __ge__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __getitem__(self, arg0: typing.Any) -> Tensor:
        ...
    def __gt__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __hash__(self) -> int:
        ...
    def __iadd__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __iand__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __ifloordiv__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __imod__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __imul__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __index__(self):
        ...
    def __init__(self, data: Tensor) -> None:
        ...
    def __int__(self):
        ...
    def __invert__(self) -> Tensor:
        ...
    def __ior__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __isub__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __iter__(self):
        ...
    def __itruediv__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __ixor__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __le__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __len__(self) -> int:
        ...
    def __lt__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __matmul__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __mod__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __mul__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __ne__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __neg__(self) -> Tensor:
        ...
    def __or__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __pow__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __radd__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __rand__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __reduce_ex__(self, protocol):
        ...
    def __repr__(self) -> str:
        ...
    def __rfloordiv__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __rmatmul__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __rmod__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __rmul__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __ror__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __rpow__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __rsub__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __rtruediv__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __rxor__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __setitem__(self, arg0: typing.Any, arg1: typing.Any) -> None:
        ...
    def __str__(self) -> str:
        ...
    def __sub__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __truediv__(self, arg0: typing.Any) -> typing.Any:
        ...
    def __xor__(self, arg0: typing.Any) -> typing.Any:
        ...
    def _check_writable(self, op: str) -> None:
        ...
    def _data_ptr(self) -> int:
        ...
    def _reduce(self, op: str, dim: typing.Any = None, keepdim: bool = False, correction: typing.SupportsFloat | typing.SupportsIndex = 1.0) -> Tensor:
        ...
    def _storage_id(self) -> int:
        ...
    def abs(self, *args, **kwargs):
        """
        abs(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def abs_(self) -> Tensor:
        ...
    def add(self, *args, **kwargs):
        """
        add(input: object, other: object) -> bessemer._core.Tensor
        """
    def add_(self, other: typing.Any, *, alpha: typing.Any = None) -> typing.Any:
        ...
    def all(self, *args, **kwargs):
        """
        True where every element (over ``dim``: None, an int or a tuple) is nonzero; bool output.
        """
    def allclose(self, *args, **kwargs):
        """
        True when every element of ``isclose(input, other, ...)`` is.
        """
    def amax(self, *args, **kwargs):
        ...
    def amin(self, *args, **kwargs):
        ...
    def any(self, *args, **kwargs):
        """
        True where any element (over ``dim``: None, an int or a tuple) is nonzero; bool output.
        """
    def argmax(self, *args, **kwargs):
        ...
    def argmin(self, *args, **kwargs):
        ...
    def argsort(self, *args, **kwargs):
        """
        The int64 indices that sort ``input`` along ``dim`` (stable; NaN as the largest value).
        """
    def atan2(self, *args, **kwargs):
        """
        atan2(input: object, other: object) -> bessemer._core.Tensor
        """
    def backward(self, gradient = None, retain_graph = None, create_graph: bool = False, inputs = None) -> None:
        """
        Accumulates the gradient of this tensor into the leaves' .grad (torch's Tensor.backward).
        """
    def bfloat16(self):
        ...
    def bitwise_and(self, *args, **kwargs):
        """
        bitwise_and(input: object, other: object) -> bessemer._core.Tensor
        """
    def bitwise_and_(self, other: typing.Any) -> Tensor:
        ...
    def bitwise_not(self, *args, **kwargs):
        """
        bitwise_not(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def bitwise_or(self, *args, **kwargs):
        """
        bitwise_or(input: object, other: object) -> bessemer._core.Tensor
        """
    def bitwise_or_(self, other: typing.Any) -> Tensor:
        ...
    def bitwise_xor(self, *args, **kwargs):
        """
        bitwise_xor(input: object, other: object) -> bessemer._core.Tensor
        """
    def bitwise_xor_(self, other: typing.Any) -> Tensor:
        ...
    def bool(self):
        ...
    def byte(self):
        ...
    def ceil(self, *args, **kwargs):
        """
        ceil(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def char(self):
        ...
    def clamp(self, *args, **kwargs):
        ...
    def clamp_(self, min: typing.Any = None, max: typing.Any = None) -> Tensor:
        ...
    def clip(self, *args, **kwargs):
        ...
    def clip_(self, min: typing.Any = None, max: typing.Any = None) -> Tensor:
        ...
    def clone(self) -> Tensor:
        ...
    def contiguous(self) -> Tensor:
        ...
    def copy_(self, src: Tensor) -> Tensor:
        ...
    def cos(self, *args, **kwargs):
        """
        cos(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def cos_(self) -> Tensor:
        ...
    def count_nonzero(self, *args, **kwargs):
        """
        int64 count of the nonzero elements over ``dim`` (an int or a tuple; None: every dim).
        """
    def cpu(self):
        ...
    def cumprod(self, *args, **kwargs):
        """
        Inclusive cumulative product along ``dim``; bool/int -> int64 unless ``dtype`` is given.
        """
    def cumsum(self, *args, **kwargs):
        """
        Inclusive cumulative sum along ``dim``; bool/int -> int64 unless ``dtype`` is given.
        """
    def detach(self) -> Tensor:
        ...
    def detach_(self) -> Tensor:
        ...
    def dim(self) -> int:
        ...
    def div(self, *args, **kwargs):
        """
        div(input: object, other: object) -> bessemer._core.Tensor
        """
    def div_(self, other: typing.Any) -> typing.Any:
        ...
    def double(self):
        ...
    def element_size(self) -> int:
        ...
    def eq(self, *args, **kwargs):
        """
        eq(input: object, other: object) -> bessemer._core.Tensor
        """
    def equal(self, *args, **kwargs):
        """
        True when both tensors have the same shape and elements (NaN is not equal to itself).
        """
    def erf(self, *args, **kwargs):
        """
        erf(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def erfinv(self, *args, **kwargs):
        """
        erfinv(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def exp(self, *args, **kwargs):
        """
        exp(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def exp2(self, *args, **kwargs):
        """
        exp2(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def exp_(self) -> Tensor:
        ...
    def expand(self, *args) -> Tensor:
        ...
    def expm1(self, *args, **kwargs):
        """
        expm1(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def fill_(self, value: typing.Any) -> Tensor:
        ...
    def flatten(self, start_dim: typing.Any = 0, end_dim: typing.Any = -1) -> Tensor:
        ...
    def float(self):
        ...
    def floor(self, *args, **kwargs):
        """
        floor(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def floor_divide(self, *args, **kwargs):
        """
        floor_divide(input: object, other: object) -> bessemer._core.Tensor
        """
    def floor_divide_(self, other: typing.Any) -> Tensor:
        ...
    def fmod(self, *args, **kwargs):
        """
        fmod(input: object, other: object) -> bessemer._core.Tensor
        """
    def fmod_(self, other: typing.Any) -> Tensor:
        ...
    def frac(self, *args, **kwargs):
        """
        frac(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def ge(self, *args, **kwargs):
        """
        ge(input: object, other: object) -> bessemer._core.Tensor
        """
    def gt(self, *args, **kwargs):
        """
        gt(input: object, other: object) -> bessemer._core.Tensor
        """
    def half(self):
        ...
    def hypot(self, *args, **kwargs):
        """
        hypot(input: object, other: object) -> bessemer._core.Tensor
        """
    def index_add(self, *args, **kwargs):
        """
        Out of place: ``input`` with ``alpha * source``'s slices added at ``index`` along ``dim``;
            duplicate indices accumulate in index order (deterministic).
        """
    def index_add_(self, dim: int, index: Tensor, source: Tensor, *, alpha = 1) -> Tensor:
        """
        In place: self's slices at ``index`` along ``dim`` += ``alpha * source``'s.
        """
    def index_copy(self, *args, **kwargs):
        """
        Out of place: a copy of ``input`` with slices ``index`` along ``dim`` replaced by ``source``'s.
        """
    def index_copy_(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
        """
        In place: self's slices at ``index`` along ``dim`` := ``source``'s (the last duplicate wins).
        """
    def index_select(self, *args, **kwargs):
        """
        Rows ``index`` (0-d or 1-D, int32/int64, values in [0, size)) of ``input`` along ``dim``.
        """
    def int(self):
        ...
    def is_contiguous(self) -> bool:
        ...
    def isclose(self, *args, **kwargs):
        """
        |input - other| <= atol + rtol * |other| elementwise (equal infinities are close; NaN only
            with ``equal_nan``); both inputs of one dtype, broadcasting.
        """
    def isfinite(self, *args, **kwargs):
        """
        isfinite(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def isinf(self, *args, **kwargs):
        """
        isinf(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def isnan(self, *args, **kwargs):
        """
        isnan(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def item(self) -> typing.Any:
        ...
    def le(self, *args, **kwargs):
        """
        le(input: object, other: object) -> bessemer._core.Tensor
        """
    def lerp(self, *args, **kwargs):
        """
        lerp(input: bessemer._core.Tensor, end: bessemer._core.Tensor, weight: object) -> bessemer._core.Tensor
        """
    def log(self, *args, **kwargs):
        """
        log(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def log10(self, *args, **kwargs):
        """
        log10(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def log1p(self, *args, **kwargs):
        """
        log1p(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def log2(self, *args, **kwargs):
        """
        log2(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def log_(self) -> Tensor:
        ...
    def log_softmax(self, *args, **kwargs):
        ...
    def logical_and(self, *args, **kwargs):
        """
        logical_and(input: object, other: object) -> bessemer._core.Tensor
        """
    def logical_not(self, *args, **kwargs):
        """
        logical_not(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def logical_or(self, *args, **kwargs):
        """
        logical_or(input: object, other: object) -> bessemer._core.Tensor
        """
    def logical_xor(self, *args, **kwargs):
        """
        logical_xor(input: object, other: object) -> bessemer._core.Tensor
        """
    def logsumexp(self, *args, **kwargs):
        """
        log(sum(exp(x))) over ``dim`` (an int or a tuple; None: every dim), computed stably.
        """
    def long(self):
        ...
    def lt(self, *args, **kwargs):
        """
        lt(input: object, other: object) -> bessemer._core.Tensor
        """
    def masked_fill_(self, *args, **kwargs) -> Tensor:
        """
        In place: masked_fill.
        """
    def matmul(self, *args, **kwargs):
        """
        matmul(input: bessemer._core.Tensor, other: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def max(self, *args, **kwargs):
        """
        max(x) -> tensor; max(x, dim) -> (values, indices); max(x, y) -> maximum(x, y).
        """
    def maximum(self, *args, **kwargs):
        """
        maximum(input: object, other: object) -> bessemer._core.Tensor
        """
    def mean(self, *args, **kwargs):
        ...
    def median(self, *args, **kwargs):
        """
        The lower median: of every element (a 0-d tensor), or along ``dim`` as (values, indices).
            NaN propagates, as torch.
        """
    def min(self, *args, **kwargs):
        """
        min(x) -> tensor; min(x, dim) -> (values, indices); min(x, y) -> minimum(x, y).
        """
    def minimum(self, *args, **kwargs):
        """
        minimum(input: object, other: object) -> bessemer._core.Tensor
        """
    def mul(self, *args, **kwargs):
        """
        mul(input: object, other: object) -> bessemer._core.Tensor
        """
    def mul_(self, other: typing.Any) -> typing.Any:
        ...
    def nan_to_num(self, *args, **kwargs):
        """
        NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf``; a missing bound is the
            dtype's largest (lowest) finite value. Integer and bool tensors come back unchanged (a copy).
        """
    def ne(self, *args, **kwargs):
        """
        ne(input: object, other: object) -> bessemer._core.Tensor
        """
    def neg(self, *args, **kwargs):
        """
        neg(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def neg_(self) -> Tensor:
        ...
    def nonzero(self, *args, **kwargs):
        """
        Indices of the nonzero elements: int64 (n, ndim), row-major order; ``as_tuple``: one 1-D
            tensor per dim (a 0-d input counts as 1-D, as torch).
        """
    def norm(self, *args, **kwargs):
        """
        torch.norm: the vector p-norm over ``dim`` (all elements by default); 'fro' is the 2-norm.
        """
    def numel(self) -> int:
        ...
    def numpy(self) -> numpy.ndarray:
        ...
    def permute(self, *args) -> Tensor:
        ...
    def pow(self, *args, **kwargs):
        """
        pow(input: object, other: object) -> bessemer._core.Tensor
        """
    def prod(self, *args, **kwargs):
        """
        Product of every element, or along one dim; bool/int -> int64 unless ``dtype`` is given.
        """
    def reciprocal(self, *args, **kwargs):
        """
        reciprocal(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def register_post_accumulate_grad_hook(self, hook) -> RemovableHandle:
        """
        Runs ``hook(self)`` each time backward has added into this leaf's ``.grad`` (torch's method of this
            name); returns a handle whose ``remove()`` unregisters it. An exception from the hook ends the
            backward pass and reaches its caller.
        """
    def relu(self, *args, **kwargs):
        """
        relu(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def relu_(self) -> Tensor:
        ...
    def remainder(self, *args, **kwargs):
        """
        remainder(input: object, other: object) -> bessemer._core.Tensor
        """
    def remainder_(self, other: typing.Any) -> Tensor:
        ...
    def repeat(self, *sizes) -> Tensor:
        """
        Tensor.repeat: the tensor tiled sizes[i] times along each dim (leading sizes add dims).
        """
    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        ...
    def reshape(self, *args) -> Tensor:
        ...
    def retain_grad(self) -> None:
        ...
    def round(self, *args, **kwargs):
        """
        Rounds half to even; ``decimals`` rounds to that many decimal places (negative: to tens,
            hundreds...), computed as torch does: round(x * 10**decimals) / 10**decimals.
        """
    def rsqrt(self, *args, **kwargs):
        """
        rsqrt(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def rsqrt_(self) -> Tensor:
        ...
    def scatter_(self, *args, **kwargs) -> Tensor:
        """
        In place: scatter.
        """
    def scatter_add_(self, *args, **kwargs) -> Tensor:
        """
        In place: scatter_add.
        """
    def short(self):
        ...
    def sigmoid(self, *args, **kwargs):
        """
        sigmoid(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def sigmoid_(self) -> Tensor:
        ...
    def sign(self, *args, **kwargs):
        """
        sign(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def sin(self, *args, **kwargs):
        """
        sin(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def sin_(self) -> Tensor:
        ...
    def size(self, dim: typing.Any = None) -> typing.Any:
        ...
    def softmax(self, *args, **kwargs):
        ...
    def sort(self, *args, **kwargs):
        """
        (values, indices) sorted along ``dim``; always stable; NaN sorts as the largest value.
        """
    def sqrt(self, *args, **kwargs):
        """
        sqrt(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def sqrt_(self) -> Tensor:
        ...
    def square(self, *args, **kwargs):
        """
        square(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def squeeze(self, dim: typing.Any = None) -> Tensor:
        ...
    def std(self, *args, **kwargs):
        """
        torch.std: sqrt(var), std(x, dim=None, *, correction=1, keepdim=False); also the older forms
            std(x, dim, unbiased, keepdim) and std(x, unbiased). Floating inputs only.
        """
    def storage_offset(self) -> int:
        ...
    def stride(self, dim: typing.Any = None) -> typing.Any:
        ...
    def sub(self, *args, **kwargs):
        """
        sub(input: object, other: object) -> bessemer._core.Tensor
        """
    def sub_(self, other: typing.Any, *, alpha: typing.Any = None) -> typing.Any:
        ...
    def sum(self, *args, **kwargs):
        ...
    def tanh(self, *args, **kwargs):
        """
        tanh(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def tanh_(self) -> Tensor:
        ...
    def to(self, *args, dtype = None, device = None, copy: bool = False) -> Tensor:
        """
        t.to(device), t.to(dtype), t.to(device, dtype), t.to(other_tensor).
        """
    def tolist(self) -> typing.Any:
        ...
    def topk(self, *args, **kwargs):
        """
        (values, indices) of the ``k`` largest (or smallest) elements along ``dim``, in sorted order
            (also when ``sorted=False``, which leaves the order unspecified in torch).
        """
    def transpose(self, dim0: typing.Any, dim1: typing.Any) -> Tensor:
        ...
    def tril_(self, *args, **kwargs) -> Tensor:
        """
        In place: tril.
        """
    def triu_(self, *args, **kwargs) -> Tensor:
        """
        In place: triu.
        """
    def trunc(self, *args, **kwargs):
        """
        trunc(input: bessemer._core.Tensor) -> bessemer._core.Tensor
        """
    def type(self, dtype = None, non_blocking = False):
        ...
    def unique(self, *args, **kwargs):
        """
        The unique elements (or slices along ``dim``) in ascending order, with the inverse indices
            and counts when asked. The comparisons run on the host: a tensor on a GPU device is copied
            back first (its queue is waited for); the results are on the input's device.
        """
    def unsqueeze(self, dim: typing.Any) -> Tensor:
        ...
    def var(self, *args, **kwargs):
        """
        torch.var: var(x, dim=None, *, correction=1, keepdim=False); also the older forms
            var(x, dim, unbiased, keepdim) and var(x, unbiased). N - correction <= 0 gives inf/nan.
        """
    def view(self, *args) -> Tensor:
        ...
    def where(self, condition, other):
        ...
    def zero_(self) -> Tensor:
        ...
    @property
    def T(self):
        ...
    @property
    def _version(self) -> int:
        ...
    @property
    def device(self) -> typing.Any:
        ...
    @property
    def dtype(self) -> typing.Any:
        ...
    @property
    def grad_fn(self) -> typing.Any:
        ...
    @property
    def is_leaf(self) -> bool:
        ...
    @property
    def is_readonly(self) -> bool:
        """
        True when the tensor's memory belongs to a read-only NumPy array: writes raise.
        """
    @property
    def mT(self) -> Tensor:
        ...
    @property
    def ndim(self) -> int:
        ...
    @property
    def retains_grad(self) -> bool:
        ...
    @property
    def shape(self) -> tuple:
        ...
class _Generator:
    def get_offset(self) -> int:
        ...
    def initial_seed(self) -> int:
        ...
    def manual_seed(self, arg0: int) -> None:
        ...
    def set_offset(self, arg0: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def device(self) -> typing.Any:
        ...
class Node:
    """
    A step of a recorded graph (a tensor's grad_fn).
    """
    def __repr__(self) -> str:
        ...
    def name(self) -> str:
        ...
    @property
    def next_functions(self) -> tuple:
        ...
def _adam_step_(param: Tensor, grad: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, max_exp_avg_sq: typing.Any, step: Tensor, lr: typing.SupportsFloat | typing.SupportsIndex = 0.001, beta1: typing.SupportsFloat | typing.SupportsIndex = 0.9, beta2: typing.SupportsFloat | typing.SupportsIndex = 0.999, eps: typing.SupportsFloat | typing.SupportsIndex = 1e-08, weight_decay: typing.SupportsFloat | typing.SupportsIndex = 0.0, amsgrad: bool = False, maximize: bool = False, decoupled_weight_decay: bool = False) -> None:
    """
    One torch.optim.Adam (AdamW with decoupled_weight_decay=True) step of `param`, in place, updating the state tensors and incrementing `step` (a 0-d float32 cpu tensor).
    """
def _adaptive_avg_pool2d_backward(grad_output: Tensor, input_shape: typing.Any) -> Tensor:
    ...
def _add_post_accumulate_hook(tensor: Tensor, hook: typing.Any) -> int:
    ...
def _avg_pool2d_backward(grad_output: Tensor, input_shape: typing.Any, kernel_size: typing.Any, stride: typing.Any = None, padding: typing.Any = 0, ceil_mode: typing.Any = False, count_include_pad: typing.Any = True, divisor_override: typing.Any = None) -> Tensor:
    ...
def _batch_norm_backward(grad_output: Tensor, input: Tensor, weight: Tensor | None = None, running_mean: Tensor | None = None, running_var: Tensor | None = None, training: bool = True, eps: typing.SupportsFloat | typing.SupportsIndex = 1e-05) -> tuple:
    ...
def _blas_threads() -> int:
    ...
def _conv2d_backward_input(grad_output: Tensor, weight: Tensor, input_shape: typing.Any, stride: typing.Any = 1, padding: typing.Any = 0, dilation: typing.Any = 1, groups: typing.SupportsInt | typing.SupportsIndex = 1) -> Tensor:
    ...
def _conv2d_backward_weight(grad_output: Tensor, input: Tensor, weight_shape: typing.Any, stride: typing.Any = 1, padding: typing.Any = 0, dilation: typing.Any = 1, groups: typing.SupportsInt | typing.SupportsIndex = 1) -> Tensor:
    ...
def _cuda_compile_shaders(arch: str, files: collections.abc.Sequence[str] = [], jobs: typing.SupportsInt | typing.SupportsIndex = 0, cache: bool = False) -> list:
    """
    [(file, kernel count, seconds)] after compiling the embedded CUDA translations with NVRTC.
    """
def _cuda_compile_source(name: str, text: str, arch: str, name_exprs: collections.abc.Sequence[str] = []) -> tuple[bool, int, dict[str, str], str]:
    ...
def _cuda_kernels() -> list:
    """
    (host name, source file, CUDA name expression, CUDA parameter layout) of every registered kernel.
    """
def _cuda_nvrtc_options(arch: str) -> list[str]:
    ...
def _cuda_nvrtc_status() -> tuple[bool, int, str]:
    """
    (available, version as major*1000+minor*10, why not) of NVRTC.
    """
def _cuda_shader_files() -> list[str]:
    """
    The .metal files whose CUDA translation is embedded.
    """
def _cuda_shader_source(file: str) -> typing.Any:
    ...
def _dtype_supported(dtype: typing.Any, device: typing.Any) -> bool:
    ...
def _fma_peak_gflops(seconds: typing.SupportsFloat | typing.SupportsIndex = 0.3) -> float:
    """
    float32 FMA GFLOP/s of the CPU pool's threads, measured (cpu/isa.h): the benchmarks' peak
    """
def _from_bytes(buffer: typing_extensions.Buffer, offset: typing.SupportsInt | typing.SupportsIndex, shape: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], dtype: typing.Any, device: typing.Any) -> Tensor:
    """
    A new contiguous tensor on `device` holding buffer[offset : offset + nbytes] (little-endian, C order).
    """
def _from_numpy_copy(array: numpy.ndarray, device: typing.Any = None) -> Tensor:
    ...
def _gelu_backward(grad_output: Tensor, input: Tensor) -> Tensor:
    ...
def _gelu_tanh_backward(grad_output: Tensor, input: Tensor) -> Tensor:
    ...
def _gil_released_in_kernels() -> bool:
    ...
def _inplace_copy(arg0: Tensor, arg1: Tensor) -> Tensor:
    ...
def _layer_norm_backward(grad_output: Tensor, input: Tensor, normalized_shape: typing.Any, weight: Tensor | None = None, bias: Tensor | None = None, eps: typing.SupportsFloat | typing.SupportsIndex = 1e-05) -> tuple:
    ...
def _live_storages() -> int:
    """
    How many storages (tensor memory blocks) are alive: tests check it stays flat over training steps.
    """
def _log_softmax_backward(grad_output: Tensor, output: Tensor, dim: typing.SupportsInt | typing.SupportsIndex) -> Tensor:
    ...
def _max_pool2d_backward(grad_output: Tensor, indices: Tensor, input_shape: typing.Any, kernel_size: typing.Any, stride: typing.Any = None, padding: typing.Any = 0, dilation: typing.Any = 1, ceil_mode: typing.Any = False) -> Tensor:
    ...
def _nan_to_num(input: Tensor, nan: typing.SupportsFloat | typing.SupportsIndex = 0.0, posinf: typing.Any = None, neginf: typing.Any = None) -> Tensor:
    ...
def _new_generator(arg0: typing.Any) -> _Generator:
    ...
def _nll_loss_backward(grad_output: Tensor, input: Tensor, target: Tensor, weight: Tensor | None = None, ignore_index: typing.SupportsInt | typing.SupportsIndex = -100, reduction: str = 'mean') -> Tensor:
    ...
def _nondeterministic_on(op: str) -> list:
    ...
def _queue_backward_callback(callback: typing.Any) -> None:
    ...
def _raw_bytes(tensor: Tensor) -> numpy.ndarray:
    """
    The logical contents of a tensor (any device, any layout) as a C-contiguous uint8 host array.
    """
def _record_function(name: str, inputs: typing.Any, output: Tensor, backward: typing.Any) -> None:
    ...
def _relu_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    ...
def _remove_post_accumulate_hook(tensor: Tensor, id: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def _repeat_interleave_index(repeats: Tensor, size: typing.SupportsInt | typing.SupportsIndex | None = None) -> Tensor:
    ...
def _round(input: Tensor, decimals: typing.SupportsInt | typing.SupportsIndex) -> Tensor:
    ...
def _run_backward(tensors: typing.Any, grad_tensors: typing.Any, retain_graph: bool, create_graph: bool, inputs: typing.Any = None) -> None:
    ...
def _run_grad(arg0: typing.Any, arg1: typing.Any, arg2: typing.Any, arg3: bool, arg4: bool, arg5: bool) -> tuple:
    ...
def _set_deterministic_algorithms(mode: bool, warn_only: bool) -> None:
    ...
def _set_gil_release_for_testing(on: bool) -> None:
    ...
def _set_grad_enabled(mode: bool) -> None:
    ...
def _set_kernel_log(device: typing.Any, on: bool) -> None:
    ...
def _set_nondeterministic_for_testing(op: str, device_type: str, on: bool) -> None:
    ...
def _sgd_step_(param: Tensor, grad: Tensor, momentum_buffer: typing.Any = None, lr: typing.SupportsFloat | typing.SupportsIndex = 0.001, momentum: typing.SupportsFloat | typing.SupportsIndex = 0.0, dampening: typing.SupportsFloat | typing.SupportsIndex = 0.0, weight_decay: typing.SupportsFloat | typing.SupportsIndex = 0.0, nesterov: bool = False, maximize: bool = False) -> Tensor:
    """
    One torch.optim.SGD step of `param`, in place. Returns the momentum buffer (a new one when None is given and momentum != 0; None when momentum == 0).
    """
def _silu_(input: Tensor) -> Tensor:
    ...
def _silu_backward(grad_output: Tensor, input: Tensor) -> Tensor:
    ...
def _sim_run_control(name: str, threads: typing.SupportsInt | typing.SupportsIndex, threadgroup: typing.SupportsInt | typing.SupportsIndex, nbuffers: typing.SupportsInt | typing.SupportsIndex = 1) -> list[list[int]]:
    ...
def _softmax_backward(grad_output: Tensor, output: Tensor, dim: typing.SupportsInt | typing.SupportsIndex) -> Tensor:
    ...
def _take_kernel_log(device: typing.Any) -> list[str]:
    """
    The kernel names launched on a Metal device since the last call, while _set_kernel_log is on.
    """
def abs(input: Tensor) -> Tensor:
    ...
def adaptive_avg_pool2d(input: Tensor, output_size: typing.Any) -> Tensor:
    ...
def add(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def all(input: Tensor, dim: typing.Any = None, keepdim: bool = False) -> Tensor:
    ...
def allclose(input: Tensor, other: Tensor, rtol: typing.SupportsFloat | typing.SupportsIndex, atol: typing.SupportsFloat | typing.SupportsIndex, equal_nan: bool) -> bool:
    ...
def any(input: Tensor, dim: typing.Any = None, keepdim: bool = False) -> Tensor:
    ...
def arange(start: typing.Any, end: typing.Any, step: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    ...
def are_deterministic_algorithms_enabled() -> bool:
    ...
def arg_reduce(input: Tensor, op: str, dim: typing.Any = None, keepdim: bool = False) -> Tensor:
    ...
def argsort(input: Tensor, dim: typing.SupportsInt | typing.SupportsIndex, descending: bool) -> Tensor:
    ...
def atan2(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def available_devices() -> list:
    ...
def avg_pool2d(input: Tensor, kernel_size: typing.Any, stride: typing.Any = None, padding: typing.Any = 0, ceil_mode: typing.Any = False, count_include_pad: typing.Any = True, divisor_override: typing.Any = None) -> Tensor:
    ...
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False, momentum: typing.SupportsFloat | typing.SupportsIndex = 0.1, eps: typing.SupportsFloat | typing.SupportsIndex = 1e-05) -> Tensor:
    ...
def bitwise_and(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def bitwise_not(input: Tensor) -> Tensor:
    ...
def bitwise_or(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def bitwise_xor(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def build_info() -> dict:
    ...
def cast(input: Tensor, dtype: numpy.dtype[typing.Any]) -> Tensor:
    ...
def cat(tensors: collections.abc.Sequence[Tensor], dim: typing.Any = 0) -> Tensor:
    ...
def ceil(input: Tensor) -> Tensor:
    ...
def clamp(input: Tensor, min: typing.Any = None, max: typing.Any = None) -> Tensor:
    ...
def conv2d(input: Tensor, weight: Tensor, bias: typing.Any = None, stride: typing.Any = 1, padding: typing.Any = 0, dilation: typing.Any = 1, groups: typing.SupportsInt | typing.SupportsIndex = 1) -> Tensor:
    ...
def copy_(arg0: Tensor, arg1: Tensor) -> Tensor:
    ...
def cos(input: Tensor) -> Tensor:
    ...
def count_nonzero(input: Tensor, dim: typing.Any) -> Tensor:
    ...
def cross_entropy(input: Tensor, target: Tensor, weight: typing.Any = None, ignore_index: typing.SupportsInt | typing.SupportsIndex = -100, reduction: str = 'mean', label_smoothing: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> Tensor:
    ...
def cumprod(input: Tensor, dim: typing.SupportsInt | typing.SupportsIndex, dtype: typing.Any = None) -> Tensor:
    ...
def cumsum(input: Tensor, dim: typing.SupportsInt | typing.SupportsIndex, dtype: typing.Any = None) -> Tensor:
    ...
def default_generator(arg0: typing.Any) -> _Generator:
    ...
def device(spec: typing.Any) -> typing.Any:
    ...
def diagonal(input: Tensor, offset: typing.SupportsInt | typing.SupportsIndex = 0, dim1: typing.SupportsInt | typing.SupportsIndex = 0, dim2: typing.SupportsInt | typing.SupportsIndex = 1) -> Tensor:
    ...
def div(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def dropout(input: Tensor, p: typing.SupportsFloat | typing.SupportsIndex = 0.5, training: bool = True, generator: typing.Any = None) -> Tensor:
    ...
def dtype_from_name(name: str) -> typing.Any:
    ...
def embedding(input: Tensor, weight: Tensor, padding_idx: typing.Any = None) -> Tensor:
    ...
def empty(size: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    ...
def empty_cache(device: typing.Any = None) -> None:
    """
    Returns the device allocator's idle cached blocks to the system.
    """
def eq(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def equal(input: Tensor, other: Tensor) -> bool:
    ...
def erf(input: Tensor) -> Tensor:
    ...
def erfinv(input: Tensor) -> Tensor:
    ...
def exp(input: Tensor) -> Tensor:
    ...
def exp2(input: Tensor) -> Tensor:
    ...
def expm1(input: Tensor) -> Tensor:
    ...
def flip(input: Tensor, dims: typing.Any) -> Tensor:
    ...
def floor(input: Tensor) -> Tensor:
    ...
def floor_divide(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def fmod(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def frac(input: Tensor) -> Tensor:
    ...
def from_dlpack(ext_tensor: typing.Any, *, device: typing.Any = None, copy: typing.Any = None) -> Tensor:
    """
    A cpu tensor sharing the memory of any object with __dlpack__ (NumPy arrays, torch tensors...).
    """
def from_numpy(array: typing.Any) -> Tensor:
    """
    A cpu tensor sharing the array's memory (read-only when the array is); arrays it cannot share (foreign byte order, unaligned, negative or partial-item strides) raise ValueError.
    """
def full(size: typing.Any, fill_value: typing.Any, dtype: typing.Any = None, device: typing.Any = None) -> Tensor:
    ...
def gather(input: Tensor, dim: typing.SupportsInt | typing.SupportsIndex, index: Tensor) -> Tensor:
    ...
def ge(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def gelu(input: Tensor) -> Tensor:
    ...
def gelu_backward(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def gelu_tanh(input: Tensor) -> Tensor:
    ...
def gelu_tanh_backward(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def get_default_device() -> typing.Any:
    ...
def get_default_dtype() -> typing.Any:
    ...
def get_num_threads() -> int:
    ...
def gt(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def hypot(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def index_add(input: Tensor, dim: typing.Any, index: Tensor, source: Tensor) -> Tensor:
    ...
def index_copy_(input: Tensor, dim: typing.Any, index: Tensor, source: Tensor) -> Tensor:
    ...
def index_select(input: Tensor, dim: typing.Any, index: Tensor) -> Tensor:
    ...
def is_deterministic_algorithms_warn_only_enabled() -> bool:
    ...
def is_grad_enabled() -> bool:
    ...
def isclose(input: Tensor, other: Tensor, rtol: typing.SupportsFloat | typing.SupportsIndex, atol: typing.SupportsFloat | typing.SupportsIndex, equal_nan: bool) -> Tensor:
    ...
def isfinite(input: Tensor) -> Tensor:
    ...
def isinf(input: Tensor) -> Tensor:
    ...
def isnan(input: Tensor) -> Tensor:
    ...
def layer_norm(input: Tensor, normalized_shape: typing.Any, weight: Tensor | None = None, bias: Tensor | None = None, eps: typing.SupportsFloat | typing.SupportsIndex = 1e-05) -> Tensor:
    ...
def le(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def lerp(input: Tensor, end: Tensor, weight: typing.Any) -> Tensor:
    ...
def linear(input: Tensor, weight: Tensor, bias: typing.Any = None) -> Tensor:
    ...
def log(input: Tensor) -> Tensor:
    ...
def log10(input: Tensor) -> Tensor:
    ...
def log1p(input: Tensor) -> Tensor:
    ...
def log2(input: Tensor) -> Tensor:
    ...
def log_softmax(input: Tensor, dim: typing.Any) -> Tensor:
    ...
def logical_and(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def logical_not(input: Tensor) -> Tensor:
    ...
def logical_or(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def logical_xor(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def logsumexp(input: Tensor, dim: typing.Any, keepdim: bool) -> Tensor:
    ...
def lt(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def manual_seed(seed: int) -> None:
    ...
def matmul(input: Tensor, other: Tensor) -> Tensor:
    ...
def max_pool2d(input: Tensor, kernel_size: typing.Any, stride: typing.Any = None, padding: typing.Any = 0, dilation: typing.Any = 1, ceil_mode: typing.Any = False) -> Tensor:
    ...
def max_pool2d_with_indices(input: Tensor, kernel_size: typing.Any, stride: typing.Any = None, padding: typing.Any = 0, dilation: typing.Any = 1, ceil_mode: typing.Any = False) -> tuple[Tensor, Tensor]:
    ...
def maximum(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def median(input: Tensor) -> Tensor:
    ...
def median_dim(input: Tensor, dim: typing.SupportsInt | typing.SupportsIndex, keepdim: bool) -> tuple[Tensor, Tensor]:
    ...
def memory_stats(device: typing.Any = None) -> dict:
    """
    The device's memory accounting as a dict (see docs/memory.md); device None: the default device.
    """
def minimum(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def mul(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def nan_to_num(input: Tensor) -> Tensor:
    ...
def ne(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def neg(input: Tensor) -> Tensor:
    ...
def nll_loss(input: Tensor, target: Tensor, weight: typing.Any = None, ignore_index: typing.SupportsInt | typing.SupportsIndex = -100, reduction: str = 'mean') -> Tensor:
    ...
def nonzero(input: Tensor) -> Tensor:
    ...
def normal_(tensor: Tensor, mean: typing.SupportsFloat | typing.SupportsIndex = 0.0, std: typing.SupportsFloat | typing.SupportsIndex = 1.0, generator: typing.Any = None) -> Tensor:
    ...
def op_table() -> list:
    ...
def pow(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def prod(input: Tensor, dim: typing.Any, keepdim: bool, dtype: typing.Any) -> Tensor:
    ...
def queue_stats(device: typing.Any) -> dict:
    ...
def randint_(tensor: Tensor, low: typing.SupportsInt | typing.SupportsIndex, high: typing.SupportsInt | typing.SupportsIndex, generator: typing.Any = None) -> Tensor:
    ...
def randperm(n: typing.SupportsInt | typing.SupportsIndex, dtype: typing.Any = None, device: typing.Any = None, generator: typing.Any = None) -> Tensor:
    ...
def reciprocal(input: Tensor) -> Tensor:
    ...
def relu(input: Tensor) -> Tensor:
    ...
def relu_(input: Tensor) -> Tensor:
    ...
def relu_backward(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def remainder(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def reset_peak_memory_stats(device: typing.Any = None) -> None:
    """
    Sets every '.peak' of memory_stats to its current value.
    """
def reset_queue_stats(device: typing.Any) -> None:
    ...
def roll(input: Tensor, shifts: typing.Any, dims: typing.Any = None) -> Tensor:
    ...
def round(input: Tensor) -> Tensor:
    ...
def rsqrt(input: Tensor) -> Tensor:
    ...
def scatter(input: Tensor, dim: typing.SupportsInt | typing.SupportsIndex, index: Tensor, src: typing.Any, reduce: typing.Any = None) -> Tensor:
    ...
def scatter_add(input: Tensor, dim: typing.SupportsInt | typing.SupportsIndex, index: Tensor, src: Tensor) -> Tensor:
    ...
def set_default_device(device: typing.Any) -> None:
    ...
def set_default_dtype(d: typing.Any) -> None:
    ...
def set_memory_limit(device: typing.Any, nbytes: typing.Any) -> typing.Any:
    """
    Caps the bytes the device's tensors may hold; None or 0 removes the cap. Returns the previous limit (None: there was none).
    """
def set_num_threads(n: typing.SupportsInt | typing.SupportsIndex) -> None:
    ...
def sigmoid(input: Tensor) -> Tensor:
    ...
def sign(input: Tensor) -> Tensor:
    ...
def silu(input: Tensor) -> Tensor:
    ...
def silu_backward(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def sim_race_check() -> bool:
    """
    Whether the simulator checks kernels for data races (BESSEMER_SIM_RACECHECK, default on).
    """
def sim_set_race_check(on: bool) -> None:
    ...
def sim_set_shuffle(seed: typing.Any) -> None:
    ...
def sim_shuffle() -> typing.Any:
    """
    The seed of the simulator's shuffled lane order (BESSEMER_SIM_SHUFFLE), or None when off.
    """
def sin(input: Tensor) -> Tensor:
    ...
def softmax(input: Tensor, dim: typing.Any) -> Tensor:
    ...
def sort(input: Tensor, dim: typing.SupportsInt | typing.SupportsIndex, descending: bool) -> tuple[Tensor, Tensor]:
    ...
def sqrt(input: Tensor) -> Tensor:
    ...
def square(input: Tensor) -> Tensor:
    ...
def stack(tensors: collections.abc.Sequence[Tensor], dim: typing.Any = 0) -> Tensor:
    ...
def std(input: Tensor, dim: typing.Any, correction: typing.SupportsFloat | typing.SupportsIndex, keepdim: bool) -> Tensor:
    ...
def sub(input: typing.Any, other: typing.Any) -> Tensor:
    ...
def synchronize(device: typing.Any = None) -> None:
    ...
def tanh(input: Tensor) -> Tensor:
    ...
def to_device(arg0: Tensor, arg1: typing.Any) -> Tensor:
    ...
def topk(input: Tensor, k: typing.SupportsInt | typing.SupportsIndex, dim: typing.SupportsInt | typing.SupportsIndex, largest: bool) -> tuple[Tensor, Tensor]:
    ...
def tril(input: Tensor, diagonal: typing.SupportsInt | typing.SupportsIndex = 0) -> Tensor:
    ...
def triu(input: Tensor, diagonal: typing.SupportsInt | typing.SupportsIndex = 0) -> Tensor:
    ...
def trunc(input: Tensor) -> Tensor:
    ...
def uniform_(tensor: Tensor, low: typing.SupportsFloat | typing.SupportsIndex = 0.0, high: typing.SupportsFloat | typing.SupportsIndex = 1.0, generator: typing.Any = None) -> Tensor:
    ...
def unique(input: Tensor, return_inverse: bool, return_counts: bool, dim: typing.Any) -> tuple[Tensor, Tensor, Tensor]:
    ...
def vector_norm(input: Tensor, ord: typing.SupportsFloat | typing.SupportsIndex, dim: typing.Any, keepdim: bool, dtype: typing.Any) -> Tensor:
    ...
def where(condition: typing.Any, input: typing.Any, other: typing.Any) -> Tensor:
    ...
__version__: str = '0.1.0'
