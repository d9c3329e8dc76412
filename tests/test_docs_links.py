"""Every relative link in README.md and docs/*.md points at a file (or folder) that exists, and the
README points at the architecture page (not at a design file outside the repository)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_INLINE = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFDEF = re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)


def relative_links(text: str) -> list[str]:
    """The link targets of markdown text that are files of the repository (not URLs, not anchors
    within the page); code spans and fenced blocks are not links."""
    text = _CODE.sub("", _FENCE.sub("", text))
    targets = _INLINE.findall(text) + _REFDEF.findall(text)
    return [t for t in targets if not re.match(r"^[a-zA-Z][a-zA-Z+.-]*:", t) and not t.startswith("#")]


def test_the_extractor_finds_links_and_skips_code():
    # The check below is only as good as this: links found, URLs, anchors and code left alone.
    text = "a [x](docs/a.md#s) b [y](https://e.org) `[z](no.md)` [w](#top)\n```\n[v](no2.md)\n```\n[r]: ref.md\n"
    assert relative_links(text) == ["docs/a.md#s", "ref.md"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc):
    broken = []
    for target in relative_links(doc.read_text(encoding="utf-8")):
        path = target.split("#", 1)[0]
        if not (doc.parent / path).exists():
            broken.append(target)
    assert broken == [], f"{doc.relative_to(ROOT)} links to files that do not exist: {broken}"


def test_readme_points_at_the_architecture():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "](docs/architecture.md)" in text
    assert (ROOT / "docs" / "architecture.md").exists()
    assert "DESIGN.md" not in text  # the file lives outside the repository
