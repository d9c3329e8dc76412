#!/usr/bin/env python3
"""Build-time pre-pass of the MSL simulator: turns one .metal file into a C++ translation unit.

    prepass.py INPUT.metal -o OUTPUT.cpp --root REPO_ROOT [-I DIR]... [--target sim|cuda]

--target cuda writes the NVRTC translation instead (prepass_cuda.py, docs/cuda.md).

What it rewrites (token by token, keeping line numbers; see prepass_lex.py):
  - address spaces: `device T*` / `threadgroup T*` -> bm::msl::ptr<T> (a bounds-checked pointer),
    `const device T*` / `constant T*` -> cptr<T>; `device T&` -> T&, `constant T&` -> const T&;
    `thread` disappears; `constant` on a variable becomes `const`;
  - `threadgroup T x[N];` in a function body -> a static slot plus storage shared by the lanes of
    one threadgroup (TgSlot); `threadgroup T x;` likewise, as a reference;
  - float literals: `1.5` -> `1.5f` (MSL has no double), `0.5h` -> `metal::half(0.5f)`;
  - swizzles: `v.xy` -> `v.template swizzle<0,1>()`; `reinterpret_cast<device T*>` -> ptr_cast;
  - kernels: drops `kernel`, [[kernel]], [[host_name]] and parameter attributes, and appends a
    trampoline after each kernel body that binds [[buffer(n)]], [[threadgroup(n)]] and the thread
    position attributes, then calls the kernel;
  - `template [[host_name("x")]] [[kernel]] decltype(f<T>) f<T>;` (also inside a macro) -> a static
    KernelRegistration of the trampoline instantiated the same way.
prepass_lex.py holds the tokens and edits, prepass_kernels.py the kernel parsing and generation.
A kernel is marked as needing fibers if its body, or any function or macro it names (followed
transitively through this translation unit), calls a barrier or a simd_/quad_ function.
"""

import argparse
import hashlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepass_cuda import CudaPass, generate_cuda
from prepass_kernels import KernelPass, is_collective
from prepass_lex import PrepassError, Source, expand_includes, line_map_of

QUALIFIERS = {"device", "constant", "threadgroup", "thread"}
# Words that together name a built-in type ("unsigned int").
BUILTIN_WORDS = {"unsigned", "signed", "int", "short", "long", "char", "float", "double"}
BUILTIN_WORDS.update({"bool", "void"})
SWIZZLE = re.compile(r"^(?:[xyzw]{2,4}|[rgba]{2,4})$")
COMPONENT = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}


