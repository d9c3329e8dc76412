"""`python -m bessemer`: version, build configuration and available devices."""

from . import __version__, _core, available_devices


def main() -> None:
    info = _core.build_info()
    print(f"bessemer {__version__}")
    print(f"  build type : {info['build_type']}")
    print(f"  compiler   : {info['compiler']}")
    print(f"  BLAS       : {info['blas']}")
    print(f"  Metal      : {info['metal']}")
    print(f"  threads    : {info['threads']}")
    print("  devices    :")
    for d in available_devices():
        print(f"    {str(d):<12} {d.description}")


if __name__ == "__main__":
    main()
