import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runner_helpers import bench, server  # noqa: F401  (fixtures)
