"""Declarations and the call graph of the shaders, for the MSL conformance check (msl_lint.py).

A light parser over one file's code tokens (msl_lint_source.Source.code): it finds function
definitions at namespace and struct scope (templates included: a template is one node, as every
instantiation runs the same body), struct bases, and namespace-scope variable declarations.
Calls are resolved by name, narrowed by qualification (`Op::apply`), member access, the caller's
struct and the argument count; what cannot be told apart by those (overloads of one arity) is
conservatively one node. Function-like and object-like macros are nodes too, so a call that goes
through a macro body still closes a cycle.
"""

from msl_lint_source import match, match_angle

# Words that precede '(' without naming a function of ours.
NOT_CALLS = {
    "if", "for", "while", "switch", "return", "sizeof", "alignof", "alignas", "decltype", "static_assert",
    "catch", "throw", "new", "delete", "case", "typeid", "noexcept", "static_cast", "reinterpret_cast",
    "const_cast", "dynamic_cast", "__attribute__", "defined", "template", "operator",
}  # fmt: skip
NOT_NAMES = NOT_CALLS | {"kernel", "inline", "static", "constexpr", "const", "void", "device", "constant"}
# Namespaces of the Metal standard library: a call qualified by one never names a function of ours.
METAL_NAMESPACES = {"metal", "precise", "fast", "simd", "std"}


class Function:
    def __init__(self, name, scope, name_tok, params, body, kernel):
        self.name, self.scope, self.name_tok, self.params, self.body = name, scope, name_tok, params, body
        self.kernel = kernel
        optional = sum(1 for p in params if any(t.text == "=" for t in p))
        variadic = any(t.text == "..." for p in params for t in p)
        self.max_args = float("inf") if variadic else len(params)
        self.min_args = len(params) - optional - (1 if variadic else 0)

    def key(self):
        return ("fn", self.name_tok.file, self.name_tok.line, self.name_tok.col)

    def label(self):
        return f"{self.scope}::{self.name}" if self.scope else self.name


class Decls:
    """functions, structs (name -> base names) and program-scope variables [(first tok, decl toks)]."""

    def __init__(self, code):
        self.functions, self.structs, self.variables = [], {}, []
        self._parse(code)

    def _parse(self, toks):
        scopes = [("namespace", "")]
        i, start = 0, 0
        while i < len(toks):
            t = toks[i].text
            if t == ";":
                if scopes[-1][0] == "namespace" and start < i:
                    self._maybe_variable(toks[start:i])
                i, start = i + 1, i + 1
            elif t == "}":
                if len(scopes) > 1:
                    scopes.pop()
                i, start = i + 1, i + 1
            elif (i == start and toks[i].kind == "id" and t not in NOT_NAMES and t != scopes[-1][1]
                  and i + 1 < len(toks) and toks[i + 1].text == "("):  # fmt: skip
                # `NAME(` opening a declaration (not a constructor) is a macro use, such as
                # `BM_FOR_EACH_DTYPE(BM_INSTANTIATE_COPY)`, which has no ';': it ends at its ')'.
                i = start = match(toks, i + 1) + 1
            elif t in ("(", "["):
                i = match(toks, i, t, ")" if t == "(" else "]") + 1
            elif t == "{":
                decl = toks[start:i]
                kind, name, extra = classify(decl)
                if kind == "namespace":
                    scopes.append(("namespace", name))
                    i += 1
                elif kind == "struct":
                    scopes.append(("struct", name))
                    self.structs[name] = extra
                    i += 1
                else:
                    end = match(toks, i, "{", "}")
                    if kind != "function":  # an initializer or enum: the declaration goes on to its ';'
                        i = end + 1
                        continue
                    name_tok, params, kernel = extra
                    scope = scopes[-1][1] if scopes[-1][0] == "struct" else ""
                    self.functions.append(Function(name, scope, name_tok, params, toks[i + 1 : end], kernel))
                    i = end + 1
                start = i
            else:
                i += 1

    def _maybe_variable(self, decl):
        decl = strip_prefix(decl)
        if not decl or decl[0].text in ("typedef", "using", "template", "struct", "class", "union", "enum",
                                        "static_assert", "namespace", "extern", "friend"):  # fmt: skip
            return
        if classify(decl)[0] == "function":  # a declaration without a body
            return
        self.variables.append((decl[0], decl))


