"""The recorded runs ``crowdsteer reproduce`` was run on, downloaded and checked by SHA-256.

The files are PedPy's copies (github.com/PedestrianDynamics/PedPy, ``notebooks/demo-data``, at
commit ``PEDPY_COMMIT``) of runs of the Jülich / Wuppertal pedestrian dynamics data archive
(DOI 10.34735/ped.da). PedPy's repository is released under the MIT licence (its ``LICENSE``:
"Copyright (c) 2022-2025 Forschungszentrum Jülich GmbH, IAS-7"); its ``demo-data`` folder has no
licence or README of its own, and the archive's own terms for each run could not be read here.
The files are therefore not shipped with crowdsteer: this module downloads them from PedPy's
repository at a fixed commit and refuses any whose SHA-256 differs from the one recorded here.

- ``040_c_56_h-.txt``: the entrance bottleneck of PedPy's user guide, 75 persons, 25 fps, m
  (Wuppertal 2018, DOI 10.34735/ped.2018.1; Adrian et al. 2020, "Crowds in front of bottlenecks
  at entrances from the perspective of physics and social psychology", J. R. Soc. Interface 17);
- ``uo-180-180-180.txt``, ``uo-180-180-120.txt``: HERMES one-way corridor runs, 1.8 m wide,
  16 fps, cm (Zhang et al. 2011, J. Stat. Mech. P06004);
- ``bi_corr_400_b_03.txt``: a two-way corridor run, 4 m wide, 25 fps, cm (Zhang, Klingsch,
  Schadschneider and Seyfried 2012, J. Stat. Mech. P02002; PedPy's bidirectional example);
- ``00_01a.h5``: a bottleneck run of the 2014 social-groups series in the archive's HDF5 with
  its WKT geometry (DOI 10.34735/ped.2014.1; 46 persons, 0.8 m).
"""

from __future__ import annotations

import hashlib
import shutil
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from ..support.options import arg
from ..support.preflight import UsageError

PEDPY_COMMIT = "8179b4b39e7c1e09eeb6b7d0f4e41f66e98cd6e4"
"""The commit of PedPy's repository the files and checksums are taken from."""

BASE_URL = f"https://raw.githubusercontent.com/PedestrianDynamics/PedPy/{PEDPY_COMMIT}/notebooks/demo-data/"


@dataclass(frozen=True)
class RecordedFile:
    """One file: its ``path`` under PedPy's ``notebooks/demo-data``, ``sha256`` and ``size``
    (bytes)."""

    path: str
    sha256: str
    size: int

    @property
    def name(self) -> str:
        return Path(self.path).name

    @property
    def url(self) -> str:
        return BASE_URL + self.path


FILES = (
    RecordedFile(
        "bottleneck/040_c_56_h-.txt",
        "aa36fd35f4af8f729441488415d7e558035fded26b3f060b051cbc20a85b4a67",
        1_657_928,
    ),
    RecordedFile(
        "uni-directional/uo-180-180-180.txt",
        "8036c017394046303bf2ef6ff5b91c71f484c6438e14311bccf437a364045746",
        1_647_566,
    ),
    RecordedFile(
        "uni-directional/uo-180-180-120.txt",
        "8c2dc7c275246abd67576ead1c98edb0a01eb12b8074f7042cd5d3ab88c4089b",
        1_747_801,
    ),
    RecordedFile(
        "bi-directional/bi_corr_400_b_03.txt",
        "e7c2b70c231f206897439187e8ad0255ebd10605fd311401102801b686c7d463",
        3_490_381,
    ),
    RecordedFile(
        "single_file/00_01a.h5",
        "6ec4a799b921a6fd3048d4cdb8d1971e468a4693ac669b9ab8bf1904ac02ab08",
        1_243_184,
    ),
)

BOTTLENECK_2018_WKT = (
    "POLYGON ((-3.5 -2, -3.5 8, 3.5 8, 3.5 -2, -3.5 -2), "
    "(-3.05 -0.3, -0.7 -0.3, -0.7 -1, -0.7 -1.1, -0.25 -1.1, -0.25 -0.15, -0.4 0, -2.8 0, "
    "-2.8 6.7, -3.05 6.7, -3.05 -0.3), "
    "(0.25 -1.1, 0.7 -1.1, 0.7 -0.3, 3.05 -0.3, 3.05 6.7, 2.8 6.7, 2.8 0, 0.4 0, 0.25 -0.15, "
    "0.25 -1.1))"
)
"""The walkable area of ``040_c_56_h-.txt`` as PedPy's user guide declares it (a 7 x 10 m hall,
two barriers leaving a 0.5 m wide entrance), as WKT."""


def sha256(path: str | Path) -> str:
    """The SHA-256 of the file at ``path``, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(path: str | Path, expected: str) -> bool:
    """Whether the file at ``path`` exists and has the SHA-256 ``expected``."""
    return Path(path).is_file() and sha256(path) == expected


def fetch(entry: RecordedFile, folder: str | Path, timeout: float = 60.0) -> Path:
    """``entry`` in ``folder``: kept when its checksum matches, otherwise downloaded and checked;
    a download with another checksum is deleted and refused."""
    target = Path(folder) / entry.name
    if verified(target, entry.sha256):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    with urllib.request.urlopen(entry.url, timeout=timeout) as response, open(partial, "wb") as f:
        shutil.copyfileobj(response, f)
    got = sha256(partial)
    if got != entry.sha256:
        partial.unlink()
        raise ValueError(f"{entry.url}: SHA-256 {got}, expected {entry.sha256}; not kept")
    partial.replace(target)
    return target


@dataclass
class DownloadArgs:
    """Download the recorded runs and check their SHA-256."""

    out: str = arg("out/recorded", "folder to download to")
    only: str = arg("", "one file's name (e.g. 040_c_56_h-.txt); empty: all of them")

    def __post_init__(self) -> None:
        names = [f.name for f in FILES]
        if self.only and self.only not in names:
            raise UsageError(f"argument --only: one of {', '.join(names)}, got {self.only!r}")


def download(args: DownloadArgs) -> list[Path]:
    """Every file of ``FILES`` (or ``args.only``) in ``args.out``, checked; returns the paths."""
    return [fetch(f, args.out) for f in FILES if not args.only or f.name == args.only]
