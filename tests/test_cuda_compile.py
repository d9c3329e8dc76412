"""The CUDA target without a GPU (docs/cuda.md): the pre-pass's CUDA rewrites, and (in builds with
the CUDA target and NVRTC at hand, as CI) every shader compiled by NVRTC for sm_90 and to
PTX (compute_80), every registered kernel's name expression resolved, its parameter layout checked against the
kernel's signature, and controls that must fail naming the .metal file and line.

CI sets BESSEMER_REQUIRE_CUDA_COMPILE=1: there a build without the CUDA target, or without NVRTC,
fails these tests instead of skipping them."""

import importlib.util
import os
import pathlib
import re

import pytest

from bessemer import _core

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("prepass", ROOT / "csrc" / "msl_sim" / "prepass.py")
prepass = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prepass)

REQUIRED = os.environ.get("BESSEMER_REQUIRE_CUDA_COMPILE") == "1"


def cuda(tmp_path, source, name="k.metal"):
    path = tmp_path / "shaders" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(source)
    return prepass.generate(str(path), str(tmp_path), [], target="cuda")


def shader_part(out):
    return out[out.index('#line 1 "shaders/') :]


# ---------------- the pre-pass (pure Python, every build) ----------------


def test_rewrites_for_cuda(tmp_path):
    out = shader_part(
        cuda(
            tmp_path,
            "constant constexpr int N = 4;\n"
            "constant float table[2] = {1.0, 2.0};\n"
            "void f(device const float* a, constant Args& c, threadgroup int* t, thread float& h,\n"
            "       device float4& g) {\n"
            "  threadgroup float s[N][N], u;\n"
            "  float4 v = 0.5; v.xy = v.zw; half x = 0.5h;\n"
            "}\n",
        )
    )
    assert "constexpr int N = 4;" in out and not re.search(r"\bconstant\b", out)
    assert "__constant__ const float table[2] = {1.0f, 2.0f};" in out
    flat = re.sub(r"\s+", " ", out)
    assert "void f( const float* a, const Args& c, int* t, float& h, float4& g)" in flat
    assert "__shared__ float s[N][N], u;" in out
    assert "v.template swizzle<0,1>() = v.template swizzle<2,3>()" in out
    assert "::metal::half(0.5f)" in out


def test_trampoline_follows_the_abi(tmp_path):
    out = cuda(
        tmp_path,
        "template <typename T>\n"
        "[[max_total_threads_per_threadgroup(256)]] kernel void k(\n"
        "    const device T* a [[buffer(0)]], device atomic_int* flag [[buffer(1)]],\n"
        "    constant Args& args [[buffer(2)]], device float& total [[buffer(3)]],\n"
        "    threadgroup float* tmp [[threadgroup(0)]], uint2 gid [[thread_position_in_grid]],\n"
        "    ushort lane [[thread_index_in_simdgroup]]) {}\n"
        'template [[host_name("k_f32")]] [[kernel]] decltype(k<float>) k<float>;\n',
    )
    tramp = out[out.index("__global__ void __launch_bounds__") :].split("\n")[0]
    assert tramp.startswith(
        "__global__ void __launch_bounds__(256) bm_cuda_tramp_k(const ::BmCudaLaunch bm_l, const T* p0, "
        "atomic_int* p1, const Args v2, float* p3)"
    )
    assert (
        "k<T>(p0, p1, v2, *p3, ::bm_cuda::threadgroup_arg<float*>(bm_l, 0), "
        "::bm_cuda::attr<uint2>(bm_ids.thread_position_in_grid), "
        "::bm_cuda::attr<ushort>(bm_ids.thread_index_in_simdgroup))" in tramp
    )
    assert "if (!::bm_cuda::lane_ids(bm_l, bm_ids)) return;" in tramp
    assert "template <typename T> __global__" in out
    assert "host_name" not in shader_part(out) and "[[" not in shader_part(out)
    # The simulator's registration carries the matching name expression and layout.
    sim = prepass.generate(str(tmp_path / "shaders" / "k.metal"), str(tmp_path), [])
    ns = prepass.namespace_of(str(tmp_path / "shaders" / "k.metal"), str(tmp_path))
    assert f'BM_MSL_STR(&{ns}::bm_cuda_tramp_k<float>), "L p0 p1 v2 p3");' in sim
    assert out.rstrip().endswith(f"using namespace {ns};")


