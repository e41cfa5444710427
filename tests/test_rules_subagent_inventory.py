"""A sub-agent's overview of code as it is (headings, a file tree, "- Name: value" bullets) describes the code: its
lines are not findings, only a problem it reports is (issue 13 §4, Established Facts precision)."""

from __future__ import annotations

import pytest

from pipeline.stages.rules import facts
from pipeline.stages.rules.scan import scan
from rules_builder import B

TREE = "```\nsrc/\n├── app.py\n├── billing/\n│   └── invoice.py\n└── tests/\n    └── test_invoice.py\n```\n"

OVERVIEWS = [
    # a Python library's overview with its validation rules
    ("## Project Overview\n\n" + TREE + "\n### Configuration\n\n- Project Name: `ledger`\n- Python Requirement: `>=3.11`\n"
     "- Test paths: `tests`\n\n### Validation rules\n\n- Must contain exactly one currency code\n"
     "- Amount must not be negative\n- The reference must be unique per day\n", "Amount must not be negative"),
    # a Go service's structure with its handlers
    ("# Service layout\n\n## Handlers\n\n- Health: returns `200 OK` on /healthz\n- Orders: uses the `orders` table\n"
     "- Refunds: reads from the `refunds` queue\n\n## Settings\n\n- Port: `8080` by default\n- Timeout: 30 s\n"
     "- Retries: 3\n\n## Notes\n\nThe server only accepts JSON bodies and must run behind the proxy.\n", "uses the `orders` table"),
    # a Portuguese overview with a tree
    ("## Visão geral\n\n" + TREE + "\n## Módulos\n\n- Fatura: calcula o total e o imposto\n- Cliente: guarda o e-mail\n\n"
     "## Regras\n\nO total deve ser positivo e o imposto usa a tabela `aliquotas` com versão 2.\n", "tabela `aliquotas`"),
]


@pytest.mark.parametrize("overview,description", OVERVIEWS)
def test_an_overview_of_code_gives_no_finding_for_what_it_describes(overview, description):
    b = B()
    b.user("Map the project before we port it.")
    b.subagent("map the project", overview)
    out = facts.build(scan(b.build()))
    assert not any(description in f.text for f in out), [f.text for f in out]


def test_a_problem_an_overview_reports_stays_a_finding():
    overview = OVERVIEWS[0][0] + "\n### Problems\n\nThe `invoice.py` rounding is wrong: it fails for amounts over 10,000.\n"
    b = B()
    b.user("Map the project before we port it.")
    b.subagent("map the project", overview)
    out = facts.build(scan(b.build()))
    assert any("rounding is wrong" in f.text for f in out)
    assert not any("must not be negative" in f.text for f in out)


def test_a_plain_result_keeps_its_findings():
    b = B()
    b.user("Why do refunds time out?")
    b.subagent("find the refund timeout", "The refund worker uses a 5 s timeout hard-coded in `worker/refund.py:42`; "
               "the payment API needs up to 12 s, so every slow refund fails.")
    out = facts.build(scan(b.build()))
    assert any("hard-coded in `worker/refund.py:42`" in f.text for f in out)
