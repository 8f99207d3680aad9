"""The deprecated ``crowdsteer.baselines.steering`` still imports, as the same modules."""

from __future__ import annotations

import subprocess
import sys


def test_the_old_steering_package_is_an_alias_of_the_new_modules():
    code = (
        "import warnings\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import crowdsteer.baselines.steering as old\n"
        "    from crowdsteer.baselines.steering.cardioid import cardioid_one\n"
        "    from crowdsteer.baselines.steering.vec import normalize\n"
        "import importlib\n"
        "new = importlib.import_module('crowdsteer.envs.steering.cardioid')\n"
        "import crowdsteer.envs.kernels.geometry as geometry\n"
        "assert cardioid_one is new.cardioid_one and normalize is geometry.normalize\n"
        "assert old.cardioid_one is new.cardioid_one\n"
        "assert any(issubclass(w.category, DeprecationWarning) for w in caught)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
