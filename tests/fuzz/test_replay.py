"""The fuzz probe's 1,164 bad inputs and the new surfaces' ones, replayed: none accepted silently,
none crashing, every error naming what is wrong but the known limits of ``docs/reliability.md``."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _replay_module():
    spec = importlib.util.spec_from_file_location("fuzz_replay", HERE / "replay.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_replay"] = module
    spec.loader.exec_module(module)
    return module


replay = _replay_module()


def test_the_probe_inputs_are_all_there():
    cases = replay.load_cases(replay.PROBE_AREAS)
    assert len(cases) == 1164
    counts = Counter(c["area"] for c in cases)
    assert counts == {"config": 806, "scenario": 119, "actions": 95, "policy": 82, "cli": 62}
    names = replay.shipped_names()
    for old, _, _ in replay.ADAPTATIONS:  # every adaptation is used, and leaves no old text
        assert any(old in c.get("code", "") for c in cases), old
        assert not any(old in replay.adapt(c.get("code", ""), names) for c in cases)


def test_the_documented_limits_are_the_known_ones():
    doc = (HERE.parent.parent / "docs" / "reliability.md").read_text()
    assert 0 < len(replay.KNOWN_LIMITS) <= 5
    for case in replay.KNOWN_LIMITS:
        assert f"`{case}`" in doc, f"{case} is not named in docs/reliability.md"


@pytest.mark.parametrize(
    ("case", "outcome", "klass"),
    [
        (
            {"param": "radius", "expect": "error"},
            {
                "status": "error",
                "etype": "ConfigError",
                "emsg": "radius=-1 is invalid: must be > 0",
            },
            "A",
        ),
        (
            {"param": "radius", "expect": "error"},
            {"status": "error", "etype": "TypeError", "emsg": "unsupported operand"},
            "B",
        ),
        ({"param": "radius", "expect": "error"}, {"status": "ok", "result": {"steps": 5}}, "C"),
        ({"param": "radius", "expect": "?"}, {"status": "ok", "result": {"pos_nonfinite": 3}}, "D"),
        ({"param": "radius", "expect": "?"}, {"status": "ok", "result": {"steps": 5}}, "OK"),
        ({"param": "radius", "expect": "error"}, {"status": "crash", "exitcode": -11}, "D"),
        (
            {"param": "n", "expect": "error"},
            {"status": "error", "etype": "MemoryError", "emsg": "n"},
            "D",
        ),
        (
            {"param": "total-steps", "expect": "error", "argv": []},
            {
                "status": "error",
                "rc": 2,
                "traceback": False,
                "emsg": "error: argument --total-steps: must be >= 1",
            },
            "A",
        ),
        (
            {"param": "total-steps", "expect": "error", "argv": []},
            {"status": "error", "rc": 1, "traceback": True, "emsg": "OverflowError: total_steps"},
            "B",
        ),
        ({"param": "x", "expect": "error", "argv": []}, {"status": "ok", "rc": 0}, "C"),
    ],
)
def test_the_classes_follow_the_probes_rules(case, outcome, klass):
    case = {"area": "config", "case": "a case", **case}
    assert replay.classify(case, outcome)[0] == klass


@pytest.mark.slow
@pytest.mark.parametrize("area", replay.AREAS)
def test_no_input_is_accepted_silently_crashes_or_is_unclear(area, tmp_path):
    records = list(replay.replay(replay.load_cases([area]), tmp_path, log=lambda *_: None))
    assert records
    assert replay.verdict(records) == []
    unclear = {r["case"] for r in records if r["class"] == "B"}
    assert unclear <= set(replay.KNOWN_LIMITS)
