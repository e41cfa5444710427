"""CONTEXT.md across merges at persistent granularity (issue 26 items 1-2; DESIGN.md "Translation (rigid map)" and
"Merge rules", revised 2026-12-04): what one session's state contributes, and how later states resolve, supersede
and repeat it.  The states are written for these tests."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from pipeline.cli import main
from pipeline.context.api import plan
from pipeline.context.changelog import NO_CHANGES
from pipeline.context.parse import items, parse
from pipeline.state.model import AgentState, Decision, Fact, Position
from pipeline.state.render import render

PATH = Path("CONTEXT.md")
DAY = date(2026, 5, 20)


def st(day: int, *, decisions=(), facts=(), remaining=(), done=(), workflow=None, hour: int = 10) -> AgentState:
    stamp = f"2026-05-{day:02d}-{hour:02d}00"
    return AgentState(stamp=stamp, created=f"2026-05-{day:02d}T{hour:02d}:00:00Z", repo="docs-site", branch="main",
                      approved_workflow=workflow,
                      decisions=[Decision(timestamp=f"2026-05-{day:02d}T{hour - 1:02d}:30:00Z", status=s, what=w,
                                          reasoning=r) for s, w, r in decisions],
                      facts=[Fact(text=t) for t in facts], position=Position(remaining=list(remaining), done=list(done)))


def merged(before, *states):
    return plan(PATH, before, list(states), mask=False, today=DAY)


def section(text: str, name: str) -> list[str]:
    doc = parse(text)
    body = doc.get(name)
    return [line.rstrip("\n") for line in body.body if line.strip()]


# the first trial, in our own words: a day of work whose state holds a task list, approvals of single steps,
# failed commands and an unfinished build, beside one lasting choice
DAY_OF_WORK = st(
    12,
    workflow=("/build_site docs/guide.md\nTask 2026-05-12T08:01:00Z: start on the search page\n"
              "Task 2026-05-12T09:10:00Z: deploy and check"),
    decisions=[("APPROVED", "commit the release notes and the search page", 'user approved ("yes")'),
               ("APPROVED", "fix that type error", 'user approved ("yes")'),
               ("APPROVED", "bump the schema version on every migration instead of by hand", 'user approved ("yes")')],
    facts=["`git add docs/search.md` failed (fatal: pathspec 'docs/search.md' did not match any files); `cd site` worked",
           "`hugo server` failed (bash: hugo: command not found); `npx hugo-bin server` worked"],
    remaining=["Get `make docs` succeeding: last run failed — Exit code 2"],
)


def test_a_day_of_work_keeps_only_what_holds_next_session():
    outcome = merged(None, DAY_OF_WORK)
    decisions = section(outcome.after, "Decisions")
    assert decisions == ["- **bump-schema-version-every**: APPROVED: bump the schema version on every migration "
                         'instead of by hand - user approved ("yes") (date: 2026-05-12)']
    assert section(outcome.after, "Glossary") == [
        "- TODO(scaffold): 2026-05-20 context bootstrap pending first explicit term"]
    assert section(outcome.after, "Deferred-Debt") == [
        "- TODO(fix): 2026-05-12 Get `make docs` succeeding: last run failed — Exit code 2 [status: open]"]
    assert section(outcome.after, "Open-Questions") == [
        "- TODO(scaffold): 2026-05-20 context bootstrap pending first explicit question"]
    assert section(outcome.after, "Notes")[1:] == [
        "Merged state file 2026-05-12-1000-recovered.state.md (docs-site@main): 3 added, 0 superseded, 0 dropped.",
        "- `hugo server` failed (bash: hugo: command not found); `npx hugo-bin server` worked"]
    assert [line.split(": ", 2)[1] + " " + line.rsplit(" (", 1)[1] for line in outcome.skipped] == [
        "Approved Workflow task list)", "Decision Log procedural approval)", "Decision Log procedural approval)",
        "Established Facts one-off failure)"]
    assert outcome.skipped[1] == ("- Skipped: Decision Log: APPROVED: commit the release notes and the search page "
                                  "(procedural approval)")
    assert outcome.skipped[3].startswith("- Skipped: Established Facts: `git add docs/search.md` failed (fatal: ")
    assert all(len(line.split(": ", 2)[2].rsplit(" (", 1)[0]) <= 100 for line in outcome.skipped)


def test_a_later_state_resolves_the_debt_with_its_date_and_batch_equals_sequence():
    later = st(14, done=["Ran `make docs` (succeeded)"], remaining=["Add a dark theme to the search page"])
    first = merged(None, DAY_OF_WORK).after
    outcome = merged(first, later)
    assert section(outcome.after, "Deferred-Debt") == [
        "- TODO(fix): 2026-05-12 Get `make docs` succeeding: last run failed — Exit code 2 (resolved: 2026-05-14) "
        "[status: resolved]",
        "- TODO(todo): 2026-05-14 Add a dark theme to the search page [status: open]"]
    assert ("- Superseded: Deferred-Debt TODO(fix): Get `make docs` succeeding: last run failed — Exit code 2 "
            "(open -> resolved)") in outcome.changelog
    batch = merged(None, DAY_OF_WORK, later)
    assert section(batch.after, "Deferred-Debt") == section(outcome.after, "Deferred-Debt")
    assert merged(outcome.after, DAY_OF_WORK, later).changelog == [NO_CHANGES]
    assert merged(outcome.after, later).changelog == [NO_CHANGES]


def test_a_debt_is_not_resolved_by_an_older_state_or_by_one_that_still_lists_it():
    first = merged(None, DAY_OF_WORK).after
    older = st(10, done=["Ran `make docs` (succeeded)"])
    assert "[status: open]" in section(merged(first, older).after, "Deferred-Debt")[0]
    both = st(15, done=["Ran `make docs` (succeeded)"], remaining=["Get `make docs` succeeding: last run failed — Exit code 2"])
    assert "[status: open]" in section(merged(first, both).after, "Deferred-Debt")[0]


def test_a_durable_fact_is_recorded_once():
    trap = "`hugo server` failed (bash: hugo: command not found); `npx hugo-bin server` worked"
    port = "the preview server listens on port 1313 inside the container"
    first = merged(None, DAY_OF_WORK).after
    second = merged(first, st(13, facts=[trap, port]))
    notes = section(second.after, "Notes")
    assert notes.count(f"- {trap}") == 1 and notes[-1] == f"- {port}"
    assert notes[-2] == ("Merged state file 2026-05-13-1000-recovered.state.md (docs-site@main): 1 added, "
                         "0 superseded, 0 dropped.")
    assert merged(second.after, st(16, facts=[trap.upper().lower(), port])).changelog == [NO_CHANGES]


def test_a_reversing_decision_supersedes_the_earlier_one_under_its_key():
    first = merged(None, st(12, decisions=[("APPROVED", "use Redis for the session store", "already deployed")])).after
    outcome = merged(first, st(14, decisions=[("REJECTED", "Redis for the session store",
                                                "in favour of Postgres: one less service to run")]))
    assert outcome.changelog[0] == ("- Superseded: Decisions use-redis-session-store (APPROVED: use Redis for the "
                                    "session store - already deployed -> REJECTED: Redis for the session store - in "
                                    "favour of Postgres: one less service to run)")
    assert section(outcome.after, "Decisions") == [
        "- **use-redis-session-store**: REJECTED: Redis for the session store - in favour of Postgres: one less "
        "service to run (date: 2026-05-14)"]
    batch = merged(None, st(12, decisions=[("APPROVED", "use Redis for the session store", "already deployed")]),
                   st(14, decisions=[("REJECTED", "Redis for the session store", "in favour of Postgres")]))
    assert section(batch.after, "Decisions") == [
        "- **redis-session-store**: REJECTED: Redis for the session store - in favour of Postgres (date: 2026-05-14)"]


def test_dry_run_lists_what_was_left_out_with_the_reason(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    state_file = tmp_path / "2026-05-12-1000.state.md"
    state_file.write_text(render(DAY_OF_WORK), encoding="utf-8")
    assert main(["merge", str(state_file), "--dry-run"]) == 0
    out = capsys.readouterr().out
    changelog = out.split("\nChangelog:\n")[1].splitlines()
    assert changelog[-4:] == [line for line in merged(None, DAY_OF_WORK).skipped]
    assert "- Skipped: Decision Log: APPROVED: fix that type error (procedural approval)" in changelog
    assert not (tmp_path / "CONTEXT.md").exists()
    assert main(["merge", str(state_file), "--yes"]) == 0
    capsys.readouterr()
    assert main(["merge", str(state_file), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("No changes to CONTEXT.md.\n- Skipped: Approved Workflow: ")
