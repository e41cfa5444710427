"""One reader of the state file format (issue 7): ``pipeline.state.sections`` has no pydantic, the restore path
never imports pydantic, and ``pipeline.state.parse`` builds its ``AgentState`` from that same reader."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline.errors import InputError
from pipeline.state import model, parse as parse_module, render, sections
from pipeline.state.parse import parse
from pipeline.state.sections import read_sections

from conftest import GOLDEN

STATES = sorted((GOLDEN / "recover").glob("*.state.md")) + sorted((GOLDEN / "state").glob("*.md"))


def test_the_restore_path_imports_no_pydantic():
    code = ("import sys; import pipeline.state.sections, pipeline.restore.handoff, pipeline.restore.reconcile, "
            "pipeline.restore.run, pipeline.state.marker, pipeline.state.store; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'click', 'litellm')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_layout_constants_are_defined_once():
    assert model.SECTION_NAMES is sections.SECTION_NAMES
    assert render.HEADINGS is sections.HEADINGS and render.TITLE is sections.TITLE and render.NONE is sections.NONE


@pytest.mark.parametrize("path", STATES, ids=lambda p: p.name)
def test_parse_is_built_on_the_section_reader(path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    calls = []
    real = parse_module.read_sections
    monkeypatch.setattr(parse_module, "read_sections", lambda t, path=None: calls.append(t) or real(t, path=path))
    state = parse(text)
    assert calls == [text]
    doc = read_sections(text)
    assert (state.stamp, state.kind, state.cwd, state.repo, state.branch, state.trigger, state.created) == (
        doc.stamp, doc.kind, doc.cwd, doc.repo, doc.branch, doc.trigger, doc.created)
    assert (state.position.current, state.position.done, state.position.remaining) == (doc.current, doc.done, doc.remaining)
    assert [(d.timestamp, d.status, d.what, d.reasoning) for d in state.decisions] == [
        (d.timestamp, d.status, d.what, d.reasoning) for d in doc.decisions]
    assert [f.text for f in state.facts] == doc.facts
    assert (state.approved_workflow, state.rederivation, state.suggested_skills) == (
        doc.approved_workflow, doc.rederivation, doc.suggested_skills)


def test_errors_name_the_file_and_line_in_both():
    text = "# Agent State\n\nSession: 2026-03-10-1000 | Cwd: /x | Repo/Branch: r@b\nCreated: yesterday\n"
    for reader in (read_sections, parse):
        with pytest.raises(InputError, match=r"^s\.state\.md:4: expected 'Created: <ISO-8601>'"):
            reader(text, path="s.state.md")
