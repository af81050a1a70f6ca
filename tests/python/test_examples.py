"""The Python examples run as a user runs them, and say what docs/python.md shows."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


def test_networkx_routes():
    pytest.importorskip("networkx")
    pytest.importorskip("scipy")
    run = subprocess.run([sys.executable, str(EXAMPLES / "networkx_routes.py")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "Haarlem -> Maastricht: 210 min via Haarlem -> Amsterdam -> Utrecht -> Den Bosch -> Eindhoven -> Maastricht" \
        in run.stdout
    assert "Texel -> Zwolle: no route" in run.stdout
    assert "all 196 distances agree with networkx" in run.stdout