def test_output_is_self_contained(tmp_path):
    out = cuda(
        tmp_path, "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device float* a [[buffer(0)]]) {}\n"
    )
    assert not re.search(r"(?m)^\s*#\s*include", out)
    assert '#line 1 "csrc/cuda/include/metal_stdlib"' in out
    assert '#line 1 "csrc/cuda/abi.h"' in out and "struct BmCudaLaunch" in out
    assert "__launch_bounds__(1024)" in out


def _conversions(path):
    """The 16-bit float conversion functions of a stand-in's scalar.h, spelled alike."""
    text = path.read_text().replace("uint32_t", "uint").replace("uint16_t", "ushort")
    out = {}
    for name in ("half_to_float", "float_to_half", "bfloat_to_float", "float_to_bfloat"):
        m = re.search(rf"constexpr \w+ {name}\(.*?\n}}\n", text, re.S) or re.search(
            rf"constexpr \w+ {name}\(.*?\n", text
        )
        out[name] = re.sub(r"\s+", " ", m.group())
    return out


def test_half_and_bfloat_round_like_the_simulator():
    """Same bits on both: the CUDA stand-in's conversions are the simulator's, token for token."""
    sim = _conversions(ROOT / "csrc" / "msl_sim" / "stdlib" / "scalar.h")
    cuda_ = _conversions(ROOT / "csrc" / "cuda" / "stdlib" / "scalar.h")
    assert sim == cuda_


# ---------------- NVRTC (builds with the CUDA target) ----------------


def _nvrtc():
    if not hasattr(_core, "_cuda_compile_shaders"):
        if REQUIRED:
            pytest.fail("BESSEMER_REQUIRE_CUDA_COMPILE=1 but this build has no CUDA target")
        pytest.skip("built without the CUDA target (no CUDA toolkit found)")
    ok, version, why = _core._cuda_nvrtc_status()
    if not ok:
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)
    return version


@pytest.fixture(scope="module")
def nvrtc():
    return _nvrtc()


def test_every_shader_is_embedded(nvrtc):
    shaders = sorted(f"shaders/{p.name}" for p in (ROOT / "shaders").glob("*.metal"))
    assert sorted(_core._cuda_shader_files()) == shaders


# sm_90 (the H200's code, through ptxas) and compute_80 (PTX, which the driver compiles for any GPU
# from Ampere on): an sm_80 cubin as well added half again to the time of CI's slowest test file.
@pytest.mark.parametrize("arch", ["sm_90", "compute_80"])
def test_every_shader_compiles(nvrtc, arch):
    results = _core._cuda_compile_shaders(arch)
    files = {f for f, _, _ in results}
    assert files == set(_core._cuda_shader_files())
    total = sum(n for _, n, _ in results)
    in_shaders = [k for k in _core._cuda_kernels() if k[1] in files]
    assert total == len(in_shaders) > 600
    timing = ", ".join(f"{f.split('/')[-1]} {n} kernels {s:.1f}s" for f, n, s in results)
    print(f"\nNVRTC {nvrtc} {arch}: {total} kernels; {timing}")


def _signatures():
    """kernel name -> expected cuda_params, read from the .metal sources with a plain regex (not the
    pre-pass's parser): "L", then pN / vN for each [[buffer(N)]] parameter, v for `constant T&`."""
    sigs = {}
    pattern = re.compile(r"(?:\[\[kernel\]\]|\bkernel)\s+void\s+(\w+)\s*\(([^{;]*?)\)\s*\{", re.S)
    for path in (ROOT / "shaders").glob("*.metal"):
        text = re.sub(r"//[^\n]*", "", path.read_text())
        for m in pattern.finditer(text):
            layout = ["L"]
            for param in m.group(2).split(","):
                b = re.search(r"\[\[buffer\((\d+)\)\]\]", param)
                if b:
                    by_value = re.search(r"\bconstant\b[^*]*&", param) is not None
                    layout.append(("v" if by_value else "p") + b.group(1))
            sigs[m.group(1)] = " ".join(layout)
    return sigs


