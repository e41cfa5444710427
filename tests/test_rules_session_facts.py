"""Session facts from tool output (pipeline.stages.rules.session): the header branch when the metadata has
none, and resumable sub-agent sessions in Re-derivation."""

from __future__ import annotations

from pipeline.stages import distil
from pipeline.stages.rules import session
from pipeline.stages.rules.scan import scan
from pipeline.transcripts.model import Event, Transcript, TranscriptMeta
from rules_builder import B


def test_branch_from_git_output_latest_wins():
    for outputs, expected in [
        (["On branch feature/rate-limit\nChanges not staged for commit:"], "feature/rate-limit"),
        (["On branch main\nnothing to commit", "Switched to a new branch 'fix/csv-stream'"], "fix/csv-stream"),
        (["Switched to branch 'release-2.4'\nYour branch is up to date"], "release-2.4"),
        (["* not a branch line\n- a list", "Branch protection is on"], None),
    ]:
        b = B()
        b.user("commit the work")
        for out in outputs:
            b.call("Bash", "git status")
            b.result(out)
        assert session.branch(scan(b.build())) == expected, outputs


def test_a_failed_git_call_names_no_branch():
    b = B()
    b.user("switch branches")
    b.call("Bash", "git switch nope")
    b.result("On branch main\nfatal: invalid reference: nope", error=True)
    assert session.branch(scan(b.build())) is None


def test_the_header_takes_the_branch_only_when_the_metadata_has_none():
    b = B()
    b.user("commit the work")
    b.call("Bash", "git status")
    b.result("On branch feature/x")
    t = b.build()
    assert t.meta.git_branch and distil.run(t).branch is None
    t.meta.git_branch = None
    assert distil.run(t).branch == "feature/x"


def _events(*evs: Event) -> Transcript:
    return Transcript(events=list(evs), meta=TranscriptMeta(harness="opencode", format="opencode-export", path="x"))


def test_resumable_subagent_sessions_are_re_derivation_lines():
    t = _events(
        Event(0, "user_prompt", "commit the changes through @gitter"),
        Event(1, "subagent_result", "- `b934703` docs", agent="gitter", target="ses_39b5AAA"),
        Event(2, "subagent_result", "- `65323ca` more", agent="gitter", target="ses_40c1BBB"),
        Event(3, "subagent_result", "failed", agent="explore", target="ses_x", is_error=True),
    )
    assert session.resume_lines(scan(t)) == [
        "Resume the gitter sub-agent: task_id ses_39b5AAA", "Resume the gitter sub-agent: task_id ses_40c1BBB",
    ]
    assert "Resume the gitter sub-agent: task_id ses_40c1BBB" in distil.run(t).rederivation
