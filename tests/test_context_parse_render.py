"""CONTEXT.md parse/render (pipeline.context.parse, .render): byte identity, items, malformed inputs.

DESIGN.md "CONTEXT.md (Tier 1)": content above the schema and unknown sections are preserved byte for byte;
parsing then rendering an untouched file gives the same bytes (issue 5, item 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.context.model import SCHEMA
from pipeline.context.parse import heading_hints, items, parse, split_lines
from pipeline.context.render import anchor, render, toc_lines
from pipeline.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "context"
SAMPLES = sorted(p.name for p in FIXTURES.glob("*.md") if p.name != "README.md")


def read(name: str) -> str:
    return (FIXTURES / name).read_bytes().decode("utf-8")


@pytest.mark.parametrize("name", SAMPLES)
def test_every_fixture_renders_back_byte_for_byte(name):
    text = read(name)
    assert render(parse(text)) == text


def test_fixture_set_covers_the_shapes_the_issue_lists():
    assert {"small.md", "medium.md", "large.md", "above-and-unknown.md", "crlf.md", "missing-sections.md",
            "freeform.md"} <= set(SAMPLES)
    assert b"\r\n" in (FIXTURES / "crlf.md").read_bytes()


def test_above_the_schema_and_unknown_sections_are_kept_apart():
    doc = parse(read("above-and-unknown.md"))
    above = "".join(doc.above)
    assert above.startswith("# Shop — working memory\n")
    assert "## Overview" in above and "## this line is inside a code block" in above
    assert doc.names() == ["Contents", "Goals", "Decisions", "Architecture", "Conventions", "Glossary",
                           "Deferred-Debt", "Open-Questions", "Notes", "Links"]
    assert doc.missing() == []
    assert doc.get("Architecture").body[0] == "   Ingress -> 4 API pods (Flask, gunicorn 4 workers) -> Postgres 15 + Redis 7\n"


def test_crlf_lines_keep_their_ends_and_new_lines_use_them():
    doc = parse(read("crlf.md"))
    assert doc.newline == "\r\n"
    assert doc.get("Goals").heading == "## Goals\r\n"
    entry = items(doc.get("Goals"))[0]
    assert (entry.kind, entry.label) == ("entry", "checkout-p95")


def test_missing_final_newline_round_trips_and_is_recorded():
    text = read("small.md").rstrip("\n")
    doc = parse(text)
    assert doc.final_newline is False
    assert render(doc) == text
    assert split_lines("a\nb") == (["a\n", "b\n"], "\n", False)
    assert split_lines("") == ([], "\n", True)


def test_items_of_each_section_kind():
    doc = parse(read("medium.md"))
    decisions = items(doc.get("Decisions"))
    entries = [it for it in decisions if it.kind == "entry"]
    assert [(e.label, e.date, e.subsection) for e in entries] == [
        ("redis-for-locks", "2026-02-02", None),
        ("429-retry-after-header", "2026-03-01", "API"),
        ("error-body-shape", "2026-02-20", "API"),
        ("orders-in-postgres", "2026-01-15", "Storage"),
        ("no-orm-for-reports", "2026-01-22", "Storage"),
    ]
    assert entries[0].value == "APPROVED: Redis for the checkout locks - already deployed next to the API pods"
    debts = [it for it in items(doc.get("Deferred-Debt")) if it.kind == "debt"]
    assert [(d.label, d.date, d.status, d.end - d.start) for d in debts] == [
        ("TODO(test,#37): the checkout tests share Redis db 15 with the order tests", "2026-02-10", None, 1),
        ("TODO(perf,#41): rate-limited requests are not logged, so we cannot see which partner hits the limit",
         "2026-02-18", None, 2),
        ("TODO(security): the admin export endpoint has no audit log", "2026-02-25", "open", 1),
    ]
    questions = [it for it in items(doc.get("Open-Questions")) if it.kind == "question"]
    assert [(q.key, q.date) for q in questions] == [
        ("Do partner clients honour Retry-After on 429?", "2026-02-12"),
        ("Document the RATE_LIMIT_* settings in docs/configuration.md", "2026-03-02"),
    ]
    notes = [it for it in items(doc.get("Notes")) if it.kind == "note"]
    assert [(n.key, n.end - n.start) for n in notes] == [("2026-02-12 16:40", 2), ("2026-03-02 11:05", 3)]


def test_bold_colon_inside_and_star_bullets_are_entries_too():
    doc = parse("## Goals\n* **Latency:** under 300 ms\n- **b**: x\n- plain bullet\nstray text\n")
    got = [(it.kind, it.label, it.value) for it in items(doc.get("Goals"))]
    assert got == [("entry", "Latency", "under 300 ms"), ("entry", "b", "x"), ("bullet", None, None),
                   ("text", None, None)]


def test_duplicate_section_is_refused_naming_both_lines():
    text = read("small.md") + "\n## Decisions\n- **again**: x (date: 2026-03-01)\n"
    with pytest.raises(InputError) as err:
        parse(text, path="CONTEXT.md")
    assert err.value.exit_code == 2
    assert str(err.value).startswith("CONTEXT.md:34: duplicate section '## Decisions' (first at line 15)")


def test_wrong_heading_level_and_open_fence_get_hints():
    doc = parse(read("missing-sections.md"))
    assert doc.missing() == ["Conventions", "Notes"]
    assert heading_hints(doc, doc.missing()) == [
        "line 25 has '### Notes': a schema section heading is exactly '## Notes'"]
    fenced = parse("## Goals\n```\n## Notes\n")
    assert heading_hints(fenced, ["Notes"]) == [
        "line 3 has '## Notes' inside a fenced code block (is a fence left open above it?)"]


def test_heading_inside_a_fence_does_not_start_a_section():
    doc = parse("# T\n\n## Notes\n```\n## Goals\n```\n")
    assert doc.names() == ["Notes"]


def test_anchors_and_toc_lines_follow_github():
    assert anchor("Open-Questions") == "open-questions"
    assert anchor("Deferred-Debt") == "deferred-debt"
    assert anchor("Team & Rules") == "team--rules"
    assert toc_lines(list(SCHEMA))[0] == "- [Goals](#goals)"


# --- property: parse then render is the identity -----------------------------------------------------------

_line = st.one_of(
    st.sampled_from(["## Contents", *(f"## {n}" for n in SCHEMA), "## Extra", "### 2026-03-01 10:00", "### Sub",
                     "- **k**: v", "- **k**: v (date: 2026-01-01)", "- TODO(x,#1): 2026-01-01 y [status: open]",
                     "- q? (date: 2026-01-01)", "  indented", "```", "~~~", "", "   ", "text", "# Title",
                     "- TODO(scaffold): 2026-01-01 context bootstrap pending first explicit goal"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=30),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_line, max_size=40), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_parse_render_round_trip_property(lines, newline, final):
    text = newline.join(lines) + (newline if final and lines else "")
    try:
        doc = parse(text)
    except InputError as exc:
        assert "duplicate section" in str(exc)
        return
    assert render(doc) == text
    for section in doc.sections:  # items cover every body line exactly once, in order
        covered = [i for it in items(section) for i in range(it.start, it.end)]
        assert covered == list(range(len(section.body)))


def test_preview_is_a_unified_diff_with_the_no_newline_marker():
    from pipeline.context.preview import unified_diff

    assert unified_diff("a\nb", "a\nc\n") == (
        "--- a/CONTEXT.md\n+++ b/CONTEXT.md\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n")
    assert unified_diff(None, "x\n") == "--- /dev/null\n+++ b/CONTEXT.md\n@@ -0,0 +1 @@\n+x\n"
    assert unified_diff("same\r\n", "same\r\n") == ""
