import sys
from pathlib import Path

# The runner tests' fault-injecting server stands in for an external model.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "runner"))
