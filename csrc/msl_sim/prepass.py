#!/usr/bin/env python3
"""Build-time pre-pass of the MSL simulator: turns one .metal file into a C++ translation unit.

    prepass.py INPUT.metal -o OUTPUT.cpp --root REPO_ROOT [-I DIR]...

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
A kernel is marked as needing fibers if its body, or any function or macro it names (followed
transitively through this translation unit), calls a barrier or a simd_/quad_ function.
"""

import argparse
import hashlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepass_lex import PrepassError, Source, expand_includes, line_map_of

QUALIFIERS = {"device", "constant", "threadgroup", "thread"}
BUILTIN_WORDS = {
    "unsigned",
    "signed",
    "int",
    "short",
    "long",
    "char",
    "float",
    "double",
    "bool",
    "void",
}
SWIZZLE = re.compile(r"^(?:[xyzw]{2,4}|[rgba]{2,4})$")
COMPONENT = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}
# Parameter attributes -> the LaneIds field the trampoline passes.
POSITION_ATTRS = {
    "thread_position_in_grid": "thread_position_in_grid",
    "thread_position_in_threadgroup": "thread_position_in_threadgroup",
    "threadgroup_position_in_grid": "threadgroup_position_in_grid",
    "threads_per_threadgroup": "threads_per_threadgroup",
    "dispatch_threads_per_threadgroup": "dispatch_threads_per_threadgroup",
    "threadgroups_per_grid": "threadgroups_per_grid",
    "threads_per_grid": "threads_per_grid",
    "thread_index_in_threadgroup": "thread_index_in_threadgroup",
    "thread_index_in_simdgroup": "thread_index_in_simdgroup",
    "simdgroup_index_in_threadgroup": "simdgroup_index_in_threadgroup",
    "simdgroups_per_threadgroup": "simdgroups_per_threadgroup",
    "threads_per_simdgroup": "threads_per_simdgroup",
    "thread_execution_width": "threads_per_simdgroup",
}


def is_collective(name):
    return name in ("threadgroup_barrier", "simdgroup_barrier") or name.startswith(
        ("simd_", "quad_")
    )