def test_registry_names_and_layouts(nvrtc):
    sigs = _signatures()
    files = set(_core._cuda_shader_files())
    checked = 0
    for host, source, name, params in _core._cuda_kernels():
        if source not in files:
            continue  # the simulator's own control kernels
        m = re.match(r"^&bm_msl_(\w+)_[0-9a-f]{8}::bm_cuda_tramp_(\w+)(<.*>)?$", name)
        assert m, (host, name)
        assert f"shaders/{m.group(1)}.metal" == source, (host, name)
        assert params == sigs[m.group(2)], (host, params, sigs[m.group(2)])
        checked += 1
    assert checked > 600


# Controls that must fail: an error NVRTC reports at the .metal line, and an MSL function the
# stand-in does not offer (quad_* is not supported).
@pytest.mark.parametrize("name,line,body,what", [
    ("bad", 5, "  a[i] = no_such_function(a[i]);\n", "no_such_function"),
    ("quad", 5, "  a[i] = quad_sum(a[i]);\n", "quad_sum"),
])
def test_a_source_nvrtc_rejects_names_the_metal_line(nvrtc, tmp_path, name, line, body, what):
    text = cuda(
        tmp_path,
        "#include <metal_stdlib>\nusing namespace metal;\n\n"
        f"kernel void {name}(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {{\n"
        + body + "}\n",
        name=f"{name}.metal",
    )
    with pytest.raises(RuntimeError, match=rf"(?s)\[cuda\].*shaders/{name}\.metal\({line}\): error: .*{what}"):
        _core._cuda_compile_source(f"shaders/{name}.metal", text, "sm_90")


def test_a_good_source_compiles_and_resolves(nvrtc, tmp_path):
    src = "kernel void ok(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] += 1.0; }\n"
    text = cuda(tmp_path, src, name="ok.metal")
    ns = prepass.namespace_of(str(tmp_path / "shaders" / "ok.metal"), str(tmp_path))
    expr = f"&{ns}::bm_cuda_tramp_ok"
    for arch, cubin in (("sm_90", True), ("compute_90", False)):
        is_cubin, size, lowered, _ = _core._cuda_compile_source("shaders/ok.metal", text, arch, [expr])
        assert is_cubin == cubin and size > 0 and "bm_cuda_tramp_ok" in lowered[expr]


def test_the_whole_stand_in_compiles(nvrtc, tmp_path):
    """tests/cuda/stand_in.metal calls everything the stand-in offers (the shaders use a part)."""
    (tmp_path / "shaders").mkdir()
    path = tmp_path / "shaders" / "stand_in.metal"
    path.write_text((ROOT / "tests" / "cuda" / "stand_in.metal").read_text())
    text = prepass.generate(str(path), str(tmp_path), [], target="cuda")
    ns = prepass.namespace_of(str(path), str(tmp_path))
    exprs = [f"&{ns}::bm_cuda_tramp_cov<{t}>" for t in ("float", "half", "bfloat")]
    for arch in ("sm_90", "compute_80"):
        _, size, lowered, log = _core._cuda_compile_source("shaders/stand_in.metal", text, arch, exprs)
        assert size > 0 and sorted(lowered) == sorted(exprs)
        assert "warning" not in log, log


def test_options_are_strict_ieee(nvrtc):
    opts = _core._cuda_nvrtc_options("sm_90")
    for o in ("-default-device", "--fmad=false", "-ftz=false", "-prec-div=true", "-prec-sqrt=true", "-arch=sm_90"):
        assert o in opts
    assert not any("fast" in o for o in opts)
