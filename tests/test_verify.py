"""``duck-tape verify`` (issue 17 §1): each compaction's summary against the entries extracted before it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pipeline.cli import main
from pipeline.verify import render
from pipeline.verify.compare import verify
from pipeline.verify.summary import carrier, missing_reason, units
from pipeline.verify.terms import distinctive
from tests.rules_builder import B

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
FIXTURE = ROOT / "fixtures" / "claude-code" / "checkout-rate-limit.jsonl"


def two_compactions():
    """A rate-limit session compacted twice; the first summary keeps the decisions and the ticket, drops the
    port fact and the constraint; the second keeps the refund task and drops slowapi and the failing tests."""
    b = B()
    b.user("Add rate limiting to POST /api/checkout (ticket SHOP-1234). Never push to main directly.")
    b.asst("Should the limiter be a fixed window counter or a token bucket in Redis?")
    b.user("no fixed window counter. use a token bucket in Redis.")
    b.asst("Going with a token bucket in Redis: it survives restarts.")
    b.bash("redis-cli ping", "Could not connect to Redis at 127.0.0.1:6379: Connection refused", error=True)
    b.bash("redis-cli -p 6380 ping", "PONG")
    b.asst("Found it: redis-server in this container listens on port 6380, not 6379.")
    b.edit("src/shop/ratelimit.py")
    b.todos(("Write TokenBucket in src/shop/ratelimit.py", "completed"), ("Add refund rate-limit tests", "pending"))
    b.compaction("Summary:\n1. The user asked for rate limiting on POST /api/checkout (SHOP-1234).\n"
                 "2. Decisions: a token bucket in Redis was chosen.\n"
                 "3. Rejected: a fixed window counter (the user said no).\n"
                 "4. Pending Tasks:\n- Add refund rate-limit tests\n")
    b.user("also cover the /refund endpoint with its own bucket")
    b.asst("We should not use slowapi for this: it needs the Starlette request object. I'll write the decorator myself.")
    b.bash("python -m pytest -q tests/api", "2 failed, 40 passed", error=True)
    b.compaction("Summary:\n- Working on the /refund endpoint.\n- Pending Tasks:\n- Add refund rate-limit tests\n")
    return b.build()


def test_every_count_of_a_hand_built_session():
    v = verify(two_compactions())
    first, second = v.checks
    assert (first.number, first.since, first.events_before) == (1, None, 12)
    assert first.counts() == {"approved": (1, 1), "rejected": (1, 1), "fact": (0, 2), "constraint": (0, 1),
                              "remaining": (1, 1), "task": (1, 1)}
    lost = {(x.entry.kind, x.entry.text) for x in first.lost}
    assert lost == {
        ("constraint", "Never push to main directly."),
        ("fact", "Found it: redis-server in this container listens on port 6380, not 6379."),
        ("fact", "`redis-cli ping` failed (Could not connect to Redis at 127.0.0.1:6379: Connection refused); "
                 "`redis-cli -p 6380 ping` worked"),
    }
    # the second is held to the events since the first only (its window), Remaining as it stood then
    assert (second.since, second.events_before) == (12, 4)
    assert second.counts() == {"approved": (0, 0), "rejected": (0, 1), "fact": (0, 0), "constraint": (0, 0),
                               "remaining": (1, 2), "task": (1, 1)}
    assert [x.entry.text for x in second.lost] == [
        "REJECTED: slowapi - it needs the Starlette request object",
        "Get `python -m pytest -q tests/api` passing: last run failed — 2 failed, 40 passed",
    ]
    assert v.totals() == {"approved": (1, 1), "rejected": (1, 2), "fact": (0, 2), "constraint": (0, 1),
                          "remaining": (2, 3), "task": (2, 2)}
    out = render.text(v)
    assert "Compaction 1 of 2 (event 12, 2026-09-01T10:01:00.000Z): 12 events since the start of the file; " \
           "kept 4/7 (57 %): approved 1/1, rejected 1/1, facts 0/2, constraints 0/1, remaining 1/1, tasks 1/1" in out
    assert "Compaction 2 of 2 (event 17, 2026-09-01T10:01:25.000Z): 4 events since compaction 1; kept 2/4 (50 %)" in out
    assert 'evidence (event 14): "We should not use slowapi for this: it needs the Starlette request object."' in out
    assert out.rstrip().endswith("Total since the first compaction (2 compared): kept 6/11 (55 %): approved 1/1, "
                                 "rejected 1/2, facts 0/2, constraints 0/1, remaining 2/3, tasks 2/2")


def test_a_rejected_alternative_is_kept_only_with_its_status():
    """The summary naming the rejected option as if chosen does not keep the rejection."""
    t = two_compactions()
    events = list(t.events)
    events[12] = replace(events[12], text=events[12].text.replace("3. Rejected: a fixed window counter (the user said no).",
                                                                  "3. Also a fixed window counter."))
    first = verify(replace(t, events=events), only=1).checks[0]
    assert first.counts()["rejected"] == (0, 1)
    assert first.counts()["approved"] == (1, 1)


def test_only_one_compaction_and_out_of_range():
    t = two_compactions()
    v = verify(t, only=2)
    assert [c.number for c in v.checks] == [2] and v.compactions == 2
    with pytest.raises(ValueError, match="compaction 3 does not exist: the transcript has 2"):
        verify(t, only=3)


def test_a_summary_repeated_and_a_compaction_right_after_another():
    b = B()
    b.user("Rename the `orders_v2` table to `orders` in db/migrate.sql")
    b.asst("Renamed it in db/migrate.sql.")
    b.compaction("Summary: renamed orders_v2 to orders in db/migrate.sql")
    b.compaction("Summary: renamed orders_v2 to orders in db/migrate.sql")
    v = verify(b.build())
    assert v.checks[1].repeats == 1 and v.checks[1].events_before == 0
    assert "no events before it to check (it follows compaction 1 directly)" in render.text(v)


@pytest.mark.parametrize("text, harness, reason", [
    ("", "claude-code", "the transcript ends before the harness wrote its summary"),
    ("compacted (no summary text; 14 history items kept)", "codex",
     "Codex kept no summary text for this compaction (14 history items kept)"),
    ("truncation: 27 messages removed (token limit 128000)", "copilot",
     "Copilot CLI truncated the history (27 messages removed) and keeps no summary"),
    ("<state_snapshot>…</state_snapshot>", "gemini", None),
])
def test_compactions_without_a_summary_are_named(text, harness, reason):
    assert missing_reason(text, harness) == reason


def test_a_harness_without_compactions_says_so_plainly():
    b = B()
    b.user("fix the flaky test in tests/test_cart.py")
    b.asst("Fixed it.")
    out = render.text(verify(b.build()))
    assert out == ("duck-tape verify: /home/dev/.claude/projects/-home-dev-shop/7b1e2c3d.jsonl: this claude-code "
                   "transcript holds no compaction (the isCompactSummary line after each compaction would hold the "
                   "summary); nothing to verify.\n")
    t = b.build()
    t.meta.harness = "generic"
    assert "a generic transcript keeps no compaction summary" in render.text(verify(t))


@pytest.mark.parametrize("text, terms", [
    ("a token bucket in Redis", ["Redis", "bucket"]),
    ("consolidate to 5-6 focused agents instead of 12 agents", ["5-6", "12"]),
    ("Get `npm test` passing: Module ts-jest in the transform option was not found.", ["npm test", "ts-jest"]),
    ("Created /home/dev/shop/validation_checklist.txt", ["validation_checklist.txt"]),
    ("`git checkout --theirs logs/a.json …/integrat…` failed", ["--theirs", "a.json"]),
    ("redis-server listens on port 6380, not 6379", ["redis-server", "6380", "6379"]),
    ("Never push to main directly.", ["push", "main"]),
    ("the key is <REDACTED> now", []),
])
def test_distinctive_terms(text, terms):
    assert distinctive(text) == terms


def test_units_match_whole_words_with_the_heading():
    cut = units("## Rejected approaches\n- fixed window counter\n- port 63800\n")
    assert carrier(["fixed window"], "REJECTED", cut).text == "fixed window counter"  # the heading rejects
    assert carrier(["6380"], None, cut) is None  # never inside a longer number
    assert carrier([], None, cut) is None


def test_cli_text_json_and_last(capsys):
    assert main(["verify", str(FIXTURE), "--compaction", "last", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["harness"] == "claude-code" and data["compactions"] == 1 and len(data["checks"]) == 1
    check = data["checks"][0]
    assert check["events_before"] == 218
    assert sum(c["total"] for c in check["counts"].values()) == len(check["entries"])
    assert all(set(e) >= {"kind", "kept", "terms", "quote", "summary_line"} for e in check["entries"])
    assert main(["verify", str(FIXTURE), "--compaction", "2"]) == 2
    assert "compaction 2 does not exist: the transcript has 1" in capsys.readouterr().err
    assert main(["verify", str(FIXTURE), "--compaction", "first"]) == 2


@pytest.mark.corpus
def test_corpus_four_compactions_prints_each():
    path = CORPUS / "claude-code-1.0.45-four-compactions.jsonl"
    if not path.is_file():
        pytest.skip("corpus not present")
    from pipeline.transcripts import read_transcript

    v = verify(read_transcript(str(path), warn=False))
    assert [c.number for c in v.checks] == [1, 2, 3, 4]
    assert v.checks[0].events_before == 0 and [c.repeats for c in v.checks] == [None, 1, 1, None]
    out = render.text(v)
    for n in (2, 3, 4):
        assert f"Compaction {n} of 4 (line " in out
    assert "Total since the first compaction (3 compared): kept " in out


def test_batch_verify_reports_per_session_counts_and_totals(tmp_path, capsys):
    from pipeline.transcripts import read_transcript

    out = tmp_path / "out"
    copilot = ROOT / "fixtures" / "copilot" / "legacy-session.jsonl"  # a truncation: no summary kept
    assert main(["batch", str(FIXTURE), str(copilot), "--out", str(out), "--verify", "--mask", "--jobs", "1"]) == 0
    expected = verify(read_transcript(str(FIXTURE), warn=False)).totals()
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    t = data["totals"]["compactions"]
    assert (t["sessions"], t["compactions"], t["compared"], t["missing"]) == (2, 2, 1, 1)
    assert t["counts"] == {k: list(v) for k, v in expected.items()}
    decided = expected["approved"][0] + expected["rejected"][0], expected["approved"][1] + expected["rejected"][1]
    sentence = (f"Across 1 compaction(s) compared (2 in 2 session(s); 1 compaction(s) kept no summary), the summaries "
                f"kept {round(100 * decided[0] / decided[1])} % of decisions and "
                f"{round(100 * expected['rejected'][0] / expected['rejected'][1])} % of rejected alternatives")
    assert sentence in capsys.readouterr().out
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Compactions (--verify)" in report and sentence in report
    # a run without --verify is not served the verify records from the cache, and reports no compactions
    assert main(["batch", str(FIXTURE), "--out", str(out), "--mask", "--jobs", "1"]) == 0
    assert "compactions" not in json.loads((out / "report.json").read_text(encoding="utf-8"))["totals"]
