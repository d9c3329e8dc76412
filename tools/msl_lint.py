#!/usr/bin/env python3
"""MSL conformance check: rejects what the Metal Shading Language excludes from shaders/.

The simulator and the CUDA target compile the shaders as C++, which accepts much that Apple's
Metal compiler rejects, and no machine that builds bessemer here has Apple's compiler. This check
keeps the source inside the language: `python tools/msl_lint.py [files or directories...]`
(default: shaders/) prints `file:line:col: [rule] message` for each finding and exits 1 if there
is any. Pure Python, no build needed. The rules, their sections of the specification and the
public evidence for what Apple's compiler accepts beyond the letter of it: docs/shaders.md.

Specification: Apple, "Metal Shading Language Specification", version 3.2 (2024-06-06),
https://developer.apple.com/metal/Metal-Shading-Language-Specification.pdf; section numbers below
are that version's. cmake/metal.cmake compiles with -std=metal3.1.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from msl_lint_graph import CallGraph, Decls  # noqa: E402
from msl_lint_source import Source, match  # noqa: E402

# rule id -> (specification reference, why). Each has a control in tests/test_msl_lint.py.
RULES = {
    "std-library": ("1.5.4", "Metal code must not use the C++ standard library; Metal has its own (section 5)"),
    "include": ("1.5.4", "only Metal's own headers (<metal_*>) and our headers in shaders/ exist for Metal"),
    "lambda": ("1.5.4", "lambda expressions need Metal 3.2; we compile with -std=metal3.1"),
    "new-delete": ("1.5.4", "new and delete operators are not available (no heap on the GPU)"),
    "exception": ("1.5.4", "exception handling (throw, try, catch) is not available"),
    "noexcept": ("1.5.4", "the noexcept operator is not available (there are no exceptions)"),
    "goto": ("1.5.4", "the goto statement is not available"),
    "storage-class": ("1.5.4", "register and thread_local storage attributes are not available"),
    "virtual": ("1.5.4", "virtual functions are not available (no dynamic dispatch)"),
    "rtti": ("1.5.4", "type identification (typeid) and dynamic_cast are not available"),
    "double": ("2.1", "Metal does not support double or long double"),
    "long-long": ("2.1", "Metal does not support long long or unsigned long long (long is 64-bit)"),
    # Stricter than Apple's compiler, which accepts `0.5` in practice: ml-explore/mlx at 846d176,
    # mlx/backend/metal/kernels/conv.metal:315 (`float acc = 0.0;`) and fft/radix.h:56. In C++ (the
    # simulator, NVRTC) it is a double that only the pre-pass's rewrite to 0.5f makes agree.
    "float-literal": ("2.1", "a floating literal needs its precision spelled: f, h or bf suffix"),
    # Ours more than the spec's: 3.2 allows recursion in kernels from Metal 2.4, but only with
    # MTLComputePipelineDescriptor.maxCallStackDepth raised above its default of 1.
    "recursion": ("1.5.4", "recursive calls need a call stack Metal does not reserve by default"),
    "kernel-address-space": ("4", "kernel pointer/reference arguments need device, constant or threadgroup"),
    "program-scope": ("4.2", "variables at program scope must be declared in the constant address space"),
    "main": ("1.5.4", "a Metal function cannot be called main"),
    # Not a rule: "derived classes" are in 1.5.4's list, but Apple's compiler accepts non-virtual
    # derivation (ml-explore/mlx mlx/backend/metal/kernels/steel/utils/integral_constant.h:34,
    # `struct is_integral : bool_constant<...>`, compiled into steel_attention.metal), and
    # shaders/reduce.metal relies on it (MeanOp : SumOp<T>).
    "preprocessor": ("1.6", "the check must know which #if branch Apple's compiler takes"),
}

# Words the specification excludes wherever they appear (section 1.5.4 unless noted).
KEYWORD_RULES = {
    "goto": "goto",
    "thread_local": "storage-class",
    "register": "storage-class",
    "virtual": "virtual",
    "typeid": "rtti",
    "dynamic_cast": "rtti",
    "throw": "exception",
    "try": "exception",
    "catch": "exception",
    "noexcept": "noexcept",
    "double": "double",  # 2.1; `long double` is caught by its `double`
}
# Address spaces a kernel's pointer or reference argument may name (section 4; the last three are
# for tile, ray-tracing and mesh functions, which we do not write, but the spec allows them).
KERNEL_SPACES = {"device", "constant", "threadgroup", "threadgroup_imageblock", "ray_data", "object_data"}
# Tokens after which '[' indexes or declares an array instead of opening a lambda.
SUBSCRIPT_AFTER = {")", "]", "operator", "new", "delete"}


class Finding:
    def __init__(self, tok, rule, message):
        self.tok, self.rule, self.message = tok, rule, message

    def __str__(self):
        return f"{self.tok.file}:{self.tok.line}:{self.tok.col}: [{self.rule}] {self.message}"


def check_tokens(toks, findings):
    """The rules that one token (or a short run of them) decides."""
    for k, t in enumerate(toks):
        nxt = toks[k + 1].text if k + 1 < len(toks) else ""
        prev = toks[k - 1].text if k else ""
        if t.kind == "id":
            if t.text in KEYWORD_RULES:
                findings.append(Finding(t, KEYWORD_RULES[t.text], f"'{t.text}' is not part of MSL"))
            elif t.text == "std" and (nxt == "::" or prev == "namespace"):
                findings.append(Finding(t, "std-library", "the C++ standard library ('std') is not part of MSL"))
            elif t.text == "new" or (t.text == "delete" and prev != "="):  # `= delete` is no operator
                findings.append(Finding(t, "new-delete", f"the '{t.text}' operator is not part of MSL"))
            elif t.text == "long" and nxt == "long":
                findings.append(Finding(t, "long-long", "'long long' is not part of MSL; use long (64-bit)"))
        elif t.kind == "num":
            check_number(t, findings)
        elif t.text == "[" and is_lambda(toks, k):
            findings.append(Finding(t, "lambda", "lambda expressions need Metal 3.2 (we compile for 3.1)"))


_NUMBER = re.compile(r"(0x[0-9a-f]*(?:\.[0-9a-f]*)?(p[+-]?\d+)?|(\d*\.?\d*)(e[+-]?\d+)?)([a-z]*)")


def check_number(t, findings):
    m = _NUMBER.fullmatch(t.text.replace("'", "").lower())
    if m is None:
        return
    hex_exp, mantissa, dec_exp, suffix = m.group(2), m.group(3), m.group(4), m.group(5)
    is_float = bool(hex_exp) or (mantissa is not None and ("." in mantissa or bool(dec_exp)))
    if not is_float:
        if suffix.replace("u", "") == "ll":
            findings.append(Finding(t, "long-long", f"'{t.text}' is a long long literal; MSL has no long long"))
        return
    if suffix == "l":
        findings.append(Finding(t, "double", f"'{t.text}' is a long double literal"))
    elif suffix not in ("f", "h", "bf"):
        findings.append(Finding(t, "float-literal", f"'{t.text}' has no f/h/bf suffix: a double in C++"))


def is_lambda(toks, k):
    """Whether the '[' at toks[k] opens a lambda: not an attribute `[[...]]`, not a subscript or an
    array declarator (it follows an operand), and its ']' is followed by what follows a capture."""
    prev = toks[k - 1] if k else None
    if k + 1 < len(toks) and toks[k + 1].text == "[":
        return False  # `[[attribute]]`
    if prev is not None and prev.text == "[":
        return False  # the inner '[' of an attribute
    if prev is not None and (prev.kind in ("id", "num", "str", "chr") or prev.text in SUBSCRIPT_AFTER):
        if prev.text not in ("return", "case"):
            return False
    close = match(toks, k, "[", "]")
    after = toks[close + 1].text if close + 1 < len(toks) else ""
    return after in ("(", "{", "<", "mutable", "constexpr", "->")


def check_includes(src, root_dirs, findings):
    for tok, kind, target in src.includes:
        if kind == "<":
            if not target.startswith("metal_"):
                findings.append(Finding(tok, "include", f"<{target}> is not a Metal header (only <metal_*>)"))
        elif not any(os.path.isfile(os.path.join(d, target)) for d in root_dirs):
            findings.append(Finding(tok, "include", f'"{target}" is not a header beside the shaders'))


def check_decls(decls, findings):
    for f in decls.functions:
        if f.name == "main" and not f.scope:
            findings.append(Finding(f.name_tok, "main", "a Metal function cannot be named main"))
        if f.kernel:
            for p in f.params:
                check_kernel_param(f, p, findings)
    for first, decl in decls.variables:
        if not any(t.text == "constant" for t in decl):
            findings.append(
                Finding(first, "program-scope", "a program-scope variable must be 'constant' (and initialised)")
            )


def check_kernel_param(f, param, findings):
    toks, depth, k = [], 0, 0
    while k < len(param):  # drop `[[attributes]]`
        if param[k].text == "[" and k + 1 < len(param) and param[k + 1].text == "[":
            k = match(param, k, "[", "]") + 1
            continue
        toks.append(param[k])
        k += 1
    indirect = False
    for t in toks:
        depth += t.text == "<"
        depth -= t.text == ">"
        indirect = indirect or (depth == 0 and t.text in ("*", "&", "&&"))
    words = {t.text for t in toks}
    if not indirect or not toks:
        return
    if not words & KERNEL_SPACES:
        what = "thread (not allowed for a kernel argument)" if "thread" in words else "no address space"
        findings.append(
            Finding(toks[0], "kernel-address-space",
                    f"kernel '{f.name}': pointer/reference argument with {what}; use device, constant or threadgroup")
        )  # fmt: skip


def translation_units(sources):
    """{main file: [files it includes, itself first]}; a header no .metal includes is its own unit."""
    by_path = {os.path.realpath(s.path): s for s in sources}

    def closure(src, seen):
        seen.append(src)
        for _, kind, target in src.includes:
            if kind != '"':
                continue
            dep = by_path.get(os.path.realpath(os.path.join(os.path.dirname(src.path), target)))
            if dep is not None and dep not in seen:
                closure(dep, seen)
        return seen

    units = {s: closure(s, []) for s in sources if s.path.endswith(".metal")}
    covered = {id(x) for unit in units.values() for x in unit}
    for s in sources:
        if id(s) not in covered:
            units[s] = closure(s, [])
    return units


def check_recursion(sources, decls_of, findings):
    reported = set()
    for unit in translation_units(sources).values():
        macros = {}
        for s in unit:
            macros.update(s.macros)
        graph = CallGraph([decls_of[id(s)] for s in unit], macros)
        for cycle in graph.cycles():
            key = frozenset(node for node, _ in cycle)
            if key in reported or not cycle:
                continue
            reported.add(key)
            names = [graph.labels[node] for node, _ in cycle] + [graph.labels[cycle[0][0]]]
            findings.append(Finding(cycle[0][1], "recursion", "recursive call: " + " -> ".join(names)))


def lint(paths):
    """Findings for the .metal and .h files at `paths` (files or directories), sorted by place."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith((".metal", ".h")))
        else:
            files.append(p)
    sources = [Source(f, os.path.relpath(f)) for f in files]
    root_dirs = sorted({os.path.dirname(os.path.abspath(f)) for f in files})
    findings, decls_of = [], {}
    for src in sources:
        findings += [Finding(tok, rule, msg) for tok, rule, msg in src.problems]
        check_tokens(src.code, findings)
        for m in src.macros.values():
            check_tokens(m.body, findings)
        check_includes(src, [os.path.dirname(os.path.abspath(src.path))] + root_dirs, findings)
        decls_of[id(src)] = Decls(src.code)
        check_decls(decls_of[id(src)], findings)
    check_recursion(sources, decls_of, findings)
    findings.sort(key=lambda f: (f.tok.file, f.tok.line, f.tok.col, f.rule))
    return findings


def main(argv):
    if argv[:1] == ["--rules"]:
        for rule, (section, why) in RULES.items():
            print(f"{rule:22} MSL spec {section:6} {why}")
        return 0
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "shaders")
    paths = argv or [os.path.relpath(root)]
    findings = lint(paths)
    for f in findings:
        print(f)
    if findings:
        print(f"msl_lint: {len(findings)} finding(s); the rules: docs/shaders.md", file=sys.stderr)
        return 1
    print(f"msl_lint: {', '.join(paths)}: clean ({len(RULES)} rules)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
