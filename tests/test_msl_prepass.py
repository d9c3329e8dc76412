"""The MSL simulator's build-time pre-pass (csrc/msl_sim/prepass.py): its rewrites, the code it
generates for kernels, which kernels it runs as fibers, and its error messages. The generated
code itself is compiled and run by the C++ tests (tests/cpp/test_msl_sim*.cpp)."""

import importlib.util
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("prepass", ROOT / "csrc" / "msl_sim" / "prepass.py")
prepass = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(prepass)


def gen(tmp_path, source, name="k.metal", headers=None):
    for hname, text in (headers or {}).items():
        (tmp_path / hname).write_text(text)
    path = tmp_path / name
    path.write_text(source)
    return prepass.generate(str(path), str(tmp_path), [])


def body(out):
    """The rewritten shader text between the generated prologue and epilogue."""
    return out.split("\n", 3)[3].rsplit("\n}  // namespace", 1)[0]


def squash(s):
    return re.sub(r"\s+", " ", s)


def test_address_spaces(tmp_path):
    out = squash(
        gen(
            tmp_path,
            "void f(device const float* a, const device float* b, device float* c,\n"
            "       constant float* d, threadgroup int* e, constant Args& f, device float4& g,\n"
            "       thread float& h, device float* __restrict i) {}\n"
            "constant float table[2] = {1.0, 2.0};\n"
            "constant constexpr int kN = 4;\n",
        )
    )
    assert "::bm::msl::cptr<float> a" in out
    assert "::bm::msl::cptr<float> b" in out
    assert "::bm::msl::ptr<float> c" in out
    assert "::bm::msl::cptr<float> d" in out
    assert "::bm::msl::ptr<int> e" in out
    assert "const Args& f" in out
    assert " float4& g" in out and "device" not in out
    assert " float& h" in out and "thread" not in out
    assert "::bm::msl::ptr<float> i" in out and "restrict" not in out
    assert "const float table[2] = {1.0f, 2.0f};" in out
    assert " constexpr int kN = 4;" in out


def test_threadgroup_storage_is_per_group(tmp_path):
    out = squash(
        gen(
            tmp_path,
            "void f() {\n  threadgroup float tile[16][17], row[8];\n  threadgroup uint n;\n}\n",
        )
    )
    assert re.search(
        r"static ::bm::msl::TgSlot (\w+); ::bm::msl::ptr<float\[17\]> tile = "
        r'\1.template array<float\[17\], \(16\)>\("tile"\);',
        out,
    )
    assert re.search(r'::bm::msl::ptr<float> row = \w+.template array<float, \(8\)>\("row"\);', out)
    assert re.search(r'uint& n = \w+.template scalar<uint>\("n"\);', out)


def test_literals_and_swizzles(tmp_path):
    out = gen(
        tmp_path,
        "float f(float4 v) { return 0.5 + 1e-3 + 2.0f + 0x10 + 3 + float(0.25h) + v.xyz.x + v.wx.y"
        " + c.rgba.r + s.xy(1); }\n",
    )
    assert "0.5f + 1e-3f + 2.0f + 0x10 + 3 + float(::metal::half(0.25f))" in out
    assert "v.template swizzle<0,1,2>().x + v.template swizzle<3,0>().y" in out
    assert "c.template swizzle<0,1,2,3>().r" in out
    assert "s.xy(1)" in out  # a method call, not a swizzle


