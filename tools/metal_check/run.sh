#!/usr/bin/env bash
# Compile-checks the Metal runtime (csrc/metal/runtime_metal.cpp, and every other source that has
# a BESSEMER_HAVE_METAL branch) on a machine without a Mac: clang -fsyntax-only against the real
# metal-cpp headers, which the mlx-metal macOS wheel on PyPI carries (mlx/include/metal_cpp),
# plus the few stub system headers in stubs/. Any misuse of the metal-cpp API fails here.
#
# Needs: clang, python3 with pip and pybind11, and Debian's libobjc-<gcc version>-dev (the
# Objective-C runtime declarations metal-cpp uses); .ci/run installs them. The wheel is downloaded
# once into the cache directory ($METAL_CHECK_CACHE, default build/metal_check) and only its
# headers are kept; nothing downloaded is committed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cache=${METAL_CHECK_CACHE:-$root/build/metal_check}
# Pinned so the check is reproducible; the headers it holds are metal-cpp's macOS 26 release.
version=${MLX_METAL_VERSION:-0.32.4}
CLANG=${CLANG:-clang++}
PYTHON=${PYTHON:-python3}

fail() { echo "metal_check: $*" >&2; exit 1; }
command -v "$CLANG" >/dev/null || fail "$CLANG not found (apt-get install clang)"

# ---- metal-cpp headers from the mlx-metal wheel ----
headers=$cache/metal_cpp-$version
if [ ! -f "$headers/Metal/Metal.hpp" ]; then
  mkdir -p "$cache/wheel-$version"
  if ! ls "$cache/wheel-$version"/mlx_metal-*.whl >/dev/null 2>&1; then
    # The wheel exists only for macOS platforms; pip needs one named to fetch it on Linux.
    got=""
    for plat in macosx_14_0_arm64 macosx_15_0_arm64 macosx_26_0_arm64 macosx_13_5_arm64; do
      if "$PYTHON" -m pip download -q "mlx-metal==$version" --no-deps --only-binary=:all: \
          --platform "$plat" -d "$cache/wheel-$version" 2>"$cache/pip.log"; then
        got=$plat; break
      fi
    done
    [ -n "$got" ] || { cat "$cache/pip.log" >&2; fail "could not download mlx-metal==$version"; }
  fi
  wheel=$(ls "$cache/wheel-$version"/mlx_metal-*.whl | head -n1)
  rm -rf "$headers.tmp"
  "$PYTHON" - "$wheel" "$headers.tmp" <<'EOF'
import pathlib, sys, zipfile
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
prefix = "mlx/include/metal_cpp/"
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not names:
        sys.exit(f"{wheel} holds no {prefix}")
    for n in names:
        out = dest / n[len(prefix):]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(z.read(n))
EOF
  [ -f "$headers.tmp/Metal/Metal.hpp" ] || fail "no Metal/Metal.hpp in $wheel"
  mv "$headers.tmp" "$headers"
  rm -rf "$cache/wheel-$version"  # 45 MB, of which the check needs only the headers
fi

# ---- the Objective-C runtime headers of Debian's GNU libobjc, and nothing else of gcc's ----
# (gcc's include directory also holds its own stddef.h and intrinsics, which clang must not see.)
objc_dir=""
for d in "$(gcc -print-file-name=include 2>/dev/null || true)" /usr/lib/gcc/*/*/include; do
  if [ -f "$d/objc/runtime.h" ]; then objc_dir=$d/objc; break; fi
done
[ -n "$objc_dir" ] || fail "no objc/runtime.h (apt-get install libobjc-\$(gcc -dumpversion | cut -d. -f1)-dev)"
mkdir -p "$cache/objc-include"
ln -sfn "$objc_dir" "$cache/objc-include/objc"

# ---- the embedded shader sources runtime_metal.cpp includes, generated as the Apple build does ----
gen=$cache/generated
"$PYTHON" "$root/csrc/metal/embed_shaders.py" -o "$gen/metal/shader_sources.h" "$root"/shaders/*.metal

# The bindings have a BESSEMER_HAVE_METAL branch too; they need pybind11's and Python's headers, and
# the macros CMake defines for the core.
py_includes=$("$PYTHON" -c "import pybind11, sysconfig; print(pybind11.get_include()); print(sysconfig.get_paths()['include'])") ||
  fail "pybind11 is not installed (pip install pybind11)"
mapfile -t py_includes <<<"$py_includes"
flags=(-fsyntax-only -fblocks -std=c++17 -DBESSEMER_HAVE_METAL
       -DBESSEMER_VERSION='"check"' -DBESSEMER_BLAS_NAME='"check"' -DBESSEMER_BUILD_TYPE='"check"'
       -Wall -Wextra -Wno-unused-parameter -Werror
       -isystem "$here/stubs" -isystem "$cache/objc-include" -isystem "$headers"
       -isystem "${py_includes[0]}" -isystem "${py_includes[1]}"
       -I "$root/csrc" -I "$root/shaders" -I "$gen")

# ---- controls: correct calls compile, each misuse does not ----
"$CLANG" "${flags[@]}" "$here/controls.cpp" || fail "the control file does not compile: headers or stubs are broken"
n=1
while grep -q "BM_MISUSE_$n" "$here/controls.cpp"; do
  if "$CLANG" "${flags[@]}" -DBM_MISUSE_$n "$here/controls.cpp" 2>/dev/null; then
    fail "misuse $n in controls.cpp compiled: the check would not catch API misuse"
  fi
  n=$((n + 1))
done
echo "metal_check: controls ok ($((n - 1)) misuses rejected)"

# ---- the sources ----
mapfile -t sources < <(cd "$root" && { echo csrc/metal/runtime_metal.cpp; grep -rl --include='*.cpp' BESSEMER_HAVE_METAL csrc; } | sort -u)
for src in "${sources[@]}"; do
  "$CLANG" "${flags[@]}" "$root/$src"
  echo "metal_check: $src ok"
done

# ---- the Apple branch of the build, with a stand-in xcrun ----
CLANG=$CLANG "$here/cmake_branch.sh" "$headers" "$cache/objc-include" "$cache/cmake_branch"
echo "metal_check: passed (metal-cpp from mlx-metal $version)"
