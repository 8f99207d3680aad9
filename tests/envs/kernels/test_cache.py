"""The kernel cache on shared and read-only machines: numba's own locations when it can write
them, else a folder of the user's own under the temporary directory, never another user's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from crowdsteer.envs.kernels.cache import (
    FOLDER_PREFIX,
    choose_cache_dir,
    private_folder_ok,
    user_tag,
    user_temp_cache,
)

ROOT = os.name == "posix" and os.geteuid() == 0


def test_the_temporary_folder_is_used_only_when_numba_can_write_nothing(tmp_path):
    pkg_cache, home = tmp_path / "pkg" / "__pycache__", tmp_path / "home"
    temp = tmp_path / "temp-cache"

    def choose(writable, requested=None):
        return choose_cache_dir(tmp_path / "pkg", home, writable, requested, lambda: temp)

    assert choose(lambda p: True) is None
    # a read-only install with a writable home: numba's own user-wide cache is used
    assert choose(lambda p: p != pkg_cache) is None
    assert choose(lambda p: p not in (pkg_cache, home)) == temp
    # NUMBA_CACHE_DIR is honoured when writable, and falls through to numba's own when not
    requested = tmp_path / "mine"
    assert choose(lambda p: p not in (pkg_cache, home), requested) is None
    assert choose(lambda p: p == pkg_cache, requested) is None
    assert choose(lambda p: False, requested) == temp


def test_each_user_gets_a_private_folder_of_their_own(tmp_path):
    folder = user_temp_cache(tmp_path)
    assert folder == tmp_path / f"{FOLDER_PREFIX}{user_tag()}"
    assert folder.is_dir() and private_folder_ok(folder)
    if os.name == "posix":
        assert folder.stat().st_mode & 0o777 == 0o700
    assert user_temp_cache(tmp_path) == folder  # the next process finds it again


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_a_folder_others_can_write_or_a_link_is_not_loaded_from(tmp_path):
    name = tmp_path / f"{FOLDER_PREFIX}{user_tag()}"
    name.mkdir(mode=0o700)
    name.chmod(0o777)  # anyone could have put compiled code (pickles) there
    assert not private_folder_ok(name)
    other = user_temp_cache(tmp_path)
    assert other != name and other.name.startswith(FOLDER_PREFIX) and private_folder_ok(other)
    name.chmod(0o700)
    link = tmp_path / "link"
    link.symlink_to(name, target_is_directory=True)
    assert not private_folder_ok(link)


@pytest.mark.skipif(not ROOT, reason="needs root to make a folder owned by another user")
def test_a_folder_another_user_made_first_is_not_used(tmp_path):
    name = tmp_path / f"{FOLDER_PREFIX}{user_tag()}"
    name.mkdir(mode=0o755)
    os.chown(name, 54321, 54321)  # made first by another user, under this user's name
    assert not private_folder_ok(name)
    folder = user_temp_cache(tmp_path)
    assert folder != name and private_folder_ok(folder)


IMPORT_AND_STEP = """
import numpy as np, gymnasium as gym
import crowdsteer.envs
env = gym.make("crowdsteer/CrowdNav-v0", n_pedestrians=2)
obs, _ = env.reset(seed=0)
obs, reward, *_ = env.step(np.array([1.0, 0.0], np.float32))
assert np.isfinite(obs).all() and np.isfinite(reward)
# a signature no build holds: compiled here and cached in this user's folder, whether or not the
# install's precompiled kernels served the step
from crowdsteer.envs.kernels.geometry import normalize
assert np.allclose(normalize(np.float32(3.0), np.float32(4.0)), (0.6, 0.8))
print("STEPPED", float(obs.sum()))
"""

IMPORT_ONLY = "import crowdsteer.envs; print('IMPORTED')"


def _as_user(uid: int, temp: Path, code: str, extra_env: dict | None = None):
    """Run ``code`` as ``uid`` (no capabilities, no supplementary groups) with an unusable home
    and the shared temporary directory ``temp``."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/nonexistent",
        "TMPDIR": str(temp),
        "PYTHONDONTWRITEBYTECODE": "1",
        "SDL_VIDEODRIVER": "dummy",
        **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}),
        **(extra_env or {}),
    }
    command = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    return subprocess.run(
        [*command, sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
    )


def _install_is_read_only_for(uid: int) -> bool:
    """Whether ``uid`` can import the install (numpy and crowdsteer: a checkout in a folder only
    root can enter cannot be) but not write into it."""
    probe = _as_user(
        uid,
        Path("/tmp"),
        "import os, numpy, crowdsteer.envs.kernels as k; "
        "print(os.access(os.path.dirname(k.__file__), os.W_OK))",
    )
    return probe.returncode == 0 and probe.stdout.strip().endswith("False")


@pytest.mark.slow
@pytest.mark.skipif(
    not (ROOT and shutil.which("setpriv")), reason="runs two real uids: needs root and setpriv"
)
def test_two_users_share_a_read_only_install_and_one_temporary_directory(request):
    """Two uids with no home, the install read-only to both, one shared sticky temporary
    directory: the first compiles into its own folder, the second is not stopped by it and both
    step the same episode; a third finds its folder's name taken by another user and a fourth
    names an unwritable NUMBA_CACHE_DIR: both still import."""
    first, second, third, fourth = 50101, 50102, 50103, 50104
    if not _install_is_read_only_for(first):
        pytest.skip("the install is writable by, or cannot be imported by, other users here")
    # reachable by every user, as /tmp is (pytest's own folder is not)
    temp = Path(tempfile.mkdtemp(prefix="crowdsteer-shared-tmp-"))
    request.addfinalizer(lambda: shutil.rmtree(temp, ignore_errors=True))
    temp.chmod(0o1777)
    squatted = temp / f"{FOLDER_PREFIX}{third}"
    squatted.mkdir(mode=0o755)
    os.chown(squatted, first, first)
    locked = temp / "locked"
    locked.mkdir(mode=0o755)  # root's: no other user can write it
    stepped = {uid: _as_user(uid, temp, IMPORT_AND_STEP) for uid in (first, second)}
    # numba picks a kernel's cache when the kernel is defined: importing is where it failed
    imported = {
        third: _as_user(third, temp, IMPORT_ONLY),
        fourth: _as_user(fourth, temp, IMPORT_ONLY, {"NUMBA_CACHE_DIR": str(locked)}),
    }
    for uid, run in {**stepped, **imported}.items():
        assert run.returncode == 0, (uid, run.stderr[-2000:])
        assert "cannot cache function" not in run.stderr
    for uid, run in stepped.items():
        assert "STEPPED" in run.stdout
        own = temp / f"{FOLDER_PREFIX}{uid}"
        assert own.is_dir() and own.stat().st_uid == uid and own.stat().st_mode & 0o777 == 0o700
        assert any(own.rglob("*.nbi")), "compiled kernels were cached in the user's folder"
    assert len({run.stdout.split("STEPPED")[1] for run in stepped.values()}) == 1
    assert "IMPORTED" in imported[third].stdout and "IMPORTED" in imported[fourth].stdout
    assert squatted.stat().st_uid == first  # left alone
    assert f"NUMBA_CACHE_DIR={locked} is not writable" in imported[fourth].stderr
