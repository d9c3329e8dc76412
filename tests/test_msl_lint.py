"""The MSL conformance check (tools/msl_lint.py): one control per rule that must be reported, the
look-alikes that must not be, and the real shaders/ tree, which must be clean."""

import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import msl_lint  # noqa: E402

PRELUDE = "#include <metal_stdlib>\nusing namespace metal;\n"


def lint(tmp_path, files):
    """Rules found in `files` ({name: source}), as [(rule, file, line)]."""
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return [(f.rule, pathlib.Path(f.tok.file).name, f.tok.line) for f in msl_lint.lint([str(tmp_path)])]


def rules(tmp_path, body, name="k.metal"):
    return sorted({r for r, _, _ in lint(tmp_path, {name: PRELUDE + textwrap.dedent(body)})})


# (rule, source that breaks it). Each is a control: the check must report exactly that rule.
CONTROLS = [
    ("std-library", "inline float f(float x) { return std::fabs(x); }"),
    ("std-library", "using namespace std;"),
    ("include", "#include <cmath>"),
    ("include", '#include "not_here.h"'),
    ("lambda", "inline float f(float x) { auto g = [](float y) { return y; }; return g(x); }"),
    ("lambda", "inline float f(float x) { auto g = [&] { return x; }; return g(); }"),
    ("lambda", "inline float f(float x) { auto g = [=]() mutable { return x; }; return g(); }"),
    ("lambda", "inline float f(float x) { return [x](float y) { return x + y; }(x); }"),
    ("new-delete", "inline void f() { thread int* p = new int; }"),
    ("new-delete", "inline void f(thread int* p) { delete p; }"),
    ("exception", "inline void f() { throw 1; }"),
    ("exception", "inline int f() { try { return 1; } catch (...) { return 0; } }"),
    ("noexcept", "inline float f(float x) noexcept { return x; }"),
    ("goto", "inline int f(int x) { if (x) goto done; x = 1; done: return x; }"),
    ("storage-class", "inline int f() { thread_local int n = 0; return n; }"),
    ("storage-class", "inline int f() { register int n = 0; return n; }"),
    ("virtual", "struct A { virtual float f() const { return 0.0f; } };"),
    ("rtti", "struct A { int a; };\ninline bool f(A a) { return typeid(a) == typeid(A); }"),
    ("rtti", "struct A { int a; };\ninline void f(thread A* p) { auto q = dynamic_cast<thread A*>(p); }"),
    ("double", "inline float f(float x) { double y = x; return float(y); }"),
    ("double", "inline float f(float x) { long double y = x; return float(y); }"),
    ("double", "inline float f(float x) { return x * float(1.5L); }"),
    ("long-long", "inline long f(long x) { long long y = x; return y; }"),
    ("long-long", "inline long f(long x) { return x + 1LL; }"),
    ("long-long", "constant ulong mask = 0xFFULL;"),
    ("float-literal", "inline float f(float x) { return x * 0.5; }"),
    ("float-literal", "inline float f(float x) { return x * 1e-3; }"),
    ("float-literal", "inline float f(float x) { return x * 2.; }"),
    ("recursion", "inline int f(int n) { return n > 0 ? f(n - 1) : 0; }"),
    ("recursion", "inline int b(int n);\ninline int a(int n) { return b(n); }\ninline int b(int n) { return a(n); }"),
    (
        "recursion",  # through templates, called by name with and without template arguments
        """
        template <typename T> T h(T x);
        template <typename T> T g(T x) { return h<T>(x); }
        template <typename T> T h(T x) { return g(x); }
        """,
    ),
    ("recursion", "#define CALL_F(x) f(x)\ninline int f(int n) { return CALL_F(n - 1); }"),
    ("recursion", "struct S { static int f(int n) { return S::f(n - 1); } };"),
    (
        "recursion",  # a functor's apply called back through a template parameter
        """
        template <typename Op> int run(int x) { return Op::apply(x); }
        struct Twice { static int apply(int x) { return run<Twice>(x); } };
        """,
    ),
    ("kernel-address-space", "kernel void k(float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {}"),
    ("kernel-address-space", "struct A { int n; };\nkernel void k(const A& a [[buffer(0)]]) {}"),
    ("kernel-address-space", "kernel void k(thread float* out [[buffer(0)]]) {}"),
    (
        "kernel-address-space",
        "template <typename T> [[kernel]] void k(const T* in [[buffer(0)]]) {}\n"
        'template [[host_name("k_f")]] [[kernel]] decltype(k<float>) k<float>;',
    ),
    ("program-scope", "float table[2] = {1.0f, 2.0f};"),
    ("program-scope", "int counter;"),
    ("main", "int main() { return 0; }"),
    ("preprocessor", "#if FOO ? 1 : 0\n#endif"),
]


