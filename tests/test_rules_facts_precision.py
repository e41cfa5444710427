"""Established Facts precision (issue 13 §3, §4): the agent's own "I cannot…", a lead-in to a list, and a
sub-agent's descriptions of code are not facts; the fact next to them stays.  Invented sessions.
"""

from __future__ import annotations

import pytest

from test_rules_facts import facts
from rules_builder import B


@pytest.mark.parametrize(
    "sentence",
    [
        "Therefore, I cannot publish the package.",
        "For now, I'm unable to continue with the release.",
        "Portanto, não consigo publicar o pacote.",
        "Por ahora no puedo continuar con la publicación.",
        "所以我无法发布这个包。",
    ],
)
def test_agent_inability_after_a_failure_is_no_fact(sentence):
    b = B()
    b.user("Publish the package to the registry.")
    b.bash("npm publish", "npm ERR! code E403\nnpm ERR! 403 Forbidden - PUT https://registry.example.com/@acme%2fkit", error=True)
    b.asst(f"The registry refused the upload with E403. {sentence}")
    got = [text for _, text in facts(b)]
    assert not any(sentence.rstrip(".。") in t for t in got)


def test_inability_of_a_tool_is_still_a_fact():
    b = B()
    b.user("Publish the package.")
    b.bash("npm publish", "npm ERR! code E403", error=True)
    b.asst("The CI runner cannot reach the registry without the proxy, so the upload needs HTTPS_PROXY set.")
    got = [text for _, text in facts(b)]
    assert any("cannot reach the registry" in t for t in got)


@pytest.mark.parametrize(
    "lead",
    [
        "I also found that three workers share the same temp directory:",
        "The root cause is in two places:",
        "Confirmed that the following migrations never ran：",
    ],
)
def test_a_lead_in_to_a_list_is_no_fact(lead):
    b = B()
    b.user("Why do the nightly jobs collide?")
    b.asst(f"{lead}\n\n- `/tmp/jobs/a`\n- `/tmp/jobs/b`")
    assert all(text != lead for _, text in facts(b))


@pytest.mark.parametrize(
    "line",
    [
        "- Uses a list comprehension: `[x * 2 for x in xs]`",
        "- Tests empty input: `[]`, `None`, `''`",
        "- `[[1, 2], [3]]` → `[1, 2, 3]`",
        "- `lint`: Lint the code with ruff 0.4",
        "- Examples: `slugify('A B')` = 'a-b'",
    ],
)
def test_subagent_code_descriptions_are_no_findings(line):
    b = B()
    b.user("Map the utils package.")
    b.subagent("Map utils", f"## Overview of src/utils/\n\n### text.py\n{line}\n- Defined in `src/utils/text.py:12`")
    got = [text for _, text in facts(b)]
    assert all(line.lstrip("- ") != t for t in got)


def test_subagent_finding_next_to_descriptions_stays():
    b = B()
    b.user("Map the utils package.")
    b.subagent(
        "Map utils",
        "## Overview\n\n- Uses a list comprehension: `[x * 2 for x in xs]`\n"
        "- `slugify()` in src/utils/text.py:40 drops non-ASCII letters, so 'Ünïcode' becomes 'ncode'.",
    )
    got = [text for _, text in facts(b)]
    assert any("drops non-ASCII letters" in t for t in got)


@pytest.mark.parametrize(
    "line, output",
    [
        ("Fewer Round Trips: 3 calls vs 14 = 78% less traffic", "batch plan: 14 calls"),
        ("Threads Saved: 4 workers vs 16 = 75% fewer threads", "pool size 16"),
        ("Menos Consultas: 2 queries vs 40 = 95% menos carga", "40 queries executed"),
    ],
)
def test_label_line_with_a_worked_out_figure_is_no_fact(line, output):
    b = B()
    b.user("Can we cut the API calls?")
    b.bash("python plan.py --dry-run", output)
    b.asst(f"Here is what the consolidated plan gives:\n\n- {line}\n")
    assert all(text != line for _, text in facts(b))


def test_label_line_whose_figures_were_all_measured_is_a_fact():
    b = B()
    b.user("Did the lazy import help?")
    b.bash("python bench.py", "cold start before: 2400 ms\ncold start after: 820 ms")
    b.asst("Measured:\n\n- Cold Start: 820 ms (down from 2400 ms)\n")
    assert ("fact", "Cold Start: 820 ms (down from 2400 ms)") in facts(b)


def test_a_figure_measured_again_later_replaces_the_earlier_one():
    """Corpus input: 'Overall Completion Rate: 90.0% (up from 71.4%)' stood as a fact after the session measured
    100 %.  Three shapes: the later figure in tool output, in an answer, with markup around the label."""
    from pipeline.stages.rules import facts as facts_mod
    from pipeline.stages.rules.scan import scan as scan_of
    from rules_builder import B

    def session(first: str, later: str | None) -> list[str]:
        b = B()
        b.user("Speed up the API.")
        b.bash("python bench.py", first)
        b.asst(first + ". That is the gain from the cache.")
        if later:
            b.bash("python bench.py --again", later)
            b.asst(f"Measured again: {later}")
        return [f.text for f in facts_mod.build(scan_of(b.build()))]

    for first, later in (("p95 latency: 120 ms (down from 900 ms)", "p95 latency: 480 ms"),
                         ("Build time: 6 min (cut from 14 min)", "**Build time:** 9 min on the CI runner"),
                         ("p95 latency: 120 ms (down from 900 ms)", "P95 LATENCY: 130 ms under load")):
        assert any(first in t for t in session(first, None))  # never measured again: it stands
        assert not any(first in t for t in session(first, later)), (first, later)
    assert any("120 ms" in t for t in session("p95 latency: 120 ms (down from 900 ms)", "p95 latency: 120 ms"))