def test_plain_kernel_gets_trampoline_and_registration(tmp_path):
    out = gen(
        tmp_path,
        "kernel void add(device const float* a [[buffer(0)]],\n"
        "                device float* out [[buffer(1)]],\n"
        "                threadgroup float* tmp [[threadgroup(0)]],\n"
        "                uint2 gid [[thread_position_in_grid]],\n"
        "                ushort lane [[thread_index_in_simdgroup]]) {\n"
        "  out[gid.x] = a[gid.x];\n"
        "}\n"
        '[[host_name("mul_f32")]] [[max_total_threads_per_threadgroup(128)]] kernel void mul(\n'
        "    device float* o [[buffer(3)]]) { o[0] = 1.0; }\n",
    )
    text = body(out)
    assert "kernel" not in text.replace("bm_", "") and "[[" not in text.split("} static")[0]
    assert (
        "add(::bm::msl::bind_buffer<::bm::msl::cptr<float>>(0), "
        "::bm::msl::bind_buffer<::bm::msl::ptr<float>>(1), "
        "::bm::msl::bind_threadgroup<::bm::msl::ptr<float>>(0), "
        "::bm::msl::attr<uint2>(bm_ids.thread_position_in_grid), "
        "::bm::msl::attr<ushort>(bm_ids.thread_index_in_simdgroup))" in out
    )
    # The CUDA name expression and parameter layout ride along (csrc/cuda/abi.h).
    assert (
        'KernelRegistration bm_msl_reg_add("add", &bm_msl_tramp_add, false, 0, "k.metal", '
        '"&bm_msl_k_91a66235::bm_cuda_tramp_add", "L p0 p1")' in out
    )
    assert (
        'KernelRegistration bm_msl_reg_mul("mul_f32", &bm_msl_tramp_mul, false, 128, "k.metal", '
        '"&bm_msl_k_91a66235::bm_cuda_tramp_mul", "L p3")' in out
    )


def test_line_numbers_survive_every_rewrite(tmp_path):
    src = (
        "kernel void k(device float* a [[buffer(0)]],\n"
        "              uint i [[thread_position_in_grid]]) {\n"
        "  threadgroup float t[4],\n"
        "                    u[4];\n"
        "  a[i] = 1.0;\n"
        "}\n"
        "int marker_line_7;\n"
    )
    lines = body(gen(tmp_path, src)).split("\n")
    assert lines[0] == '#line 1 "k.metal"'
    assert lines[7] == "int marker_line_7;"


def test_template_kernel_instantiated_from_a_macro(tmp_path):
    out = gen(
        tmp_path,
        '#include "types.h"\n'
        "template <typename T, int N = 2>\n"
        "[[kernel]] void fill(device T* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
        "  o[i] = T(N);\n"
        "}\n"
        "#define INST(T, NAME) \\\n"
        '  template [[host_name("fill_" #NAME)]] [[kernel]] decltype(fill<T, 3>) fill<T, 3>;\n'
        "FOR_TYPES(INST)\n",
        headers={"types.h": "#pragma once\n#define FOR_TYPES(X) X(float, f32) X(int, i32)\n"},
    )
    assert (
        "template <typename T, int N = 2> void bm_msl_tramp_fill("
        "[[maybe_unused]] const ::bm::msl::LaneIds& bm_ids) "
        "{ fill<T, N>(::bm::msl::bind_buffer<::bm::msl::ptr<T>>(0)" in out
    )
    assert (
        "static const ::bm::msl::KernelRegistration BM_MSL_CAT(bm_msl_reg_, __COUNTER__)"
        '("fill_" #NAME, &bm_msl_tramp_fill<T, 3>, false, 0, "k.metal", '
        'BM_MSL_STR(&bm_msl_k_91a66235::bm_cuda_tramp_fill<T, 3>), "L p0");\nFOR_TYPES(INST)' in out
    )
    assert '#line 1 "types.h"' in out and "#pragma once" not in out


def test_other_explicit_instantiations_are_ordinary_code(tmp_path):
    out = gen(
        tmp_path,
        "template <typename T> T load(device T* p) { return p[0]; }\n"
        "template float load<float>(device float* p);\n",
    )
    assert "template float load<float>(::bm::msl::ptr<float> p);" in out


