"""`python -m bessemer`: version, build configuration and available devices."""

from . import __version__, _core, available_devices


def _distributed() -> str:
    """The engines bessemer.distributed would use, found without starting MPI."""
    from importlib import metadata

    from .distributed import _nccl
    from .distributed.run import _mpich_library

    try:
        mpi = f"mpi4py {metadata.version('mpi4py')}"
    except metadata.PackageNotFoundError:
        return "not available (pip install 'bessemer[distributed]': mpi4py and mpich)"
    lib = _mpich_library()
    mpi += f", MPICH {metadata.version('mpich')} ({lib})" if lib else ", the system's MPI"
    nccl = _nccl.load()
    return mpi + "; NCCL for cuda: " + (nccl._name if nccl is not None else "not found")


def main() -> None:
    info = _core.build_info()
    print(f"bessemer {__version__}")
    print(f"  build type : {info['build_type']}")
    print(f"  compiler   : {info['compiler']}")
    print(f"  BLAS       : {info['blas']}")
    print(f"  Metal      : {info['metal']}")
    print(f"  threads    : {info['threads']}")
    print(f"  distributed: {_distributed()}")
    print("  devices    :")
    for d in available_devices():
        print(f"    {str(d):<12} {d.description}")


if __name__ == "__main__":
    main()