@pytest.mark.parametrize("rule,body", CONTROLS)
def test_control_is_reported(tmp_path, rule, body):
    assert rules(tmp_path, body) == [rule]


def test_every_rule_has_a_control():
    assert {rule for rule, _ in CONTROLS} == set(msl_lint.RULES)


CLEAN = [
    # attributes, subscripts, array declarators and calls through them are no lambdas
    """
    kernel void k(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                  constant uint& n [[buffer(2)]], threadgroup float* tg [[threadgroup(0)]],
                  uint i [[thread_position_in_grid]]) {
      thread float v[4] = {0.0f, 1.0f, 2.0f, 3.0f};
      threadgroup float shared[8];
      shared[i % 8] = v[i % 4];
      out[i] = in[uint(v[int(in[0])])] + shared[0] + tg[0];
    }
    """,
    # what the words look like in comments and strings is no code
    """
    // std::vector<double> v = new double[3]; goto end; 0.5 [](){}
    /* throw; virtual; typeid; long long; thread_local */
    #define BM_NAME(x) "std::" #x
    inline int f() { return 1; }
    """,
    # suffixed literals and integers of every spelling
    "constant float c[6] = {0.5f, 1e-3f, 0x1p-3f, 2.f, float(0.5h), float(0.5bf)};\n"
    "constant long d[5] = {10, 0x10, 0xffu, 10u, 10l};",
    # program-scope declarations that are not variables, and a deleted function
    """
    typedef int bm_int;
    using bm_uint = uint;
    struct A { int n; A(const thread A&) = delete; };
    inline float f(float x);
    constant constexpr int N = 4;
    template <typename T> kernel void k(device T* out [[buffer(0)]]) {}
    template [[host_name("k_float")]] [[kernel]] decltype(k<float>) k<float>;
    """,
    # overloads of different arity calling each other; a member call named like a free function;
    # a macro that names itself (no recursion: the preprocessor does not re-expand it)
    """
    inline float g(float x, float y) { return x + y; }
    inline float g(float x) { return g(x, 0.0f); }
    struct Op { static float apply(float x) { return x; } };
    inline float apply(Op op, float x) { return op.apply(x); }
    #define SELF(x) SELF
    """,
    # a helper's pointer argument is not a kernel argument (MSL gives it the thread space)
    "inline float first(const thread float* p) { return p[0]; }",
    # the host branch of a shared header is not Metal source
    """
    #ifdef __METAL_VERSION__
    inline float bm_abs(float x) { return metal::fabs(x); }
    #else
    #include <cmath>
    inline float bm_abs(float x) { return std::fabs(x); }
    #endif
    #if defined(__METAL_VERSION__) && __METAL_VERSION__ >= 300
    inline float ok() { return 1.0f; }
    #elif 1
    double not_metal;
    #endif
    #if !defined(__METAL_VERSION__) == 1 || !(__METAL_VERSION__ >= 310)
    double not_metal_either;
    #endif
    """,
]


@pytest.mark.parametrize("body", CLEAN)
def test_look_alikes_are_not_reported(tmp_path, body):
    assert rules(tmp_path, body) == []


def test_host_branch_taken_when_not_metal_is_reported(tmp_path):
    # The control for the branch logic: the same std:: in the branch Metal compiles is reported.
    body = "#ifndef __METAL_VERSION__\ninline int f() { return 0; }\n#else\nusing namespace std;\n#endif\n"
    assert rules(tmp_path, body) == ["std-library"]


def test_recursion_across_included_header(tmp_path):
    found = lint(
        tmp_path,
        {
            "h.h": "#pragma once\ninline int mf(int n);\ninline int hf(int n) { return mf(n - 1); }\n",
            "k.metal": PRELUDE + '#include "h.h"\ninline int mf(int n) { return hf(n); }\n',
        },
    )
    assert [r for r, _, _ in found] == ["recursion"]


def test_position_and_exit_status(tmp_path):
    (tmp_path / "k.metal").write_text(PRELUDE + "inline int f(int x) {\n  goto end;\nend:\n  return x;\n}\n")
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "msl_lint.py"), str(tmp_path)],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 1
    assert out.stdout.strip().endswith("k.metal:4:3: [goto] 'goto' is not part of MSL")


def test_shaders_tree_is_clean():
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "msl_lint.py"), str(ROOT / "shaders")],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == "" or "clean" in out.stdout
