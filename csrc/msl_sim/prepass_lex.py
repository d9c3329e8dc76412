"""Tokens, source positions and text edits for the MSL pre-pass (prepass.py).

The pre-pass rewrites MSL into C++ by editing a token stream: every token keeps its exact text,
so untouched code is reproduced byte for byte, and an edit that swallows newlines puts them back
so line numbers (and the #line markers) stay right.
"""

import os
import re

_TOKEN = re.compile(
    r"""
    (?P<nl>\n)
  | (?P<cont>\\\n)
  | (?P<ws>[ \t\r\f\v]+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<str>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
  | (?P<chr>(?:u8|u|U|L)?'(?:\\.|[^'\\\n])*')
  | (?P<num>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<punct>::|->|\+\+|--|<<=|<<|<=|>=|==|!=|&&|\|\||\+=|-=|\*=|/=|%=|&=|\|=|\^=|\#\#|\.\.\.|.)
    """,
    re.VERBOSE | re.DOTALL,
)

SPACE = {"nl", "cont", "ws", "comment"}


class PrepassError(Exception):
    pass


class Token:
    __slots__ = ("directive", "dirid", "kind", "line", "text")

    def __init__(self, kind, text, line):
        self.kind, self.text, self.line = kind, text, line
        self.directive, self.dirid = None, None  # directive name ("define"...) and instance number

    def __repr__(self):
        return f"Token({self.kind}, {self.text!r}, line {self.line})"


def tokenize(text):
    """Tokens of `text`; tokens of a preprocessor directive carry its name ("define", "include"...)."""
    toks, pos, line = [], 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        kind = m.lastgroup
        toks.append(Token(kind, m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    # Mark directives: '#' first on a line, up to the next unescaped newline.
    at_line_start, directive, count = True, None, 0
    for i, t in enumerate(toks):
        if t.kind == "nl":
            at_line_start, directive = True, None
            continue
        if directive is not None:
            t.directive, t.dirid = directive, count
        elif at_line_start and t.text == "#":
            name = next((u.text for u in toks[i + 1 :] if u.kind not in SPACE), "")
            directive, count = name, count + 1
            t.directive, t.dirid = directive, count
        if t.kind not in SPACE:
            at_line_start = False
    return toks


class Source:
    """A token stream plus the edits made to it, and a map from lines to original files."""

    def __init__(self, text, line_map):
        self.toks = tokenize(text)
        self.sig = [i for i, t in enumerate(self.toks) if t.kind not in SPACE]
        self.sig_pos = {ti: k for k, ti in enumerate(self.sig)}
        self.edits = {}  # first token index -> (last token index, replacement)
        self.last_edited = -1  # highest significant index any edit covers
        self.line_map = line_map  # [(combined line, file, file line)] from #line markers

    # -- navigation over significant tokens (k = index into self.sig) --
    def text(self, k):
        return self.toks[self.sig[k]].text if 0 <= k < len(self.sig) else ""

    def tok(self, k):
        return self.toks[self.sig[k]]

    def where(self, k):
        line = self.tok(min(k, len(self.sig) - 1)).line if self.sig else 1
        file, fline = "<input>", line
        for start, f, first in self.line_map:
            if start <= line:
                file, fline = f, first + (line - start)
        return f"{file}:{fline}"

    def error(self, k, msg):
        raise PrepassError(f"{self.where(k)}: error: {msg}")

    def match(self, k, open_, close):
        """Index of the token closing the group that opens at k (angles only outside parens)."""
        depth, paren = 0, 0
        for j in range(k, len(self.sig)):
            t = self.text(j)
            if open_ == "<":
                if t in "([{":
                    paren += 1
                elif t in ")]}":
                    if paren == 0:
                        break
                    paren -= 1
                elif paren == 0 and t == "<":
                    depth += 1
                elif paren == 0 and t == ">":
                    depth -= 1
                    if depth == 0:
                        return j
                elif paren == 0 and t == ">>":
                    depth -= 2
                    if depth <= 0:
                        return j
                continue
            if t == open_:
                depth += 1
            elif t == close:
                depth -= 1
                if depth == 0:
                    return j
        self.error(k, f"unbalanced '{open_}'")

    def join(self, k0, k1, skip=(), raw=False):
        """Source text of significant tokens k0..k1-1 on one line (any run of white space or
        comments becomes one space), with edits applied unless raw."""
        out, j, prev = "", k0, None
        while j < k1:
            ti = self.sig[j]
            if ti in self.edits and not raw:
                last, piece = self.edits[ti]
                j = self.sig_pos[last] + 1
            else:
                last, piece = ti, ("" if j in skip else self.toks[ti].text)
                j += 1
            if piece:
                spaced = prev is not None and ti - prev > 1
                glued = (
                    out
                    and (out[-1].isalnum() or out[-1] == "_")
                    and (piece[0].isalnum() or piece[0] == "_")
                )
                out += (" " if out and (spaced or glued) else "") + piece
            prev = last
        return out

    # -- edits --
    def replace(self, k0, k1, text):
        """Replaces significant tokens k0..k1 (inclusive) and everything between them."""
        first, last = self.sig[k0], self.sig[k1]
        for a, (b, _) in self.edits.items():
            if not (last < a or b < first):
                self.error(k0, "internal: overlapping rewrites")
        self.edits[first] = (last, text)
        self.last_edited = max(self.last_edited, k1)

    def render(self):
        out, i = [], 0
        while i < len(self.toks):
            if i in self.edits:
                last, rep = self.edits[i]
                span = self.toks[i : last + 1]
                newlines = sum(t.text.count("\n") for t in span)
                in_directive = span[0].directive is not None
                out.append(rep + ("\\\n" if in_directive else "\n") * newlines)
                i = last + 1
                continue
            out.append(self.toks[i].text)
            i += 1
        return "".join(out)


_INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def expand_includes(path, root, include_dirs, seen=None):
    """Text of `path` with its quoted includes inlined once each (between #line markers), so one
    pass sees every kernel, helper and macro of the translation unit. <metal_*> headers all map
    to the stand-in; other <...> includes are left to the compiler."""
    seen = set() if seen is None else seen
    seen.add(os.path.realpath(path))
    name = os.path.relpath(path, root)
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = [f'#line 1 "{name}"']
    for n, line in enumerate(lines, 1):
        m = _INCLUDE.match(line)
        if re.match(r"^\s*#\s*pragma\s+once\b", line):
            out.append("")
            continue
        if m and m.group(1) == "<" and m.group(2).startswith("metal_"):
            out.append("#include <metal_stdlib>")
            continue
        if m and m.group(1) == '"':
            found = None
            for d in [os.path.dirname(path)] + list(include_dirs):
                cand = os.path.join(d, m.group(2))
                if os.path.isfile(cand):
                    found = cand
                    break
            if found:
                if os.path.realpath(found) not in seen:
                    out.append(expand_includes(found, root, include_dirs, seen))
                    out.append(f'#line {n + 1} "{name}"')
                else:
                    out.append("")
                continue
        out.append(line)
    return "\n".join(out)


def line_map_of(text):
    """[(line in text, file, line in file)] for each #line marker of expand_includes' output."""
    result = []
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r'^#line (\d+) "([^"]*)"$', line)
        if m:
            result.append((n + 1, m.group(2), int(m.group(1))))
    return result
