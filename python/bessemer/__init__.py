"""bessemer: tensors and neural networks with the same numbers on every backend.

The C++ core (``bessemer._core``) holds tensors, devices, the op registry and the backends; this
package adds torch-style signatures and conveniences on top. See docs/architecture.md.
"""

import sys as _sys

if _sys.platform != "darwin":
    # Importing scipy_openblas32 loads libscipy_openblas.so, and _core then finds it by its soname
    # wherever pip put that package: _core's rpath covers only a scipy_openblas32 beside bessemer
    # (not a user site, a --system-site-packages venv or --target; docs/building.md).
    import scipy_openblas32 as _scipy_openblas32

from . import _core

if any(_d.type == "cuda" for _d in _core.available_devices()):
    # The cuda device compiles its kernels with NVRTC on first use; a pip-installed NVRTC
    # (nvidia-cuda-nvrtc) is not on the loader's path until preloaded (docs/cuda.md).
    from . import _nvrtc

    _nvrtc.preload()
from ._core import (
    Device,
    DeviceMismatchError,
    RaceError,
    Tensor,
    UnsupportedError,
    available_devices,
    device,
    dtype_from_name,
    from_dlpack,
    from_numpy,
    get_default_device,
    get_default_dtype,
    get_num_threads,
    set_default_device,
    set_default_dtype,
    set_num_threads,
    synchronize,
)

__version__ = _core.__version__

dtype = _core.dtype
bool = _core.dtype.bool  # noqa: A001  (torch spells it bm.bool too)
int8 = _core.dtype.int8
uint8 = _core.dtype.uint8
int16 = _core.dtype.int16
int32 = _core.dtype.int32
int64 = _core.dtype.int64
float16 = _core.dtype.float16
bfloat16 = _core.dtype.bfloat16
float32 = _core.dtype.float32
float64 = _core.dtype.float64
half = float16
float = float32  # noqa: A001
double = float64
long = int64
short = int16
int = int32  # noqa: A001

from . import (
    _interop,  # noqa: E402,F401  (NumPy operands and Tensor.__array_ufunc__)
    _tensor,  # noqa: E402,F401  (adds torch-style methods to Tensor)
    autograd,
    distributed,
    io,
    linalg,
    metal_sim,
    models,
    nn,
    optim,
    testing,  # noqa: E402
    utils,
)
from ._determinism import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    is_deterministic_algorithms_warn_only_enabled,
    use_deterministic_algorithms,
)
from ._elementwise import (  # noqa: E402
    atan2,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    ceil,
    erf,
    erfinv,
    exp2,
    expm1,
    floor,
    fmod,
    frac,
    hypot,
    isfinite,
    isinf,
    isnan,
    lerp,
    log1p,
    log2,
    log10,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    nan_to_num,
    reciprocal,
    round,
    sign,
    square,
    trunc,
)
from ._factories import (  # noqa: E402
    empty_like,
    eye,
    full_like,
    linspace,
    logspace,
    ones_like,
    rand_like,
    randint,
    randn_like,
    randperm,
    zeros_like,
)
from ._ops import (  # noqa: E402
    abs,
    add,
    all,
    amax,
    amin,
    any,
    arange,
    argmax,
    argmin,
    cat,
    clamp,
    cos,
    div,
    empty,
    eq,
    exp,
    flatten,
    floor_divide,
    full,
    ge,
    gt,
    index_add,
    index_copy,
    index_select,
    le,
    log,
    log_softmax,
    lt,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mul,
    ne,
    neg,
    nonzero,
    ones,
    permute,
    pow,
    relu,
    relu_,
    remainder,
    reshape,
    rsqrt,
    sigmoid,
    sin,
    softmax,
    sqrt,
    squeeze,
    stack,
    sub,
    sum,
    tanh,
    tensor,
    transpose,
    unsqueeze,
    var,
    zeros,
)
from ._reduce_ops import (  # noqa: E402
    allclose,
    argsort,
    count_nonzero,
    cumprod,
    cumsum,
    equal,
    isclose,
    logsumexp,
    median,
    norm,
    prod,
    sort,
    std,
    topk,
    unique,
)
from ._shape import (  # noqa: E402  (shape functions, gather / scatter, einsum; also adds Tensor methods)
    bmm,
    chunk,
    diagonal,
    einsum,
    flip,
    fliplr,
    flipud,
    gather,
    ger,
    masked_fill,
    mm,
    moveaxis,
    movedim,
    narrow,
    outer,
    repeat_interleave,
    roll,
    scatter,
    scatter_add,
    split,
    swapaxes,
    swapdims,
    t,
    tile,
    tril,
    triu,
    unbind,
    where,
)
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .io import SafetensorsError, load_file, load_model, save_file, save_model
from .memory import (
    empty_cache,
    get_memory_limit,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_peak_memory_stats,
    set_memory_limit,
)
from .random import Generator, get_rng_state, initial_seed, manual_seed, rand, randn, set_rng_state
from .serialization import load, save

__all__ = [name for name in dir() if not name.startswith("_")]
