"""Pools read by one GDAL reader in a child process, as a fingerprint. The readers carry two
GDALs (pyogrio's bundled one, the system's that QGIS also loads); kept out of the test process,
the second GDAL never shares an address space with QGIS's.

    python -m tests.reader_child READER PATH [MAPPING]   # prints the pools' fingerprint
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fingerprint(pools) -> str:
    """A hash of everything the pools keep: CRS, thresholds, counts, features and context."""
    import shapely

    h = hashlib.sha256(repr((pools.crs.as_dict(), pools.thresholds.as_dict(), pools.counts())).encode())
    for group in (pools.features, pools.context):
        for kind in sorted(group):
            for f in group[kind]:
                h.update(f"{kind}|{f.uid}|{sorted(f.props.items())}".encode())
                h.update(shapely.to_wkb(f.geom))
    return h.hexdigest()


def pools_in_child(reader: str, path: Path | None = None, mapping: Path | None = None) -> str:
    """The fingerprint of the pools `reader` reads from `path` (None: the embedded city)."""
    from scoring.extract.reading import READER_ENV

    args = [sys.executable, "-m", "tests.reader_child", reader, str(path or "-")]
    if mapping is not None:
        args.append(str(mapping))
    env = {**os.environ, READER_ENV: reader}
    out = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip().splitlines()[-1]


if __name__ == "__main__":
    from scoring.extract import osm, vector

    _, path, *rest = sys.argv[1:]
    if rest:
        pools = vector.load_vector_pools(Path(path), Path(rest[0]))
    else:
        pools = osm.load_pools(None if path == "-" else Path(path))
    print(fingerprint(pools))
