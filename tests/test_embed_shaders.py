"""csrc/metal/embed_shaders.py: the MSL source the Metal runtime compiles when no bessemer.metallib
is found. The real GPU path cannot run here, so these tests check what can be: the inlining (each
local header once, line markers that map every line back to its file) and that the C++ header
gives back exactly that text."""

import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "csrc" / "metal" / "embed_shaders.py"
SHADERS = sorted((ROOT / "shaders").glob("*.metal"))

_spec = importlib.util.spec_from_file_location("embed_shaders", SCRIPT)
embed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(embed)

_LINE = re.compile(r'^#line (\d+) "([^"]+)"$')


def check_line_map(text: str, directory: pathlib.Path) -> set[str]:
    """Every line that is not a #line marker equals the line of the file the markers say it is
    (`#pragma once` lines excepted, which become blank). Returns the files seen."""
    where, number = None, 0
    seen = set()
    cache = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            number, where = int(m.group(1)), m.group(2)
            seen.add(where)
            continue
        assert where is not None, "text before the first #line marker"
        if where not in cache:
            cache[where] = (directory / where).read_text().splitlines()
        original = cache[where]
        if number <= len(original):
            want = original[number - 1]
            if re.match(r"\s*#\s*pragma\s+once", want):
                want = ""
            assert line == want, f"{where}:{number}: {line!r} != {want!r}"
        else:
            assert line == "", f"{where}:{number} is past the end of the file: {line!r}"
        number += 1
    return seen


def compile_and_dump(header: pathlib.Path, tmp: pathlib.Path) -> dict[str, str]:
    """Builds a program that writes each embedded source to a file; returns name -> text."""
    cxx = shutil.which("g++") or shutil.which("clang++")
    if cxx is None:
        pytest.fail("no C++ compiler (g++ or clang++) to compile the generated header")
    main = tmp / "dump.cpp"
    main.write_text(
        '#include <cstdio>\n#include <string>\n#include "shader_sources.h"\n'
        "int main(int, char** argv) {\n"
        "  for (const auto& s : bm::metal::embedded::kShaderSources) {\n"
        '    std::FILE* f = std::fopen((std::string(argv[1]) + "/" + s.name).c_str(), "wb");\n'
        "    std::fputs(s.source, f);\n"
        "    std::fclose(f);\n"
        "  }\n"
        "}\n"
    )
    exe = tmp / "dump"
    subprocess.run(
        [cxx, "-std=c++17", "-Wall", "-Werror", "-I", str(header.parent), str(main), "-o", str(exe)],
        check=True,
        capture_output=True,
    )
    out = tmp / "out"
    out.mkdir()
    subprocess.run([str(exe), str(out)], check=True)
    return {p.name: p.read_text() for p in out.iterdir()}


def generate(sources, output) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(SCRIPT), "-o", str(output), *map(str, sources)]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_real_shaders_round_trip(tmp_path):
    header = tmp_path / "shader_sources.h"
    r = generate(SHADERS, header)
    assert r.returncode == 0, r.stderr
    dumped = compile_and_dump(header, tmp_path)
    assert sorted(dumped) == [p.name for p in SHADERS]
    for path in SHADERS:
        text = dumped[path.name]
        assert text == f'#line 1 "{path.name}"\n' + embed.expand(path)
        assert not re.search(r'^\s*#\s*include\s*"', text, re.M), "a local include was left in"
        assert "#include <metal_stdlib>" in text
        seen = check_line_map(text, path.parent)
        assert set(re.findall(r'^\s*#\s*include\s*"([^"]+)"', path.read_text(), re.M)) <= seen


def test_headers_inlined_once_recursively(tmp_path):
    (tmp_path / "x.h").write_text("#pragma once\nstruct X { int a; };\n")
    (tmp_path / "y.h").write_text('#pragma once\n#include "x.h"\nstruct Y { X x; };\n')
    (tmp_path / "a.metal").write_text('#include "x.h"\n#include "y.h"\n#include "x.h"\nkernel void k() {}\n')
    text = embed.expand(tmp_path / "a.metal")
    assert text.count("struct X") == 1 and text.count("struct Y") == 1
    assert "pragma once" not in text
    assert check_line_map('#line 1 "a.metal"\n' + text, tmp_path) == {"a.metal", "x.h", "y.h"}


def test_long_source_and_delimiter_clash_round_trip(tmp_path):
    body = "".join(f'// line {i} )bm0" )bm1" \\ "quoted"\n' for i in range(2000))  # > several chunks
    (tmp_path / "big.metal").write_text(body)
    header = tmp_path / "shader_sources.h"
    r = generate([tmp_path / "big.metal"], header)
    assert r.returncode == 0, r.stderr
    assert 'R"bm2(' in header.read_text()
    assert compile_and_dump(header, tmp_path)["big.metal"] == '#line 1 "big.metal"\n' + body


def test_missing_header_is_an_error(tmp_path):
    (tmp_path / "a.metal").write_text('#include "y.h"\n')
    (tmp_path / "y.h").write_text('#include "missing.h"\n')
    r = generate([tmp_path / "a.metal"], tmp_path / "out.h")
    assert r.returncode == 1
    assert "cannot read" in r.stderr and "missing.h" in r.stderr and "included from y.h" in r.stderr
    assert not (tmp_path / "out.h").exists()


def test_header_including_the_shader_is_inlined_once(tmp_path):
    (tmp_path / "a.metal").write_text('#include "p.h"\nkernel void k() {}\n')
    (tmp_path / "p.h").write_text('#include "a.metal"\nstruct P {};\n')
    text = embed.expand(tmp_path / "a.metal")
    assert text.count("kernel void k") == 1 and text.count("struct P") == 1