class Pass(KernelPass, CudaPass):
    def __init__(self, src, target="sim", ns=""):
        self.s = src
        self.target = target  # "sim" (C++ for the simulator) or "cuda" (NVRTC; prepass_cuda.py)
        self.ns = ns  # the namespace the generated code is wrapped in
        self.attr_end = {}  # k of first '[' -> k of last ']'
        self.attr_start = {}  # k of last ']' -> k of first '['
        self.owned = set()  # k already covered by a larger rewrite (attributes, instantiations)
        self.headers = {}  # k of a template header's '>' -> k of its 'template'
        self.instantiations = []  # (k of 'template', k of ';')
        self.kernels = {}  # name -> dict

    # ---------- scanning helpers ----------
    def processed(self, k):
        """Tokens the rewrites apply to: code and #define bodies, not #include/#if/#pragma..."""
        d = self.s.tok(k).directive
        return k not in self.owned and (d is None or d == "define")

    def skip_attrs_fwd(self, k):
        while k in self.attr_end:
            k = self.attr_end[k] + 1
        return k

    def attr_content(self, k):
        return self.s.join(k + 2, self.attr_end[k] - 1)

    def is_attr(self, k, name):
        return k in self.attr_end and re.match(rf"^{name}\b", self.attr_content(k)) is not None

    def find_attributes(self):
        s = self.s
        k = 0
        while k < len(s.sig) - 1:
            if s.text(k) == "[" and s.text(k + 1) == "[":
                end = s.match(k, "[", "]")
                self.attr_end[k], self.attr_start[end] = end, k
                self.owned.update(range(k, end + 1))
                k = end + 1
            else:
                k += 1

    def find_templates(self):
        s = self.s
        for k in range(len(s.sig)):
            if s.text(k) != "template" or k in self.owned:
                continue
            if s.text(k + 1) == "<":
                self.headers[s.match(k + 1, "<", ">")] = k
            elif s.text(k - 1) not in ("::", ".", "->"):
                end = k
                while s.text(end) != ";":
                    end += 1
                    if end >= len(s.sig):
                        s.error(k, "explicit instantiation without ';'")
                # Kernel instantiations become registrations; others are ordinary code.
                marks = [
                    j
                    for j in range(k, end)
                    if s.text(j) == "kernel" or self.is_attr(j, "host_name")
                ]
                if marks:
                    self.instantiations.append((k, end))
                    self.owned.update(range(k, end + 1))

    def parse_type(self, k):
        """End (exclusive) of the type starting at k, or None if no type starts there."""
        s, named = self.s, False
        while k < len(s.sig):
            t, tok = s.text(k), s.tok(k)
            if t in ("const", "volatile", "struct", "typename", "enum", "class") or (
                t == "::" and not named
            ):
                k += 1
            elif t in BUILTIN_WORDS:
                named = True
                k += 1
            elif tok.kind == "id" and not named and t not in QUALIFIERS:
                named = True
                k += 1
                while True:
                    if s.text(k) == "<":
                        k = s.match(k, "<", ">") + 1
                    elif s.text(k) == "::" and s.tok(k + 1).kind == "id":
                        k += 2
                    else:
                        break
            else:
                break
        return k if named else None

    # ---------- address spaces ----------
    def rewrite_qualifier(self, k):
        if self.target == "cuda":
            return self.cuda_qualifier(k)
        s, q = self.s, self.s.text(k)
        start = k
        prefix = []
        while s.text(start - 1) in ("const", "volatile") and self.processed(start - 1):
            start -= 1
            prefix.append(s.text(start))
        end = self.parse_type(k + 1)
        nxt = s.text(end) if end is not None else ""
        if end is None or nxt not in ("*", "&") and q == "thread":
            if (
                q == "constant"
                and s.text(k + 1) not in ("constexpr", "static")
                and "const" not in prefix
            ):
                s.replace(k, k, "const")
            else:
                s.replace(k, k, "")
            return
        type_ks = range(k + 1, end)
        has_const = "const" in prefix or any(s.text(j) == "const" for j in type_ks)
        if nxt == "*" and q != "thread":
            drop = {j for j in type_ks if s.text(j) in ("const", "volatile")}
            inner = s.join(k + 1, end, skip=drop)
            kind = "cptr" if has_const or q == "constant" else "ptr"
            last = end
            if s.text(end + 1) in ("restrict", "__restrict", "__restrict__"):
                last = end + 1
            s.replace(start, last, f"::bm::msl::{kind}<{inner}>")
        elif nxt == "&" or q != "threadgroup":
            add_const = q == "constant" and not has_const
            s.replace(k, k, "const" if add_const else "")
        else:
            self.threadgroup_storage(k, end)

    def threadgroup_storage(self, k, type_end):
        """`threadgroup T a[N][M], b;` -> per-threadgroup storage through static TgSlots."""
        s = self.s
        type_text = s.join(k + 1, type_end)
        parts, j = [], type_end
        while True:
            if s.tok(j).kind != "id":
                s.error(j, "expected a name in a threadgroup declaration")
            name, j = s.text(j), j + 1
            dims = []
            while s.text(j) == "[":
                close = s.match(j, "[", "]")
                dims.append(s.join(j + 1, close))
                j = close + 1
            if s.text(j) == "=":
                s.error(j, "threadgroup variables cannot have initializers")
            slot = f"bm_msl_tg_{name}_{s.tok(k).line}"
            if dims:
                elem = type_text + "".join(f"[{d}]" for d in dims[1:])
                parts.append(
                    f"static ::bm::msl::TgSlot {slot}; ::bm::msl::ptr<{elem}> {name} = "
                    f'{slot}.template array<{elem}, ({dims[0]})>("{name}");'
                )
            else:
                parts.append(
                    f"static ::bm::msl::TgSlot {slot}; {type_text}& {name} = "
                    f'{slot}.template scalar<{type_text}>("{name}");'
                )
            if s.text(j) == ",":
                j += 1
                continue
            if s.text(j) != ";":
                s.error(j, "expected ';' after a threadgroup declaration")
            break
        s.replace(k, j, " ".join(parts))

    def rewrite_tokens(self):
        s, done_until = self.s, -1
        for k in range(len(s.sig)):
            if k <= done_until or not self.processed(k):
                continue
            t, tok, prev = s.text(k), s.tok(k), s.text(k - 1)
            if tok.kind == "id" and t in QUALIFIERS and prev not in (".", "->", "::"):
                self.rewrite_qualifier(k)
            elif tok.kind == "num":
                self.rewrite_number(k)
            elif (
                tok.kind == "id"
                and prev in (".", "->")
                and SWIZZLE.match(t)
                and s.text(k + 1) != "("
            ):
                idx = ",".join(str(COMPONENT[c]) for c in t)
                s.replace(k, k, f"template swizzle<{idx}>()")
            elif t == "reinterpret_cast" and s.text(k + 1) == "<" and self.target == "sim":
                close = s.match(k + 1, "<", ">")
                if any(
                    s.text(j) in ("device", "constant", "threadgroup") for j in range(k + 2, close)
                ):
                    s.replace(k, k, "::bm::msl::ptr_cast")
            done_until = max(done_until, s.last_edited)

    def rewrite_number(self, k):
        t = self.s.text(k)
        low = t.lower()
        is_float = (
            ("." in low or "p" in low) if low.startswith("0x") else ("." in low or "e" in low)
        )
        if not is_float:
            return
        m = re.match(r"^(.*?)([fFhHlL]?)$", t)
        digits, suffix = m.group(1), m.group(2)
        if suffix == "":
            self.s.replace(k, k, t + "f")
        elif suffix in "hH":
            self.s.replace(k, k, f"::metal::half({digits}f)")

    def run(self):
        self.find_attributes()
        self.find_templates()
        if self.target == "cuda":
            self.find_scopes()
        self.rewrite_tokens()
        self.find_kernels()
        for a, b in self.instantiations:
            self.instantiate(a, b)
        needs = self.fiber_needs()
        for kernel in self.kernels.values():
            a, b = kernel["body"]
            ids = {self.s.text(x) for x in range(a + 1, b) if self.s.tok(x).kind == "id"}
            kernel["fibers"] = any(is_collective(i) for i in ids) or bool(ids & needs)
            close, text = kernel["trampoline"]
            self.s.replace(close, close, "} " + text)
        if self.target == "cuda":
            return self.s.render()
        out = self.s.render()
        for kernel in self.kernels.values():
            out = out.replace(f"@FIBERS:{kernel['name']}@", "true" if kernel["fibers"] else "false")
        return out


