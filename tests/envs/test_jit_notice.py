"""The one-line notice printed while kernels compile on first use."""

from __future__ import annotations

import io
import time

import pytest

from crowdsteer.envs.core import jit_notice
from crowdsteer.envs.core.simulator import compiled_entry


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setitem(jit_notice._state, "shown", False)
    monkeypatch.setattr(jit_notice, "NOTICE_AFTER_S", 0.05)


class SlowKernel:
    """Stands in for a numba dispatcher whose compilation takes ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def typeof_pyval(self, value):
        return type(value)

    def compile(self, signature):
        time.sleep(self.seconds)
        return lambda *args: signature


def test_a_slow_compilation_prints_one_line_once(fresh):
    out = io.StringIO()
    with jit_notice.compile_notice(stream=out):
        time.sleep(0.3)
    assert out.getvalue() == jit_notice.MESSAGE + "\n"
    assert "30 s" in jit_notice.MESSAGE and "cache" in jit_notice.MESSAGE
    with jit_notice.compile_notice(stream=out):
        time.sleep(0.3)
    assert out.getvalue().count("\n") == 1  # once per process
    assert jit_notice.notice_shown()


def test_a_quick_load_from_the_cache_prints_nothing(fresh):
    out = io.StringIO()
    with jit_notice.compile_notice(stream=out):
        time.sleep(0.001)
    time.sleep(0.15)  # the timer would have fired by now
    assert out.getvalue() == ""
    assert not jit_notice.notice_shown()


def test_compiled_entry_announces_a_slow_first_compilation_on_stderr(fresh, capsys):
    entry = compiled_entry(SlowKernel(0.3), 1.0, 2)
    assert entry() == (float, int)
    err = capsys.readouterr().err
    assert err == jit_notice.MESSAGE + "\n"
    compiled_entry(SlowKernel(0.0), 1.0)
    assert capsys.readouterr().err == ""
