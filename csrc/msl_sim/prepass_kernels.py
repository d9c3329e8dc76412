"""Kernels for the MSL pre-pass: parses kernel signatures and explicit instantiations, generates
the trampolines and registrations, and decides which kernels need fibers (see prepass.py)."""

import re

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


STATEMENT_KEYWORDS = {"if", "for", "while", "switch", "catch", "return"}


def is_collective(name):
    return name in ("threadgroup_barrier", "simdgroup_barrier") or name.startswith(
        ("simd_", "quad_")
    )


class KernelPass:
    """Methods of prepass.Pass that deal with kernels (self.s is the Source being rewritten)."""

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
        """One kernel parameter: {kind: buffer|threadgroup|attr, arg, type, name, by_value}."""
        s = self.s
        attrs = [k for k in range(a, b) if k in self.attr_end]
        if not attrs:
            s.error(
                a,
                f"kernel '{kname}': parameter '{s.join(a, b, raw=True)}' has no attribute such as [[buffer(n)]]",
            )
        name_k = max(k for k in range(a, attrs[0]) if s.tok(k).kind == "id")
        type_text = s.join(a, name_k)
        raw = [s.text(k) for k in range(a, name_k)]
        content = self.attr_content(attrs[0])
        for ak in attrs:
            s.replace(ak, self.attr_end[ak], "")
        m = re.match(r"^(buffer|threadgroup)\((.*)\)$", content)
        param = {"type": type_text, "name": s.text(name_k)}
        if m:
            # `constant T&` is passed by value on CUDA (csrc/cuda/abi.h); pointers and `device T&`
            # as device pointers.
            by_value = raw[-1:] == ["&"] and "device" not in raw
            param.update(kind=m.group(1), arg=m.group(2), by_value=by_value)
            if not re.match(r"^\d+$", m.group(2)):
                s.error(a, f"kernel '{kname}': [[{content}]] needs a literal index")
            return param
        if content in POSITION_ATTRS:
            param.update(kind="attr", arg=POSITION_ATTRS[content])
            return param
        s.error(
            a,
            f"kernel '{kname}': parameter attribute [[{content}]] is not supported by the simulator",
        )

    @staticmethod
    def sim_binding(p):
        if p["kind"] == "attr":
            return f"::bm::msl::attr<{p['type']}>(bm_ids.{p['arg']})"
        fn = "bind_buffer" if p["kind"] == "buffer" else "bind_threadgroup"
        return f"::bm::msl::{fn}<{p['type']}>({p['arg']})"

    @staticmethod
    def cuda_params(params):
        """KernelInfo::cuda_params: "L", then pN / vN per [[buffer(N)]] in parameter order."""
        out = ["L"]
        for p in params:
            if p["kind"] == "buffer":
                out.append(("v" if p["by_value"] else "p") + p["arg"])
        return " ".join(out)

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
        params = self.parse_params(name_k + 1, close, name)
        source = s.where(name_k).rsplit(":", 1)[0]
        kernel = {
            "name": name,
            "template": header is not None,
            "max_threads": max_threads,
            "body": (j, body_end),
            "source": source,
            "params": params,
            "cuda_params": self.cuda_params(params),
        }
        self.kernels[name] = kernel
        if self.target == "cuda":
            text = self.cuda_trampoline(kernel, header, first)
            kernel["trampoline"] = (body_end, text)
            return body_end
        binds = ", ".join(self.sim_binding(p) for p in params)
        tramp = f"bm_msl_tramp_{name}"
        sig = f"void {tramp}([[maybe_unused]] const ::bm::msl::LaneIds& bm_ids)"
        if header is not None:
            tparams = ", ".join(self.template_params(header, first - 1))
            text = f"{s.join(header, first)} {sig} {{ {name}<{tparams}>({binds}); }}"
        else:
            host = host or f'"{name}"'
            text = (
                f"static {sig} {{ {name}({binds}); }} static const ::bm::msl::KernelRegistration "
                f'bm_msl_reg_{name}({host}, &{tramp}, @FIBERS:{name}@, {max_threads}, "{source}", '
                f'"&{self.ns}::bm_cuda_tramp_{name}", "{kernel["cuda_params"]}");'
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
            s.error(a, "cannot find which kernel this explicit instantiation names")
        qual, name, args = cand
        kernel = self.kernels.get(name)
        if kernel is None or not kernel["template"]:
            s.error(a, f"instantiation of '{name}': no template kernel of that name in this file")
        if host is None:
            s.error(a, f"instantiation of kernel '{name}<{args}>' needs [[host_name(\"...\")]]")
        if self.target == "cuda":
            s.replace(a, b, "")  # NVRTC instantiates the trampolines named by name expressions
            return
        # The CUDA name expression stringizes the arguments after macro expansion ("float").
        text = (
            f"static const ::bm::msl::KernelRegistration BM_MSL_CAT(bm_msl_reg_, __COUNTER__)({host}, "
            f"&{qual}bm_msl_tramp_{name}<{args}>, @FIBERS:{name}@, {kernel['max_threads']}, "
            f'"{kernel["source"]}", BM_MSL_STR(&{self.ns}::{qual}bm_cuda_tramp_{name}<{args}>), '
            f'"{kernel["cuda_params"]}");'
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
                # `for (...) {`, `if (...) {`... are statements, not function definitions: taking
                # them as functions would make every kernel with a loop "need" fibers.
                if m > 0 and s.tok(m - 1).kind == "id" and s.text(m - 1) not in STATEMENT_KEYWORDS:
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
