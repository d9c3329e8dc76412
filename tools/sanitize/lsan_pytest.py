"""pytest plugin for tools/sanitize.sh (-p lsan_pytest): the leak check runs when the session ends,
while every module is still loaded, instead of after the interpreter's finalisation.

CPython does not free everything at exit: the constants of modules it compiled at run time (pytest
rewrites and compiles every test file) are left behind when the interpreter is torn down, and
LeakSanitizer's exit-time check reports thousands of them, with stacks that stop at CPython's
allocator. Checked at session end, memory still referenced from a live module is not a leak, and
memory our code lost is. The process then exits at once with pytest's status (1 if leaks were
found), skipping finalisation and the exit-time check.
"""

import ctypes
import os
import sys

_lsan = ctypes.CDLL(None)
_status = None


def pytest_sessionfinish(session, exitstatus):
    global _status
    _status = int(exitstatus)


def pytest_unconfigure(config):
    if _status is None or not hasattr(_lsan, "__lsan_do_recoverable_leak_check"):
        return
    leaked = _lsan.__lsan_do_recoverable_leak_check()
    sys.stdout.flush()
    sys.stderr.flush()
    if leaked:
        print("lsan_pytest: LeakSanitizer found leaks (report above or in the sanitizer log)", file=sys.stderr)
    os._exit(_status or (1 if leaked else 0))