def test_fiber_classification_follows_helpers_and_macros(tmp_path):
    out = gen(
        tmp_path,
        "inline void sync() { threadgroup_barrier(mem_flags::mem_threadgroup); }\n"
        "inline float outer(float x) { sync(); return x; }\n"
        "#define REDUCE(x) simd_sum(x)\n"
        "kernel void a(device float* o [[buffer(0)]]) { o[0] = outer(1.0); }\n"
        "kernel void b(device float* o [[buffer(0)]]) { o[0] = REDUCE(1.0); }\n"
        "kernel void c(device float* o [[buffer(0)]]) { o[0] = 1.0; }\n"
        "kernel void d(device float* o [[buffer(0)]]) { o[0] = simd_shuffle_xor(1.0, 1); }\n",
    )
    for name, fibers in (("a", "true"), ("b", "true"), ("c", "false"), ("d", "true")):
        assert f'("{name}", &bm_msl_tramp_{name}, {fibers},' in out


def test_fiber_classification_ignores_statement_blocks(tmp_path):
    # A loop around a collective in one helper must not mark every kernel with a loop.
    out = gen(
        tmp_path,
        "inline float all_sum(float v) { for (ushort m = 16; m > 0; m >>= 1) { v += simd_shuffle_xor(v, m); }"
        " return v; }\n"
        "inline float pick(bool c) { if (c) { return simd_sum(1.0); } return 0.0; }\n"
        "kernel void g(device float* o [[buffer(0)]]) { o[0] = all_sum(1.0); }\n"
        "kernel void s(device float* o [[buffer(0)]]) { for (int i = 0; i < 4; ++i) { if (i > 1) { o[i] = 1.0; } } }\n",
    )
    for name, fibers in (("g", "true"), ("s", "false")):
        assert f'("{name}", &bm_msl_tramp_{name}, {fibers},' in out


def test_metal_headers_map_to_the_stand_in(tmp_path):
    out = gen(tmp_path, "#include <metal_math>\n#include <metal_stdlib>\nkernel void k() {}\n")
    assert out.count("#include <metal_stdlib>") == 3  # the prologue's and both shader lines


@pytest.mark.parametrize(
    "source, message",
    [
        ("kernel void k(device float* a) {}", "parameter 'device float* a' has no attribute"),
        ("kernel void k(float4 p [[stage_in]]) {}", "[[stage_in]] is not supported"),
        ("kernel int k() { return 0; }", "a kernel must return void"),
        (
            "#define K(T) kernel void k_##T(device T* a [[buffer(0)]]) {}",
            "kernels defined inside macros are not supported",
        ),
        (
            (
                "template <typename T> kernel void k(device T* a [[buffer(0)]]) {}\n"
                "template [[kernel]] decltype(k<float>) k<float>;"
            ),
            "needs [[host_name",
        ),
        (
            "void f() {\n  threadgroup float x = 0;\n}",
            "k.metal:2: error: threadgroup variables cannot have",
        ),
        ("kernel void k() {}\nkernel void k() {}", "kernel 'k' is defined twice"),
        (
            'template [[host_name("x")]] [[kernel]] decltype(nope<float>) nope<float>;',
            "instantiation of 'nope': no template kernel of that name",
        ),
    ],
)
def test_errors_name_the_file_and_line(tmp_path, source, message):
    with pytest.raises(prepass.PrepassError) as err:
        gen(tmp_path, source)
    assert message in str(err.value)
    assert str(err.value).startswith("k.metal:")


def test_command_line_writes_only_changed_output(tmp_path):
    (tmp_path / "k.metal").write_text(
        "kernel void k(device float* a [[buffer(0)]]) { a[0] = 1.0; }\n"
    )
    out = tmp_path / "gen" / "k.metal.cpp"
    args = [str(tmp_path / "k.metal"), "-o", str(out), "--root", str(tmp_path)]
    assert prepass.main(args) == 0
    first = out.stat().st_mtime_ns
    assert prepass.main(args) == 0
    assert out.stat().st_mtime_ns == first
    (tmp_path / "bad.metal").write_text("kernel void k(device float* a) {}\n")
    bad = [str(tmp_path / "bad.metal"), "-o", str(tmp_path / "bad.cpp"), "--root", str(tmp_path)]
    assert prepass.main(bad) == 1