def strip_prefix(decl):
    """decl without leading `template <...>` headers and `[[...]]` attributes."""
    k = 0
    while k < len(decl):
        if decl[k].text == "template" and k + 1 < len(decl) and decl[k + 1].text == "<":
            close = match_angle(decl, k + 1)
            if close is None:
                break
            k = close + 1
        elif decl[k].text == "[" and k + 1 < len(decl) and decl[k + 1].text == "[":
            k = match(decl, k, "[", "]") + 1
        else:
            break
    return decl[k:]


def classify(decl):
    """(kind, name, extra) of the declaration that a '{' ends: namespace, struct (extra: bases),
    function (extra: (name token, params, is kernel)) or other (an initializer, an enum...)."""
    body = strip_prefix(decl)
    if not body:
        return "other", "", None
    first = body[0].text
    if first == "namespace":
        return "namespace", body[1].text if len(body) > 1 and body[1].kind == "id" else "", None
    if first in ("struct", "class", "union"):
        names = [t for t in strip_prefix(body[1:]) if t.kind == "id"]
        colon = next((k for k, t in enumerate(body) if t.text == ":"), None)
        bases = []
        if colon is not None:
            depth = 0
            for t in body[colon + 1 :]:
                depth += t.text == "<"
                depth -= t.text == ">"
                if depth == 0 and t.kind == "id" and t.text not in ("public", "private", "protected", "virtual"):
                    bases.append(t.text)
        return "struct", names[0].text if names else "", bases
    if first == "enum":
        return "other", "", None
    k = 0
    while k < len(body):
        t = body[k]
        if t.text == "=":
            return "other", "", None
        if t.text == "[" and k + 1 < len(body) and body[k + 1].text == "[":
            k = match(body, k, "[", "]") + 1
            continue
        if t.text == "operator":
            close = k + 1
            while close < len(body) and body[close].text != "(":
                close += 1
            if close + 1 < len(body) and body[close + 1].text == ")" and close == k + 1:
                close += 2  # operator()
            name = "operator" + "".join(x.text for x in body[k + 1 : close])
            return _function(decl, body, t, name, close)
        if t.text == "(":
            prev = body[k - 1] if k else None
            if prev is not None and prev.text == ">":
                opening = _angle_start(body, k - 1)
                prev = body[opening - 1] if opening else None
            if prev is not None and prev.kind == "id" and prev.text not in NOT_NAMES:
                return _function(decl, body, prev, prev.text, k)
            k = match(body, k) + 1
            continue
        k += 1
    return "other", "", None


def _angle_start(toks, close):
    depth = 0
    for j in range(close, -1, -1):
        depth += toks[j].text == ">"
        depth -= toks[j].text == "<"
        if depth == 0:
            return j
    return 0


def _function(decl, body, name_tok, name, open_paren):
    close = match(body, open_paren)
    inner = body[open_paren + 1 : close]
    params, depth, cur = [], 0, []
    for t in inner:
        if t.text in ("(", "[", "{", "<"):
            depth += 1
        elif t.text in (")", "]", "}", ">"):
            depth -= 1
        elif t.text == ">>":
            depth -= 2
        if t.text == "," and depth == 0:
            params.append(cur)
            cur = []
        else:
            cur.append(t)
    if cur and not (len(cur) == 1 and cur[0].text == "void"):
        params.append(cur)
    # `kernel` or `[[kernel]]` before the name (strip_prefix dropped the leading attributes).
    kernel = any(t.text == "kernel" for t in decl[: decl.index(name_tok)])
    return "function", name, (name_tok, params, kernel)


class Call:
    def __init__(self, tok, qual, member, nargs):
        self.tok, self.name, self.qual, self.member, self.nargs = tok, tok.text, qual, member, nargs


def calls_in(toks, macro_names):
    """Calls (and macro uses, as Calls with nargs None) in a function or macro body."""
    out = []
    for k, tok in enumerate(toks):
        if tok.kind != "id" or tok.text in NOT_CALLS:
            continue
        if tok.text in macro_names:
            out.append(Call(tok, None, False, None))
            continue
        j = k + 1
        if j < len(toks) and toks[j].text == "<":
            close = match_angle(toks, j)
            j = close + 1 if close is not None else j
        if j >= len(toks) or toks[j].text != "(":
            continue
        end = match(toks, j)
        nargs, depth = (0 if end == j + 1 else 1), 0
        for t in toks[j + 1 : end]:
            depth += t.text in ("(", "[", "{")
            depth -= t.text in (")", "]", "}")
            nargs += t.text == "," and depth == 0
        qual, member = None, k > 0 and toks[k - 1].text in (".", "->")
        if k > 1 and toks[k - 1].text == "::":
            q = k - 2
            if toks[q].text == ">":
                q = _angle_start(toks, q) - 1
            qual = toks[q].text if q >= 0 else ""
        out.append(Call(tok, qual, member, nargs))
    return out


