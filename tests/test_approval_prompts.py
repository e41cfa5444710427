"""Issue 24, item 1: typing ``y``, ``Y`` or ``yes`` at every approval prompt approves; the prompt says ``[y/N]``.

Trial input: ``duck-tape init --harness claude-code`` on a terminal, answer ``y`` -> "Skipped claude-code: not
approved."; ``recover`` exited 4 the same way.  Each test below runs one command with a fake terminal on stdin
and a scripted ``input``; the prompts seen and what was written are asserted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from store_kit import mark_as_store

from pipeline.cli import main
from pipeline.state.marker import Marker
from pipeline.state.store import list_states

ROOT = Path(__file__).resolve().parent.parent
CC = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"
CONTEXT_FIXTURES = ROOT / "fixtures" / "context"
STATE = CONTEXT_FIXTURES / "states" / "2026-03-11-0900.state.md"
ANSWERS = ["y", "Y", "yes"]


class FakeTTY:
    def isatty(self):
        return True


@pytest.fixture
def terminal(monkeypatch, tmp_path):
    """A terminal on stdin whose every prompt is answered with ``terminal.answer``; ``terminal.prompts`` collects
    the questions asked.  The working folder and HOME are ``tmp_path`` (init looks there)."""

    class Terminal:
        answer = "yes"
        prompts: list[str] = []

    def read(question: str) -> str:
        Terminal.prompts.append(question)
        return Terminal.answer

    Terminal.prompts = []
    monkeypatch.setattr("sys.stdin", FakeTTY())
    monkeypatch.setattr("builtins.input", read)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return Terminal


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("answer", ANSWERS)
def test_init_claude_code(answer, terminal, capsys, tmp_path):
    terminal.answer = answer
    (tmp_path / ".claude").mkdir()
    code, out, err = run(capsys, "init", "--harness", "claude-code", "--root", str(tmp_path))
    settings = tmp_path / ".claude" / "settings.local.json"
    assert code == 0, err
    command = tmp_path / ".claude" / "commands" / "duck-tape-resume.md"  # issue 25: the resume prompt
    assert terminal.prompts[:2] == [f"Install the claude-code hook into {settings}? [y/N] ",
                                    f"Add the /duck-tape-resume command (the agent recovers the state itself) to "
                                    f"{command}? [y/N] "]
    assert all(p.startswith("Refine every checkpoint") for p in terminal.prompts[2:])  # asked where claude is found
    assert command.is_file()
    assert "not approved" not in out and f"Wrote {settings}" in out
    assert "PreCompact" in json.loads(settings.read_text())["hooks"]


@pytest.mark.parametrize("answer", ANSWERS)
def test_init_copilot_hook_and_instructions_line(answer, terminal, capsys, tmp_path):
    terminal.answer = answer
    code, out, err = run(capsys, "init", "--harness", "copilot", "--root", str(tmp_path))
    assert code == 0, err
    hook = tmp_path / ".github" / "hooks" / "duck-tape.json"
    instructions = tmp_path / ".github" / "copilot-instructions.md"
    skill = tmp_path / ".github" / "skills" / "duck-tape-resume" / "SKILL.md"  # issue 25: the resume prompt
    assert terminal.prompts[:3] == [f"Install the copilot hook into {hook}? [y/N] ",
                                    f"Add this line to {instructions}? [y/N] ",
                                    f"Add the /duck-tape-resume command (the agent recovers the state itself) to "
                                    f"{skill}? [y/N] "]
    assert all(p.startswith("Refine every checkpoint") for p in terminal.prompts[3:])  # asked where copilot is found
    assert hook.is_file() and "duck-tape resume" in instructions.read_text()


@pytest.mark.parametrize("answer", ANSWERS)
def test_recover(answer, terminal, capsys, tmp_path):
    terminal.answer = answer
    code, out, err = run(capsys, "recover", str(CC), "--dir", "store", "--mask")
    assert code == 0, err
    [written] = list_states(tmp_path / "store")
    assert terminal.prompts == [f"Write {Path('store') / written.path.name}? [y/N] "]


@pytest.mark.parametrize("answer", ANSWERS)
def test_recover_then_merge_asks_twice(answer, terminal, capsys, tmp_path):
    terminal.answer = answer
    code, out, err = run(capsys, "recover", str(CC), "--dir", "store", "--mask", "--merge")
    assert code == 0, err
    assert len(terminal.prompts) == 2 and terminal.prompts[1] == "Write CONTEXT.md? [y/N] "
    assert len(list_states(tmp_path / "store")) == 1 and (tmp_path / "CONTEXT.md").is_file()


CONTEXT_WRITES = [
    # (command line, CONTEXT.md to start from, text the written CONTEXT.md holds, text it no longer holds)
    (["merge", str(STATE)], None, "Merged state file 2026-03-11-0900.state.md", None),
    (["migrate"], "freeform.md", "## Notes", None),
    (["prune", "--drop", "2026-02-12 16:40"], "medium.md", "### 2026-03-02 11:05", "### 2026-02-12 16:40"),
]


@pytest.mark.parametrize("answer", ANSWERS)
@pytest.mark.parametrize("argv, start, holds, dropped", CONTEXT_WRITES, ids=["merge", "migrate", "prune"])
def test_context_writes(answer, argv, start, holds, dropped, terminal, capsys, tmp_path):
    terminal.answer = answer
    if start:
        shutil.copy(CONTEXT_FIXTURES / start, tmp_path / "CONTEXT.md")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert terminal.prompts == ["Write CONTEXT.md? [y/N] "]
    text = (tmp_path / "CONTEXT.md").read_text()
    assert holds in text and (dropped is None or dropped not in text)


@pytest.mark.parametrize("answer", ANSWERS)
def test_resume_recovery(answer, terminal, capsys, tmp_path):
    terminal.answer = answer
    store = tmp_path / ".duck-tape"
    mark_as_store(store, Marker(time="2026-03-10T09:55:00Z", cwd=None, latest_state=None, transcript=str(CC)))
    code, out, err = run(capsys, "resume", "--mask", "--context", "none.md")
    assert code == 0, err
    [written] = list_states(store)
    assert written.kind == "recovered"
    assert terminal.prompts == [f"Write {Path('.duck-tape') / written.path.name}? [y/N] "]


@pytest.mark.parametrize("answer", ["n", "N", "no", "", "continue", "next", "b"])
def test_other_answers_still_decline(answer, terminal, capsys, tmp_path):
    terminal.answer = answer
    code, _, err = run(capsys, "recover", str(CC), "--dir", "store", "--mask")
    assert code == 4 and "not approved" in err
    assert not (tmp_path / "store").exists()
    (tmp_path / ".claude").mkdir()
    code, out, _ = run(capsys, "init", "--harness", "claude-code", "--root", str(tmp_path))
    assert code == 0 and "Skipped claude-code: not approved." in out
    assert not (tmp_path / ".claude" / "settings.local.json").exists()
