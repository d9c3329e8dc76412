#!/usr/bin/env bash
# Runs the Apple branch of the build (cmake/metal.cmake) on Linux, in a scratch project, with a
# stand-in xcrun that records its arguments and writes placeholder .air/.metallib files. Checks
# that every shader is compiled with the intended flags, that the metallib is linked from all of
# them, installed into the `bessemer` package directory and copied beside an in-place module, and
# that runtime_metal.cpp compiles (to an object file, with clang, the stubs and the real metal-cpp
# headers) against the generated embedded-source header, with METAL_CPP_DIR and through the
# FetchContent path; and that a machine without Xcode's Metal compiler builds without a metallib. Called by run.sh, which passes the
# directories it prepared: cmake_branch.sh <metal-cpp headers> <objc include dir> <work dir>.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -eq 3 ] || { echo "usage: $0 <metal-cpp headers> <objc include dir> <work dir>" >&2; exit 2; }
CLANG=${CLANG:-clang++}
fail() { echo "metal_check (cmake): $*" >&2; exit 1; }

rm -rf "$3" && mkdir -p "$3/project" "$3/bin" "$3/inplace"
headers=$(cd "$1" && pwd) objc_include=$(cd "$2" && pwd) work=$(cd "$3" && pwd)
log=$work/xcrun.log
cat > "$work/bin/xcrun" <<EOF
#!/usr/bin/env bash
# Stand-in for xcrun: record the call, write the output file named after -o. While the file
# no-metal exists it plays a machine without Xcode's Metal toolchain.
echo "\$*" >> "$log"
if [ "\$*" = "-sdk macosx metal --version" ]; then
  [ -e "$work/no-metal" ] && { echo "error: cannot execute tool 'metal'" >&2; exit 1; }
  echo "stand-in metal version"; exit 0
fi
out=""; prev=""
for a in "\$@"; do [ "\$prev" = "-o" ] && out=\$a; prev=\$a; done
[ -n "\$out" ] || { echo "xcrun stand-in: no -o" >&2; exit 1; }
echo "placeholder for: \$*" > "\$out"
EOF
chmod +x "$work/bin/xcrun"

cat > "$work/project/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.18)
project(bessemer_metal_branch LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(Python COMPONENTS Interpreter REQUIRED)
file(GLOB BESSEMER_SHADERS "$root/shaders/*.metal")
add_library(bessemer_core OBJECT "$root/csrc/metal/runtime_metal.cpp")
target_include_directories(bessemer_core PRIVATE "$root/csrc" "$root/shaders")
target_include_directories(bessemer_core SYSTEM PRIVATE "$here/stubs" "$objc_include")
target_compile_options(bessemer_core PRIVATE -fblocks -Wall -Wextra -Wno-unused-parameter -Werror)
include("$root/cmake/metal.cmake")
EOF

run() { "$@" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log" >&2; fail "failed: $*"; }; }
gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
run cmake -S "$work/project" -B "$work/build" "${gen[@]}" -DCMAKE_CXX_COMPILER="$CLANG" \
  -DBESSEMER_XCRUN="$work/bin/xcrun" -DMETAL_CPP_DIR="$headers" \
  -DBESSEMER_BUILD_PYTHON=ON -DBESSEMER_INPLACE=ON -DBESSEMER_INPLACE_DIR="$work/inplace"
run cmake --build "$work/build"
run cmake --install "$work/build" --prefix "$work/prefix"

shaders=("$root"/shaders/*.metal)
for s in "${shaders[@]}"; do
  name=$(basename "$s" .metal)
  grep -qxF -- "-sdk macosx metal -fno-fast-math -std=metal3.1 -c $s -o $work/build/metal_air/$name.air" "$log" ||
    fail "no xcrun metal call for $s with the intended flags (calls: $(cat "$log"))"
done
link=$(grep -- "-sdk macosx metallib " "$log") || fail "metallib was not linked"
for s in "${shaders[@]}"; do
  [[ " $link " == *" $work/build/metal_air/$(basename "$s" .metal).air "* ]] || fail "$s missing from the metallib link: $link"
done
[ -f "$work/prefix/bessemer/bessemer.metallib" ] || fail "bessemer.metallib is not installed into bessemer/"
[ -f "$work/inplace/bessemer.metallib" ] || fail "bessemer.metallib is not copied beside the in-place module"
[ -f "$work/build/generated/metal/shader_sources.h" ] || fail "the embedded shader sources were not generated"
find "$work/build" -name 'runtime_metal.cpp.o' | grep -q . || fail "runtime_metal.cpp was not compiled"

# Without METAL_CPP_DIR the branch fetches Apple's release. That download cannot happen here; the
# standard FetchContent override points it at the same headers, so the rest of that path runs.
run cmake -S "$work/project" -B "$work/build-fetch" "${gen[@]}" -DCMAKE_CXX_COMPILER="$CLANG" \
  -DBESSEMER_XCRUN="$work/bin/xcrun" -DFETCHCONTENT_SOURCE_DIR_METAL_CPP="$headers" -DBESSEMER_BUILD_PYTHON=OFF
run cmake --build "$work/build-fetch" --target bessemer_core
# Without the Metal compiler: a warning, no metallib (and a stale in-place one removed), the
# runtime still built; an error instead when BESSEMER_REQUIRE_METALLIB is on.
touch "$work/no-metal" "$work/inplace/bessemer.metallib"
: > "$work/cmake.log"
run cmake -S "$work/project" -B "$work/build-nometal" "${gen[@]}" -DCMAKE_CXX_COMPILER="$CLANG" \
  -DBESSEMER_XCRUN="$work/bin/xcrun" -DMETAL_CPP_DIR="$headers" \
  -DBESSEMER_BUILD_PYTHON=ON -DBESSEMER_INPLACE=ON -DBESSEMER_INPLACE_DIR="$work/inplace"
grep -q "Building without bessemer.metallib" "$work/cmake.log" || fail "no warning without a Metal compiler"
run cmake --build "$work/build-nometal"
run cmake --install "$work/build-nometal" --prefix "$work/prefix-nometal"
[ ! -e "$work/prefix-nometal/bessemer/bessemer.metallib" ] || fail "a metallib was installed without a Metal compiler"
[ ! -e "$work/inplace/bessemer.metallib" ] || fail "a stale in-place bessemer.metallib was left to be loaded"
find "$work/build-nometal" -name 'runtime_metal.cpp.o' | grep -q . || fail "runtime_metal.cpp was not compiled"
if cmake -S "$work/project" -B "$work/build-require" "${gen[@]}" -DCMAKE_CXX_COMPILER="$CLANG" \
    -DBESSEMER_XCRUN="$work/bin/xcrun" -DMETAL_CPP_DIR="$headers" -DBESSEMER_REQUIRE_METALLIB=ON >/dev/null 2>&1; then
  fail "BESSEMER_REQUIRE_METALLIB=ON configured without a Metal compiler"
fi

echo "metal_check (cmake): Apple branch ok (${#shaders[@]} shaders -> bessemer.metallib, installed; runtime_metal.cpp built)"
