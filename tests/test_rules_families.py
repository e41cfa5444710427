"""Phrasing families the rules engine learned from the eval suite (issue 3): each test is the failing input of
the general rule, written in words other than the suite's so a rule tuned to one fixture would not pass."""

from __future__ import annotations

import pytest

from pipeline.stages import distil
from pipeline.stages.rules import tools
from rules_builder import B, evidence_ok


def _distil(b: B):
    t = b.build()
    d = distil.run(t)
    assert evidence_ok(t, d.decisions) == [] and evidence_ok(t, d.facts) == []
    return d


def _log(b: B) -> list[tuple[str, str]]:
    return [(x.status, x.what) for x in _distil(b).decisions]


def _facts(b: B) -> list[tuple[str, str]]:
    return [(f.kind, f.text) for f in _distil(b).facts]


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("For the queue, SQS wins over RabbitMQ: we don't have to run brokers.",
         [("APPROVED", "SQS"), ("REJECTED", "RabbitMQ")]),
        ("A `pytest-xdist` run wins out over sharding the CI job, since it needs no workflow changes.",
         [("APPROVED", "A `pytest-xdist` run"), ("REJECTED", "sharding the CI job")]),
        ("Postgres advisory locks beat the Redis lock because they are released when the session dies.",
         [("APPROVED", "Postgres advisory locks"), ("REJECTED", "the Redis lock")]),
    ],
)
def test_x_wins_over_y(sentence, expected):
    b = B()
    b.user("pick a queue and a lock")
    b.asst(sentence)
    assert _log(b) == expected


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("I'll pick ruff over flake8 plus isort, since one tool is faster and covers both.",
         [("APPROVED", "ruff"), ("REJECTED", "flake8 plus isort")]),
        ("I'll choose zstd over gzip because it compresses the dumps 3x faster.",
         [("APPROVED", "zstd"), ("REJECTED", "gzip")]),
        ("We'll use Alembic over hand-written SQL files, so every schema change is versioned.",
         [("APPROVED", "Alembic"), ("REJECTED", "hand-written SQL files")]),
    ],
)
def test_i_pick_x_over_y(sentence, expected):
    b = B()
    b.user("set up the tooling")
    b.asst(sentence)
    assert _log(b) == expected


def test_this_beats_me_is_no_decision():
    b = B()
    b.user("why is the build slow")
    b.asst("Honestly this beats me, the cache looks warm.")
    assert _log(b) == []


def test_tried_x_but_the_errors_kept_coming():
    b = B()
    b.user("the importer times out")
    b.asst("I tried raising the worker memory to 4 GB, but the OOM kills kept coming because the leak is in the "
           "parser, not the heap size.")
    d = _distil(b).decisions
    assert [(x.status, x.what) for x in d] == [("REJECTED", "raising the worker memory to 4 GB")]
    assert d[0].reasoning.startswith("the leak is in the parser")


def test_yes_to_a_question_about_it_approves_the_recommendation():
    b = B()
    b.user("the nightly job is slow")
    b.asst("I recommend batching the inserts with `COPY` instead of one INSERT per row. Should I implement it now?")
    b.user("yes please")
    assert _log(b) == [("APPROVED", "batching the inserts with `COPY` instead of one INSERT per row")]


def test_no_to_a_stated_plan_rejects_it_and_use_y_replaces_it():
    b = B()
    b.user("parse the dates in the csv")
    b.asst("I'll add python-dateutil for the parsing, it handles every format.")
    b.user("no, use datetime.strptime with a list of formats instead. no new dependencies")
    assert _log(b) == [("REJECTED", "add python-dateutil for the parsing"),
                       ("APPROVED", "datetime.strptime with a list of formats")]


def test_after_no_a_plain_use_y_in_a_later_sentence_is_the_replacement():
    b = B()
    b.user("cache the rendered pages")
    b.asst("For caching I'd put Varnish in front of the app.")
    b.user("no, don't add varnish. keep it in the app, use flask-caching with the redis backend. ops won't run it")
    assert _log(b) == [("REJECTED", "varnish"), ("APPROVED", "flask-caching with the redis backend")]


def test_user_constraints_we_cant_and_without():
    b = B()
    b.user("speed up the report without changing its columns. we can't add a read replica. I can't recall the "
           "table name")
    texts = [t for k, t in _facts(b) if k == "constraint"]
    assert texts == ["speed up the report without changing its columns.", "we can't add a read replica."]


def test_quirk_only_runs_when():
    b = B()
    b.user("fix the e2e tests")
    b.bash("npx playwright test", "Error: browserType.launch: Executable doesn't exist", error=True)
    b.bash("npx playwright install chromium && npx playwright test", "12 passed")
    b.asst("Got it: the suite only starts when the browsers are installed with `npx playwright install` first.")
    assert ("quirk", "Got it: the suite only starts when the browsers are installed with `npx playwright install` "
                     "first.") in _facts(b)


def test_root_cause_which_is_where_it_comes_from():
    b = B()
    b.user("why do uploads fail")
    b.asst("The ingress caps bodies at 10 MB, which is where the 413 comes from.")
    b.asst("The cron runs at 02:00 UTC, which explains the late emails.")
    kinds = _facts(b)
    assert ("root_cause", "The ingress caps bodies at 10 MB, which is where the 413 comes from.") in kinds
    assert ("root_cause", "The cron runs at 02:00 UTC, which explains the late emails.") in kinds


def test_measured_findings_are_facts():
    b = B()
    b.user("make the search fast")
    b.asst("The search endpoint reads 2.4M rows to find ~300 matches. I'll add an index.")
    b.asst("After the index the p95 is 18 ms instead of 1.9 s.")
    b.asst("I'll run 3 checks instead of 5 checks.")
    assert [t for k, t in _facts(b) if k == "fact"] == [
        "The search endpoint reads 2.4M rows to find ~300 matches.",
        "After the index the p95 is 18 ms instead of 1.9 s.",
    ]


@pytest.mark.parametrize(
    "cmd, target",
    [("git push -u origin feature/x", "origin feature/x"), ("git push --force-with-lease origin fix && gh pr view",
                                                          "origin fix"), ("git push", "")],
)
def test_push_target_skips_flags(cmd, target):
    assert tools.push_target(cmd) == target


def test_current_from_a_clause_after_a_semicolon():
    b = B()
    b.user("ship the logout fix")
    b.bash("git push -u origin fix/logout", "branch 'fix/logout' set up to track 'origin/fix/logout'")
    b.asst("Tests pass and I pushed fix/logout; next I'll open the PR against develop.")
    d = _distil(b)
    assert d.position.current == "ship the logout fix — next I'll open the PR against develop."
    assert "Pushed origin fix/logout" in d.position.done


def test_current_is_not_a_plan_the_user_already_answered():
    b = B()
    b.user("make the export faster")
    b.asst("I'll add a thread pool for the exports.")
    b.user("no, keep it single-threaded and batch the queries instead")
    b.edit("/home/dev/shop/export.py")
    b.asst("Batched the queries; the export takes 40 s now.")
    # the final message is a completion: Current says so, never the answered plan
    assert _distil(b).position.current == ("make the export faster — finished (edited export.py): Batched the queries; "
                                           "the export takes 40 s now.")