def namespace_of(path, root):
    rel = os.path.relpath(path, root)
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    return f"bm_msl_{stem}_{hashlib.sha1(rel.encode()).hexdigest()[:8]}"


def generate(path, root, include_dirs, target="sim"):
    text = expand_includes(path, root, include_dirs)
    rel = os.path.relpath(path, root)
    ns = namespace_of(path, root)
    if target == "cuda":
        return generate_cuda(Pass, text, rel, ns)
    src = Source(text, line_map_of(text))
    body = Pass(src, "sim", ns).run()
    return (
        f"// Generated by csrc/msl_sim/prepass.py from {rel}. Do not edit.\n"
        f"#include <metal_stdlib>\nnamespace {ns} {{\n{body}\n}}  // namespace {ns}\n"
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--root", default=os.getcwd(), help="paths in messages are relative to this")
    ap.add_argument("-I", dest="include_dirs", action="append", default=[])
    ap.add_argument(
        "--target",
        choices=("sim", "cuda"),
        default="sim",
        help="sim: C++ for the simulator; cuda: one self-contained NVRTC source (docs/cuda.md)",
    )
    args = ap.parse_args(argv)
    try:
        out = generate(args.input, args.root, args.include_dirs, args.target)
    except PrepassError as e:
        print(e, file=sys.stderr)
        return 1
    old = None
    if os.path.exists(args.output):
        with open(args.output, encoding="utf-8") as f:
            old = f.read()
    if old != out:  # unchanged output keeps its timestamp: no needless recompiles
        os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
