"""Shared test helpers.

Golden files live under ``tests/golden/`` as real files.  After a deliberate change rewrite them with
``UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/...`` (the golden tests then skip, naming the files
written) and review the diff like code.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"
ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"


def check_golden(relative: str, text: str) -> None:
    """Compare ``text`` byte for byte with ``tests/golden/<relative>`` (or rewrite it under UPDATE_GOLDEN=1)."""
    path = GOLDEN / relative
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        pytest.skip(f"UPDATE_GOLDEN=1: rewrote {path}")
    assert path.exists(), f"missing golden file {path}: run with UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8")


def pytest_configure(config):
    config.addinivalue_line("markers", "corpus: reads ../shared/corpus (skipped where the corpus is absent)")
    config.addinivalue_line("markers", "wheel: builds and installs the wheel into a fresh virtualenv (~40 s once)")


def pytest_runtest_setup(item):
    if item.get_closest_marker("corpus") and not CORPUS.is_dir():
        pytest.skip("../shared/corpus not present beside this checkout")


@pytest.fixture(autouse=True)
def _duck_tape_on_path(monkeypatch):
    """Tests run as if duck-tape were installed on PATH (``init`` writes plain ``duck-tape`` into hooks then);
    a test of the other case clears PATH itself."""
    import shutil
    import sys

    if shutil.which("duck-tape") is None:
        monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


@pytest.fixture(autouse=True, scope="session")
def _store_key_of_the_test_session(tmp_path_factory):
    """The test session keeps the store key (``pipeline.state.trust``) in a folder of its own, never in the home folder
    of whoever runs the tests; subprocesses inherit it through the environment.  Session-scoped, so that it is set
    before any module-scoped fixture runs a command."""
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))
    mp.delenv("DUCK_TAPE_KEY_FILE", raising=False)
    yield
    mp.undo()
