"""A decision line the user labels ("Decision: …", "Decisão: …", "决定：…", "결정: …") is a decision in any of the
languages people write in; "X, not Y" in it also turns Y down, with the line's reason (trial input: "Decision: we
use the staging DB, not prod, because prod is locked." read as the task only)."""

from __future__ import annotations

import pytest

from pipeline.stages.rules import decisions
from pipeline.stages.rules.scan import scan
from rules_builder import B


def _log(line: str) -> list[tuple[str, str, str]]:
    b = B()
    b.user("Set up the nightly import job.")
    b.asst("Which database should the import use?")
    b.user(line)
    return [(d.status, d.what, d.reasoning) for d in decisions.build(scan(b.build()))]


@pytest.mark.parametrize("line,chosen,turned_down,reason", [
    ("Decision: we use the staging DB, not prod, because prod is locked.", "staging DB", "prod", "prod is locked"),
    ("Decisão: usamos o banco de staging, não o de produção, porque produção está bloqueada.", "banco de staging",
     "produção", "produção está bloqueada"),
    ("Decisión: Postgres en lugar de Redis porque necesitamos transacciones.", "Postgres", "Redis",
     "necesitamos transacciones"),
    ("决定：用 staging 数据库，不用 prod，因为 prod 被锁了。", "staging 数据库", "prod", "prod 被锁了"),
])
def test_a_labelled_decision_approves_one_and_turns_down_the_other(line, chosen, turned_down, reason):
    log = _log(line)
    assert any(s == "APPROVED" and chosen in w and r == reason for s, w, r in log), log
    assert any(s == "REJECTED" and w == turned_down for s, w, _ in log), log


def test_a_labelled_decision_without_an_alternative_and_a_plain_marker_stay_one_entry():
    assert _log("결정: Postgres를 사용 때문에 트랜잭션이 필요하다") == [("APPROVED", "Postgres를 사용", "트랜잭션이 필요하다")]
    assert _log("APPROVED: the token bucket, not a fixed window") == [
        ("APPROVED", "the token bucket, not a fixed window", "stated by the user")]
