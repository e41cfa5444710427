"""``migrate`` (classify freeform content into the schema) and ``prune`` (remove chosen Notes blocks).

DESIGN.md "CONTEXT.md (Tier 1)": "duck-tape migrate (classify freeform content into sections, keep unmatched
content above the schema, add missing headers and TOC) and duck-tape prune (remove chosen Notes blocks only)".
Golden files: tests/golden/context/migrate.md, migrate.report.txt, prune.md.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import check_golden

from pipeline.context.changelog import NO_CHANGES
from pipeline.context.migrate import Block, classify, plan_migrate, segment
from pipeline.context.parse import items, parse, split_lines
from pipeline.context.prune import list_notes, plan_prune
from pipeline.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "context"
NOW = datetime(2026, 3, 12, 8, 30, tzinfo=timezone.utc)


def fixture(name: str) -> str:
    return (FIXTURES / name).read_bytes().decode("utf-8")


def migrated(text: str):
    return plan_migrate(text, path="CONTEXT.md", now=NOW)


def test_migrate_golden():
    check_golden("context/migrate.md", migrated(fixture("freeform.md")).after)


def test_migrate_report_golden():
    outcome = migrated(fixture("freeform.md"))
    check_golden("context/migrate.report.txt", "\n".join(["Migration:", *outcome.report, "Changelog:", *outcome.changelog]) + "\n")


def test_migrate_places_every_block_and_flags_low_confidence():
    outcome = migrated(fixture("freeform.md"))
    report = "\n".join(outcome.report)
    assert '- line 5 "We use gunicorn with 4 workers per pod." -> Decisions (low confidence: weak cue)' in report
    assert '"Never push to main directly; open a PR." -> Conventions' in report
    assert '"Should the admin export endpoint get an audit log?" -> Open-Questions' in report
    assert '"2026-02-12: Partner-7 retries failed checkouts in a tight l…" -> Notes' in report
    assert '"partner key: an API key issued to a B2B partner, prefixed `…" -> Glossary (low confidence: weak cue)' in report
    assert '"The office plant is called Gerald." -> kept above the schema (no cue matched)' in report
    assert '- line 7 "## What we are building" -> removed (every block under it moved)' in report
    doc = parse(outcome.after)
    assert doc.missing() == []
    above = "".join(doc.above)
    assert above.startswith("# Shop service notes\n\nThings to know before working on the shop service.")
    assert "The office plant is called Gerald." in above and "make dev   # starts Postgres" in above
    assert "Never push" not in above and "## Team rules" not in above
    glossary = {it.label: it.value for it in items(doc.get("Glossary")) if it.kind == "entry"}
    assert glossary == {"SKU": "stock keeping unit, the id of one sellable variant",
                        "partner key": "an API key issued to a B2B partner, prefixed `pk_`"}
    notes = [it.key for it in items(doc.get("Notes")) if it.kind == "note"]
    assert notes == ["2026-02-12 00:00"]
    assert "- TODO(todo): 2026-03-12 the checkout tests share Redis db 15 with the order tests, split them." in outcome.after


def test_migrate_twice_changes_nothing_the_second_time():
    first = migrated(fixture("freeform.md"))
    second = migrated(first.after)
    assert (second.changed, second.changelog, second.after) == (False, [NO_CHANGES], first.after)


def test_migrate_adds_missing_sections_in_place_and_regenerates_toc():
    outcome = migrated(fixture("missing-sections.md"))
    doc = parse(outcome.after)
    assert doc.names() == ["Contents", "Goals", "Decisions", "Conventions", "Glossary", "Deferred-Debt",
                           "Open-Questions", "Notes"]
    assert "".join(doc.get("Contents").body).count("- [") == 7
    assert "## Conventions\n- TODO(scaffold): 2026-03-12 context bootstrap pending first explicit convention\n\n## Glossary" in outcome.after
    assert outcome.after.endswith("### Notes\nPartner-7 retries failed checkouts in a tight loop; see SHOP-1234.\n\n"
                                  "## Notes\n- TODO(scaffold): 2026-03-12 context bootstrap pending first explicit note\n")
    assert "- added sections: ## Conventions, ## Notes" in outcome.report and "- ## Contents regenerated" in outcome.report


def test_migrate_of_a_schema_file_moves_only_matched_preamble_blocks():
    text = fixture("above-and-unknown.md")
    outcome = migrated(text)
    assert outcome.report == [
        '- line 3 "> Read this before touching the checkout service. Keep the…" -> kept above the schema (no cue matched)',
        '- line 5 "Owner: checkout squad (#shop-checkout on chat)." -> Glossary (low confidence: weak cue)',
        '- line 8 "The checkout API takes a cart id and a payment token and re…" -> kept above the schema (no cue matched)']
    old, new = parse(text), parse(outcome.after)
    assert "".join(new.above) == "".join(old.above).replace("Owner: checkout squad (#shop-checkout on chat).\n\n", "")
    for name in ("Contents", "Architecture", "Links", "Notes", "Decisions"):
        assert new.get(name).body == old.get(name).body
    assert "- **Owner**: checkout squad (#shop-checkout on chat).\n" in outcome.after
    assert migrated(outcome.after).changelog == [NO_CHANGES]


def test_classify_uses_heading_context_and_ties_are_flagged():
    block = Block("item", 0, 1, "Postgres 15 for orders", ["Decisions made"])
    assert classify(block) == ("Decisions", None)
    assert classify(Block("para", 0, 1, "The office plant is called Gerald.")) == (None, None)
    assert classify(Block("para", 0, 1, "We decided to always do it")) == ("Decisions", "also matches Conventions")
    blocks = segment(split_lines("# T\n\npara one\nstill one\n- item\n  more\n```\ncode\n```\n## H\n")[0])
    assert [(b.kind, b.start, b.end) for b in blocks] == [("para", 2, 4), ("item", 4, 6), ("code", 6, 9), ("heading", 9, 10)]


def test_migrate_of_an_agents_file_uses_the_translation_rules_in_any_language():
    """Issue 26 item 3: an AGENTS.md / CLAUDE.md-style file (Portuguese and Chinese here) is sorted by the same rules
    as a state file: standing rules -> Conventions, choices -> Decisions, a procedural step and commands stay where
    they are, definitions -> Glossary, deferrals -> Deferred-Debt, a goal, a question, a cause -> Notes."""
    outcome = migrated(fixture("agents-multilingual.md"))
    placed = {p["excerpt"][:24]: p["to"] for p in outcome.placements}
    assert placed == {
        "Instruções para agentes ": "kept", "`make dev` — sobe o Post": "kept", "`pnpm test`: roda os tes": "kept",
        "Nunca faça push direto n": "Conventions", "Não mexa no módulo de pa": "Conventions",
        "Rode `pnpm lint` antes d": "Conventions", "永远不要把 `.env` 文件提交到仓库。": "Conventions",
        "Decidimos usar pnpm em v": "Decisions", "我们决定用 SQLite 而不是 MySQL 做": "Decisions",
        "pode commitar essas alte": "kept", "lote significa um conjun": "Glossary", "租户是指一个付费客户账号": "Glossary",
        "Por enquanto o cache de ": "Deferred-Debt", "暂时跳过了支付回调的测试，以后补上。": "Deferred-Debt",
        "O objetivo é que o check": "Goals", "Quem é dono do serviço d": "Open-Questions",
        "原因是服务器时区设置为 UTC，所以日报会差一天": "Notes", "A planta do escritório s": "kept",
        "## Regras": "removed", "## Glossário": "removed"}
    doc = parse(outcome.after)
    assert [it.label for it in items(doc.get("Glossary")) if it.kind == "entry"] == ["lote", "租户"]
    assert all(it.status == "open" for it in items(doc.get("Deferred-Debt")) if it.kind == "debt")
    assert "## Decisões\n- pode commitar essas alterações\n" in outcome.after  # a session step is no decision
    assert migrated(outcome.after).changelog == [NO_CHANGES]


def test_prune_golden_and_nothing_else_changes():
    text = fixture("medium.md")
    after, changelog = plan_prune(text, ["2026-02-12 16:40"], path="CONTEXT.md")
    check_golden("context/prune.md", after)
    assert changelog == ["- Dropped: Notes 2026-02-12 16:40 (pruned)"]
    assert after.split("## Notes")[0] == text.split("## Notes")[0]
    assert after.endswith("## Notes\n### 2026-03-02 11:05\nLoad test on staging: 420 req/s before the Redis CPU saturates.\n"
                          "The lock TTL of 10 s is too long for the spring sale; revisit after the rate limiter lands.\n")


def test_prune_last_block_and_list():
    text = fixture("medium.md")
    after, _ = plan_prune(text, ["2026-03-02T11:05"], path="CONTEXT.md")
    assert after.endswith("## Notes\n### 2026-02-12 16:40\nPartner-7 retries failed checkouts in a tight loop; see SHOP-1234.\n")
    notes = list_notes(text, path="CONTEXT.md")
    assert [(n.stamp, n.lines, n.first) for n in notes] == [
        ("2026-02-12 16:40", 1, "Partner-7 retries failed checkouts in a tight loop; see SHOP-1234."),
        ("2026-03-02 11:05", 2, "Load test on staging: 420 req/s before the Redis CPU saturates.")]
    both, lines = plan_prune(fixture("crlf.md"), ["2026-02-12 16:40", "2026-03-02 11:05"], path="c")
    assert both.endswith("## Notes\r\n") and len(lines) == 2


def test_prune_errors_name_the_problem():
    with pytest.raises(InputError, match=r"no Notes block at 2026-01-01 10:00 \(blocks: 2026-02-12 16:40, 2026-03-02 11:05\)"):
        plan_prune(fixture("medium.md"), ["2026-01-01 10:00"], path="CONTEXT.md")
    with pytest.raises(InputError, match="expected a Notes timestamp 'YYYY-MM-DD HH:MM'"):
        plan_prune(fixture("medium.md"), ["yesterday"], path="CONTEXT.md")
    with pytest.raises(InputError, match="has no '## Notes' section"):
        plan_prune(fixture("missing-sections.md"), ["2026-02-12 16:40"], path="CONTEXT.md")
