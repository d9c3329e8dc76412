"""Run only by tools/sanitize.sh, expecting failure: a leak from _core inside a pytest session must be
reported by the session-end leak check (tools/sanitize/lsan_pytest.py)."""

import bessemer as bm


def test_leak_control():
    bm._core._sanitizer_control("leak")
