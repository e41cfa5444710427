"""The fake agent CLIs (``tests/fake_agent.py``) as a pytest fixture: ``fake_agents``.

The fixture installs the five fake executables into a temporary ``bin`` first on ``PATH``, points the log at a
file, the cache (and the agents' working folder) into the temporary folder, and clears every ``DUCK_TAPE_*``
variable.  ``agents.script(*steps)`` queues the replies; ``agents.calls()`` reads back what each run received.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from fake_agent import install

ROOT = Path(__file__).resolve().parent.parent
RECORDING = ROOT / "fixtures" / "agent_cli" / "recordings" / "core.json"
CLIS = {"claude-code": "claude", "codex": "codex", "gemini": "gemini", "opencode": "opencode", "copilot": "copilot"}


@dataclass
class FakeAgents:
    """Handle on the installed fakes: ``bin`` folder, ``log`` file, ``cache`` folder."""

    root: Path
    bin: Path
    log: Path
    cache: Path
    monkeypatch: pytest.MonkeyPatch

    def script(self, *steps: dict) -> None:
        """Queue ``steps`` (``fake_agent`` step dicts), played one per run in order."""
        path = self.root / "script.json"
        path.write_text(json.dumps(list(steps)), encoding="utf-8")
        Path(str(path) + ".n").unlink(missing_ok=True)
        self.monkeypatch.setenv("FAKE_AGENT_SCRIPT", str(path))

    def replay(self, recording: Path = RECORDING) -> None:
        """Answer every run from a recording (``tests/record_agent_cli.py``) instead of a script."""
        self.monkeypatch.delenv("FAKE_AGENT_SCRIPT", raising=False)
        self.monkeypatch.setenv("FAKE_AGENT_RECORDING", str(recording))

    def calls(self) -> list[dict]:
        """Every run so far: ``{"cli", "argv", "stdin", "cwd", "nested", "pwd", "schema"}``."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines() if line]

    @property
    def workdir(self) -> Path:
        return self.cache / "duck-tape" / "agent-cwd"


@pytest.fixture
def fake_agents(tmp_path, monkeypatch) -> FakeAgents:
    for name in list(os.environ):
        if name.startswith("DUCK_TAPE_") or name.startswith("FAKE_AGENT_"):
            monkeypatch.delenv(name)
    root = tmp_path / "fake-agents"
    bin_dir = install(root / "bin")
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    log = root / "calls.jsonl"
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    cache = tmp_path / "xdg-cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    return FakeAgents(root, bin_dir, log, cache, monkeypatch)
