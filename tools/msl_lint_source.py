"""One shader file as the MSL conformance check (msl_lint.py) sees it.

Tokens come from the pre-pass tokenizer (csrc/msl_sim/prepass_lex.py), so comments, strings and
character literals are never read as code. Preprocessor conditionals are evaluated as Apple's
compiler evaluates them (`__METAL_VERSION__` defined): the host-only `#else` branch of a header
shared with the C++ core (`#include <cmath>`, `std::fma`) is not part of the Metal source and is
not checked. Macro bodies are kept apart: their tokens are checked like code, and the call graph
follows calls through them.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "csrc", "msl_sim"))
from prepass_lex import SPACE, tokenize  # noqa: E402

# What `xcrun metal -std=metal3.1` on macOS predefines (MSL specification 3.2, section 1.6.2);
# cmake/metal.cmake compiles the shaders with -std=metal3.1.
METAL_PREDEFINED = {"__METAL_VERSION__": 310, "__METAL__": 1, "__METAL_MACOS__": 1}


class Tok:
    __slots__ = ("col", "file", "kind", "line", "text")

    def __init__(self, kind, text, file, line, col):
        self.kind, self.text, self.file, self.line, self.col = kind, text, file, line, col

    def __repr__(self):
        return f"Tok({self.text!r} {self.file}:{self.line}:{self.col})"


class Macro:
    def __init__(self, name_tok, params, body):
        self.name_tok, self.params, self.body = name_tok, params, body  # params None: object-like


class Source:
    """code: the significant tokens Metal compiles, outside directives; macros: name -> Macro;
    includes: [(tok, '<' or '"', target)]; problems: [(tok, rule, message)] found while reading."""

    def __init__(self, path, display):
        self.path, self.name = path, display
        self.code, self.macros, self.includes, self.problems = [], {}, [], []
        with open(path, encoding="utf-8") as f:
            self._read(f.read())

    def _read(self, text):
        raw = tokenize(text)
        toks, pos, line_start = [], 0, 0
        for t in raw:
            toks.append((t, Tok(t.kind, t.text, self.name, t.line, pos - line_start + 1)))
            nl = t.text.rfind("\n")
            if nl >= 0:
                line_start = pos + nl + 1
            pos += len(t.text)
        defined = dict(METAL_PREDEFINED)
        stack = []  # [enclosing active, a branch was taken, this branch active]
        i = 0
        while i < len(toks):
            t, tok = toks[i]
            if t.directive is None:
                if t.kind not in SPACE and all(s[2] for s in stack):
                    self.code.append(tok)
                i += 1
                continue
            j = i
            while j < len(toks) and toks[j][0].dirid == t.dirid and toks[j][0].directive is not None:
                j += 1
            group = toks[i:j]
            i = j
            self._directive(group, defined, stack)

    def _directive(self, group, defined, stack):
        sig = [(t, tok) for t, tok in group if t.kind not in SPACE]
        name = sig[1][1].text if len(sig) > 1 else ""
        args = [tok for _, tok in sig[2:]]
        active = all(s[2] for s in stack)
        if name in ("if", "ifdef", "ifndef"):
            cond = False
            if active:
                cond = self._condition(name, args, defined, sig[0][1])
            stack.append([active, cond, active and cond])
        elif name == "elif" and stack:
            s = stack[-1]
            s[2] = s[0] and not s[1] and self._condition("if", args, defined, sig[0][1])
            s[1] = s[1] or s[2]
        elif name == "else" and stack:
            s = stack[-1]
            s[2], s[1] = s[0] and not s[1], True
        elif name == "endif" and stack:
            stack.pop()
        elif not active:
            return
        elif name == "define" and args:
            params = None
            # Function-like only when '(' follows the name with no space between (C++ [cpp.replace]).
            k = next(n for n, (t, _) in enumerate(group) if t is sig[2][0])
            if k + 1 < len(group) and group[k + 1][0].text == "(":
                close = next(n for n, a in enumerate(args) if a.text == ")")
                params = [a.text for a in args[2:close] if a.text != ","]
                body = args[close + 1 :]
            else:
                body = args[1:]
            defined[args[0].text] = " ".join(b.text for b in body)
            self.macros[args[0].text] = Macro(args[0], params, body)
        elif name == "undef" and args:
            defined.pop(args[0].text, None)
        elif name == "include" and args:
            if args[0].kind == "str":
                self.includes.append((sig[0][1], '"', args[0].text.strip('"')))
            else:
                self.includes.append((sig[0][1], "<", "".join(a.text for a in args).strip("<>")))

    def _condition(self, kind, args, defined, at):
        if kind in ("ifdef", "ifndef"):
            return (args[0].text in defined) == (kind == "ifdef") if args else False
        expr, k = [], 0
        while k < len(args):
            a = args[k].text
            if a == "defined":
                paren = k + 1 < len(args) and args[k + 1].text == "("
                name = args[k + 2].text if paren else args[k + 1].text if k + 1 < len(args) else ""
                expr.append("1" if name in defined else "0")
                k += 4 if paren else 2
                continue
            if args[k].kind == "id":
                value = defined.get(a, 0)
                expr.append(str(value) if str(value).isdigit() else "0")
            elif args[k].kind == "num":
                expr.append(a.rstrip("uUlL"))
            else:
                expr.append({"&&": " and ", "||": " or ", "/": "//"}.get(a, a))
            k += 1
        # C's '!' binds tighter than any binary operator, Python's 'not' looser: wrap its operand.
        k = len(expr) - 1
        while k >= 0:
            if expr[k] == "!" and k + 1 < len(expr):
                end = k + 1
                if expr[end] == "(":
                    depth = 0
                    for end in range(k + 1, len(expr)):
                        depth += (expr[end] == "(") - (expr[end] == ")")
                        if depth == 0:
                            break
                expr[k : end + 1] = ["(not " + " ".join(expr[k + 1 : end + 1]) + ")"]
            k -= 1
        try:
            return bool(eval(" ".join(expr), {"__builtins__": {}}))  # noqa: S307 - integers and operators only
        except Exception:
            self.problems.append((at, "preprocessor", f"cannot evaluate '#if {' '.join(x.text for x in args)}'"))
            return False


def match(toks, k, open_="(", close=")"):
    """Index of the token closing the group opened at toks[k], or len(toks) if unbalanced."""
    depth = 0
    for j in range(k, len(toks)):
        if toks[j].text == open_:
            depth += 1
        elif toks[j].text == close:
            depth -= 1
            if depth == 0:
                return j
    return len(toks)


def match_angle(toks, k):
    """Index of the '>' closing the '<' at toks[k] (template arguments), or None if it is not one."""
    depth, j = 0, k
    while j < len(toks):
        t = toks[j].text
        if t in ("(", "["):
            j = match(toks, j, t, ")" if t == "(" else "]") + 1
            continue
        if t in (";", "{", "}", ")", "]", "&&", "||"):
            return None
        if t == "<":
            depth += 1
        elif t in (">", ">>"):
            depth -= 2 if t == ">>" else 1
            if depth <= 0:
                return j
        j += 1
    return None
