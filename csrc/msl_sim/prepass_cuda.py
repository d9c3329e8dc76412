"""The pre-pass's CUDA target (prepass.py --target cuda; docs/cuda.md).

One .metal file becomes one self-contained NVRTC source: the CUDA metal_stdlib stand-in
(csrc/cuda/include/metal_stdlib, its headers and csrc/cuda/abi.h inlined between #line markers),
then the shader in the simulator's namespace with these rewrites (line numbers kept):
  - `device` / `thread` / `threadgroup` on pointers and references disappear (generic pointers);
    `constant T*` / `constant T&` become `const T*` / `const T&`;
  - `threadgroup T x[N];` -> `__shared__ T x[N];`; a namespace-scope `constant T x = ...;` ->
    `__constant__ const T x = ...;` (`constant constexpr` -> `constexpr`); elsewhere -> `const`;
  - float literals and swizzles as for the simulator; kernel attributes removed;
  - after each kernel a `__global__` trampoline `bm_cuda_tramp_<name>` (a template when the kernel
    is) taking csrc/cuda/abi.h's parameters, computing the thread-position attributes and calling
    the kernel; explicit instantiations disappear (NVRTC name expressions instantiate).
"""

import os
import re

from prepass_lex import PrepassError, Source, expand_includes, line_map_of

STANDIN = os.path.join("csrc", "cuda", "include", "metal_stdlib")


class CudaPass:
    """Methods of prepass.Pass for the CUDA target (self.s is the Source being rewritten)."""

    def find_scopes(self):
        """self.depth[k]: how many braces (outside directives) are open at significant token k."""
        s, depth, d = self.s, [], 0
        for k in range(len(s.sig)):
            t = s.text(k)
            directive = s.tok(k).directive is not None
            if t == "}" and not directive:
                d -= 1
            depth.append(d)
            if t == "{" and not directive:
                d += 1
        self.depth = depth

    def cuda_qualifier(self, k):
        s, q = self.s, self.s.text(k)
        prefix_const = s.text(k - 1) == "const" and self.processed(k - 1)
        end = self.parse_type(k + 1)
        nxt = s.text(end) if end is not None else ""
        if nxt in ("*", "&"):
            # A pointer or reference: the address space goes, `constant` leaves `const`.
            has_const = prefix_const or any(s.text(j) == "const" for j in range(k + 1, end))
            s.replace(k, k, "const" if q == "constant" and not has_const else "")
        elif q == "threadgroup":
            s.replace(k, k, "__shared__")
        elif q == "constant":
            if s.text(k + 1) in ("constexpr", "static"):
                s.replace(k, k, "")
            elif self.depth[k] == 0:
                s.replace(k, k, "__constant__" if prefix_const else "__constant__ const")
            else:
                s.replace(k, k, "" if prefix_const else "const")
        else:
            s.replace(k, k, "")

    def cuda_trampoline(self, kernel, header, first):
        """The __global__ entry point of one kernel (parameters: csrc/cuda/abi.h)."""
        s, name = self.s, kernel["name"]
        decls, args = ["const ::BmCudaLaunch bm_l"], []
        for p in kernel["params"]:
            t = p["type"]
            if p["kind"] == "buffer":
                n = p["arg"]
                if p["by_value"]:  # constant T& -> the bytes, by value
                    decls.append(f"{t[:-1].rstrip()} v{n}")
                    args.append(f"v{n}")
                elif t.endswith("&"):  # device T& -> a pointer to it
                    decls.append(f"{t[:-1].rstrip()}* p{n}")
                    args.append(f"*p{n}")
                else:
                    decls.append(f"{t} p{n}")
                    args.append(f"p{n}")
            elif p["kind"] == "threadgroup":
                args.append(f"::bm_cuda::threadgroup_arg<{t}>(bm_l, {p['arg']})")
            else:
                args.append(f"::bm_cuda::attr<{t}>(bm_ids.{p['arg']})")
        bounds = kernel["max_threads"] if kernel["max_threads"] != "0" else "1024"
        tramp = f"bm_cuda_tramp_{name}"
        callee = name
        tmpl = ""
        if header is not None:
            callee = f"{name}<{', '.join(self.template_params(header, first - 1))}>"
            tmpl = s.join(header, first) + " "
        return (
            f"{tmpl}__global__ void __launch_bounds__({bounds}) {tramp}({', '.join(decls)}) {{ "
            f"::bm_cuda::LaneIds bm_ids; if (!::bm_cuda::lane_ids(bm_l, bm_ids)) return; "
            f"{callee}({', '.join(args)}); }}"
        )


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def expand_standin():
    """The stand-in with its headers inlined (#line markers name csrc/cuda/...)."""
    text = expand_includes(os.path.join(REPO, STANDIN), REPO, [os.path.join(REPO, "csrc")])
    for line in text.split("\n"):
        if re.match(r"^\s*#\s*include\b", line):
            raise PrepassError(f"{STANDIN}: the CUDA stand-in includes a header NVRTC cannot find: {line}")
    return text


def generate_cuda(pass_class, text, rel, ns):
    # The shader's own `#include <metal_stdlib>` (all <metal_*> headers) is the inlined stand-in.
    text = re.sub(r"(?m)^#include <metal_stdlib>$", "", text)
    src = Source(text, line_map_of(text))
    # Other includes left are in branches for the host (`#ifndef __METAL_VERSION__`).
    body = pass_class(src, "cuda", ns).run()
    return (
        f"// Generated by csrc/msl_sim/prepass.py --target cuda from {rel}. Do not edit.\n"
        f"{expand_standin()}\n"
        # BM_CUDA_SHADER_SCOPE: using-declarations that make the stand-in's names win over CUDA's
        # global ones (float4, exp...) inside the shader (csrc/cuda/include/metal_stdlib).
        f"namespace {ns} {{ BM_CUDA_SHADER_SCOPE\n{body}\n}}  // namespace {ns}\n"
        # Name expressions (KernelInfo::cuda_name) are resolved at global scope; their template
        # arguments may name the shader's own types (add_op...).
        f"using namespace {ns};\n"
    )