class Pass:
    def __init__(self, src):
        self.s = src
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
            elif t == "reinterpret_cast" and s.text(k + 1) == "<":
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

    # ---------- kernels ----------
    def template_params(self, hk, close):
        """Names of a template header's parameters, as arguments (`T`, `Ts...`)."""
        s, names, start = self.s, [], hk + 2
        depth = 0
        for j in range(hk + 2, close + 1):
            t = s.text(j)
            if t in ("<", "(", "["):
                depth += 1
            elif t in (">", ")", "]") and j != close:
                depth -= 1
            if (t == "," and depth == 0) or j == close:
                ks = list(range(start, j))
                if "=" in [s.text(x) for x in ks]:
                    ks = ks[: [s.text(x) for x in ks].index("=")]
                ids = [x for x in ks if s.tok(x).kind == "id"]
                if ids:
                    pack = any(s.text(x) == "..." for x in ks)
                    names.append(s.text(ids[-1]) + ("..." if pack else ""))
                start = j + 1
        return names

    def parse_params(self, open_, close, kname):
        """Binding expressions for the parameters between the parentheses at open_ and close."""
        s, binds, start, j = self.s, [], open_ + 1, open_ + 1
        pairs = {"(": ")", "[": "]", "{": "}", "<": ">"}
        while j < close:
            t = s.text(j)
            if j in self.attr_end:
                j = self.attr_end[j] + 1
                continue
            if t in pairs:
                j = s.match(j, t, pairs[t]) + 1
                continue
            if t == ",":
                binds.append(self.parse_param(start, j, kname))
                start = j + 1
            j += 1
        if close > start:
            binds.append(self.parse_param(start, close, kname))
        return binds

    def parse_param(self, a, b, kname):
        s = self.s
        attrs = [k for k in range(a, b) if k in self.attr_end]
        if not attrs:
            s.error(
                a,
                f"kernel '{kname}': parameter '{s.join(a, b, raw=True)}' has no attribute such as [[buffer(n)]]",
            )
        name_k = max(k for k in range(a, attrs[0]) if s.tok(k).kind == "id")
        type_text = s.join(a, name_k)
        content = self.attr_content(attrs[0])
        for ak in attrs:
            s.replace(ak, self.attr_end[ak], "")
        m = re.match(r"^(buffer|threadgroup)\((.*)\)$", content)
        if m:
            fn = "bind_buffer" if m.group(1) == "buffer" else "bind_threadgroup"
            return f"::bm::msl::{fn}<{type_text}>({m.group(2)})"
        if content in POSITION_ATTRS:
            return f"::bm::msl::attr<{type_text}>(bm_ids.{POSITION_ATTRS[content]})"
        s.error(
            a,
            f"kernel '{kname}': parameter attribute [[{content}]] is not supported by the simulator",
        )

    def find_kernels(self):
        s, after = self.s, -1
        for k in range(len(s.sig)):
            is_kw = s.text(k) == "kernel" and s.tok(k).kind == "id" and k not in self.owned
            is_attr = (
                k in self.attr_end
                and self.attr_content(k) == "kernel"
                and not self.in_instantiation(k)
            )
            if k <= after or not (is_kw or is_attr):
                continue
            if s.tok(k).directive:
                s.error(
                    k,
                    "kernels defined inside macros are not supported: write a template kernel and "
                    "instantiate it from the macro",
                )
            after = self.parse_kernel(k)

    def in_instantiation(self, k):
        return any(a <= k <= b for a, b in self.instantiations)

    def parse_kernel(self, marker):
        """Records the kernel declared around `marker`; returns the index of its last token."""
        s = self.s
        first = marker  # back over attributes and specifiers to the start of the declaration
        while True:
            p = first - 1
            if p in self.attr_start:
                first = self.attr_start[p]
            elif s.text(p) in ("kernel", "inline", "static") and s.tok(p).kind == "id":
                first = p
            else:
                break
        header = self.headers.get(first - 1)  # k of `template` if a template header ends here
        host, max_threads, k = None, "0", first
        while True:  # forwards: attributes, `kernel`, `void`, name, parameters, body
            if k in self.attr_end:
                content = self.attr_content(k)
                m = re.match(r"^host_name\((.*)\)$", content)
                if m:
                    host = m.group(1)
                m = re.match(r"^max_total_threads_per_threadgroup\((.*)\)$", content)
                if m:
                    max_threads = m.group(1)
                s.replace(k, self.attr_end[k], "")
                k = self.attr_end[k] + 1
            elif s.text(k) == "kernel":
                s.replace(k, k, "")
                k += 1
            elif s.text(k) in ("inline", "static"):
                k += 1
            else:
                break
        if s.text(k) != "void":
            s.error(k, "a kernel must return void")
        name_k = k + 1
        name = s.text(name_k)
        if s.text(name_k + 1) != "(":
            s.error(name_k, "expected the kernel's parameter list")
        close = s.match(name_k + 1, "(", ")")
        j = self.skip_attrs_fwd(close + 1)
        if s.text(j) == ";":
            return j  # a declaration; the definition gets the trampoline
        if s.text(j) != "{":
            s.error(j, f"expected the body of kernel '{name}'")
        if name in self.kernels:
            s.error(
                name_k, f"kernel '{name}' is defined twice (overloaded kernels are not supported)"
            )
        body_end = s.match(j, "{", "}")
        binds = ", ".join(self.parse_params(name_k + 1, close, name))
        source = s.where(name_k).rsplit(":", 1)[0]
        kernel = {
            "name": name,
            "template": header is not None,
            "max_threads": max_threads,
            "body": (j, body_end),
            "source": source,
        }
        self.kernels[name] = kernel
        tramp = f"bm_msl_tramp_{name}"
        sig = f"void {tramp}([[maybe_unused]] const ::bm::msl::LaneIds& bm_ids)"
        if header is not None:
            params = ", ".join(self.template_params(header, first - 1))
            text = f"{s.join(header, first)} {sig} {{ {name}<{params}>({binds}); }}"
        else:
            host = host or f'"{name}"'
            text = (
                f"static {sig} {{ {name}({binds}); }} static const ::bm::msl::KernelRegistration "
                f'bm_msl_reg_{name}({host}, &{tramp}, @FIBERS:{name}@, {max_threads}, "{source}");'
            )
        kernel["trampoline"] = (body_end, text)
        return body_end

    def instantiate(self, a, b):
        """`template [[host_name(H)]] [[kernel]] decltype(f<A>) f<A>;` -> a static registration."""
        s, host = self.s, None
        for j in range(a, b):
            if j in self.attr_end:
                m = re.match(r"^host_name\((.*)\)$", self.attr_content(j))
                if m:
                    host = m.group(1)
        cand, j = None, a + 1
        while j < b:
            t = s.text(j)
            if j in self.attr_end:
                j = self.attr_end[j] + 1
                continue
            if t == "decltype":
                j = s.match(j + 1, "(", ")") + 1
                continue
            if t == "(":
                break
            if s.tok(j).kind == "id" and s.text(j + 1) == "<":
                close = s.match(j + 1, "<", ">")
                q = j
                while s.text(q - 1) == "::" and s.tok(q - 2).kind == "id":
                    q -= 2
                cand = (s.join(q, j), s.text(j), s.join(j + 2, close))
                j = close + 1
                continue
            j += 1
        if cand is None:
            return  # not a kernel instantiation (e.g. a helper's); leave it alone
        qual, name, args = cand
        kernel = self.kernels.get(name)
        if kernel is None or not kernel["template"]:
            if host is None:
                return
            s.error(a, f"instantiation of '{name}': no template kernel of that name in this file")
        if host is None:
            s.error(a, f"instantiation of kernel '{name}<{args}>' needs [[host_name(\"...\")]]")
        text = (
            f"static const ::bm::msl::KernelRegistration BM_MSL_CAT(bm_msl_reg_, __COUNTER__)({host}, "
            f"&{qual}bm_msl_tramp_{name}<{args}>, @FIBERS:{name}@, {kernel['max_threads']}, "
            f'"{kernel["source"]}");'
        )
        s.replace(a, b, text)

    # ---------- which kernels need fibers ----------
    def fiber_needs(self):
        s = self.s
        names = {}  # function or macro name -> set of identifiers its body mentions
        for k in range(len(s.sig)):
            t = s.text(k)
            if t == "{" and s.tok(k).directive is None:
                j = k - 1
                while s.text(j) in ("const", "noexcept", "mutable") or j in self.attr_start:
                    j = self.attr_start.get(j, j) - 1
                if s.text(j) != ")":
                    continue
                depth, m = 0, j
                while m >= 0:
                    if s.text(m) == ")":
                        depth += 1
                    elif s.text(m) == "(":
                        depth -= 1
                        if depth == 0:
                            break
                    m -= 1
                if m > 0 and s.tok(m - 1).kind == "id":
                    end = s.match(k, "{", "}")
                    ids = {s.text(x) for x in range(k + 1, end) if s.tok(x).kind == "id"}
                    names.setdefault(s.text(m - 1), set()).update(ids)
            elif t == "define" and s.tok(k).directive == "define" and s.text(k - 1) == "#":
                dirid = s.tok(k).dirid
                x, ids = k + 2, set()
                while x < len(s.sig) and s.tok(x).dirid == dirid:
                    if s.tok(x).kind == "id":
                        ids.add(s.text(x))
                    x += 1
                names.setdefault(s.text(k + 1), set()).update(ids)
        needs = {n for n, ids in names.items() if any(is_collective(i) for i in ids)}
        changed = True
        while changed:
            changed = False
            for n, ids in names.items():
                if n not in needs and ids & needs:
                    needs.add(n)
                    changed = True
        return needs

    def run(self):
        self.find_attributes()
        self.find_templates()
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
        out = self.s.render()
        for kernel in self.kernels.values():
            out = out.replace(f"@FIBERS:{kernel['name']}@", "true" if kernel["fibers"] else "false")
        return out


def generate(path, root, include_dirs):
    text = expand_includes(path, root, include_dirs)
    src = Source(text, line_map_of(text))
    body = Pass(src).run()
    rel = os.path.relpath(path, root)
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    ns = f"bm_msl_{stem}_{hashlib.sha1(rel.encode()).hexdigest()[:8]}"
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
    args = ap.parse_args(argv)
    try:
        out = generate(args.input, args.root, args.include_dirs)
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