class CallGraph:
    """Functions and macros of one translation unit; edges are (caller key, callee key, call token)."""

    def __init__(self, decls_list, macros):
        self.functions = [f for d in decls_list for f in d.functions]
        self.structs = {}
        for d in decls_list:
            self.structs.update(d.structs)
        self.macros = macros
        self.by_name = {}
        for f in self.functions:
            self.by_name.setdefault(f.name, []).append(f)
        self.labels = {f.key(): f.label() for f in self.functions}
        self.edges = {}
        for f in self.functions:
            self._add(f.key(), f.scope, calls_in(f.body, macros))
        for name, m in macros.items():
            self.labels[("macro", name)] = name
            self._add(("macro", name), "", calls_in(m.body, macros))

    def _scopes(self, struct):
        seen, todo = set(), [struct]
        while todo:
            s = todo.pop()
            if s not in seen:
                seen.add(s)
                todo.extend(self.structs.get(s, []))
        return seen

    def resolve(self, call, caller_scope):
        if call.nargs is None:
            return [("macro", call.name)]
        cands = [f for f in self.by_name.get(call.name, []) if f.min_args <= call.nargs <= f.max_args]
        if call.member:
            cands = [f for f in cands if f.scope]
        elif call.qual is not None:
            if call.qual in METAL_NAMESPACES or call.qual == "":
                cands = [f for f in cands if f.scope == call.qual]
            elif call.qual in self.structs:
                scopes = self._scopes(call.qual)
                cands = [f for f in cands if f.scope in scopes]
            else:  # a template parameter (Op::apply): any struct's member of that name
                cands = [f for f in cands if f.scope]
        else:
            own = [f for f in cands if f.scope and f.scope in self._scopes(caller_scope)] if caller_scope else []
            cands = own or [f for f in cands if not f.scope]
        return [f.key() for f in cands]

    def _add(self, key, scope, calls):
        out = self.edges.setdefault(key, [])
        for c in calls:
            for callee in self.resolve(c, scope):
                out.append((callee, c.tok))

    def cycles(self):
        """One cycle [(node, call token to the next node), ...] for each strongly connected set of
        nodes that holds a function and recurses (macro-only sets cannot recurse)."""
        index, low, on_stack, stack, sccs, counter = {}, {}, set(), [], [], [0]
        nodes = list(self.edges)

        def strongconnect(v):  # Tarjan, iterative over the successors
            work = [(v, 0)]
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on_stack.add(v)
            while work:
                node, i = work.pop()
                succ = self.edges.get(node, [])
                if i < len(succ):
                    work.append((node, i + 1))
                    w = succ[i][0]
                    if w not in index:
                        index[w] = low[w] = counter[0]
                        counter[0] += 1
                        stack.append(w)
                        on_stack.add(w)
                        work.append((w, 0))
                    elif w in on_stack:
                        low[node] = min(low[node], index[w])
                    continue
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    sccs.append(comp)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])

        for v in nodes:
            if v not in index:
                strongconnect(v)
        result = []
        for comp in sccs:
            members = set(comp)
            fns = sorted(n for n in comp if n[0] == "fn")
            if not fns:
                continue
            if len(comp) == 1 and not any(w == comp[0] for w, _ in self.edges.get(comp[0], [])):
                continue
            result.append(self._cycle_from(fns[0], members))
        return result

    def _cycle_from(self, start, members):
        """A path start -> ... -> start inside `members` (breadth-first, so the shortest)."""
        prev, frontier = {}, [start]
        while frontier:
            nxt = []
            for node in frontier:
                for w, tok in self.edges.get(node, []):
                    if w not in members:
                        continue
                    if w == start:
                        path, cur, via = [], node, tok
                        while True:
                            path.append((cur, via))
                            if cur == start:
                                break
                            cur, via = prev[cur]
                        return list(reversed(path))
                    if w not in prev:
                        prev[w] = (node, tok)
                        nxt.append(w)
            frontier = nxt
        return []
