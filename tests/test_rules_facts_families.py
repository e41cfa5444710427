"""Established Facts from the shape of the dialogue (issue 13, facts half): trial and error, review findings,
pasted failure logs, and the phrasing families of ``findings`` — each with phrasings invented here, in other
domains and languages (never a probe's words)."""

from __future__ import annotations

import pytest

from pipeline.stages.rules import facts, findings, trials
from pipeline.stages.rules.scan import scan
from tests.rules_builder import B, evidence_ok


def _facts(b: B):
    t = b.build()
    out = facts.build(scan(t))
    assert not evidence_ok(t, out)
    return [f.text for f in out]


# --- trial and error ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failed, error, retry, must",
    [
        ("cd api && node server.js", "Error: Cannot find module 'express'", "cd api && npx --yes node@20 server.js", "node@20"),
        ("cargo build --release", "error: linker `cc` not found", "CC=clang cargo build --release", "CC=clang"),
        ("psql -h db -p 5432 shop", "psql: error: connection refused", "psql -h db -p 6543 shop", "6543"),
    ],
)
def test_changed_retry_is_a_fact(failed, error, retry, must):
    b = B()
    b.user("start the service")
    b.bash(failed, "Exit code 1\n" + error, error=True)
    b.asst("Trying another way.")
    b.bash(retry, "ok")
    got = [t for t in _facts(b) if must in t]
    assert got and "failed" in got[0] and "worked" in got[0]


def test_identical_rerun_and_diagnostic_are_not_fixes():
    b = B()
    b.user("fix the test")
    b.bash("pytest -q tests/test_cart.py", "Exit code 1\n1 failed, 3 passed\nFAILED tests/test_cart.py::test_total", error=True)
    b.edit("/home/dev/shop/cart.py")
    b.bash("pytest -q tests/test_cart.py", "4 passed")
    b.bash("which pytest", "/usr/bin/pytest")
    assert not [t for t in trials.build(scan(b.build())) if "worked" in t.text]


@pytest.mark.parametrize(
    "command, output",
    [
        ("rm -rf build/", "Bash operation blocked by hook:\n- [guard.py]: BLOCKED: destructive rm prevented"),
        ("cat /etc/shadow", "cat: /etc/shadow: Permission denied"),
        ("docker run --privileged img", "docker: Error response from daemon: privileged mode is not allowed here."),
    ],
)
def test_blocked_command_is_an_environment_trap(command, output):
    b = B()
    b.user("clean up")
    b.bash(command, output, error=True)
    got = [t for t in _facts(b) if "blocked" in t]
    assert got


def test_same_error_three_times_is_one_fact():
    b = B()
    b.user("merge the branches")
    for name in ("alpha", "beta", "gamma"):
        b.bash(f"git merge feature/{name}", "CONFLICT (content): Merge conflict in locale/messages.po", error=True)
        b.asst("Resolving.")
    got = [t for t in _facts(b) if "messages.po" in t]
    assert len(got) == 1 and "seen 3 times" in got[0]


def test_missing_capability_without_retry():
    b = B()
    b.user("mostre o gráfico")
    b.bash("feh plot.png", "/bin/sh: 1: feh: command not found", error=False)
    b.asst("Não há visualizador de imagens aqui.")
    assert [t for t in _facts(b) if "feh" in t and "command not found" in t]


def test_error_hint_is_kept():
    b = B()
    b.user("publish it")
    b.bash("npm publish", "npm error code 1\n❌ Release check failed: tag missing. Use RELEASE_TAG=next to override.", error=True)
    assert [t for t in _facts(b) if "RELEASE_TAG" in t]


def test_agents_own_syntax_error_is_not_a_fact():
    b = B()
    b.user("check it")
    b.bash("python -c 'print(1'", "SyntaxError: '(' was never closed", error=True)
    b.bash("python -c 'print(1)'", "1")
    assert not trials.build(scan(b.build()))


# --- review findings and pasted logs ------------------------------------------------------------------------


def test_review_findings_json():
    answer = (
        '{\n  "findings": [\n    {"title": "[P1] Cache key ignores locale", "body": "The `render` cache keys on the path only, '
        'so German pages are served to French users. Add the locale."},\n    {"title": "[P2] Timeout not applied", '
        '"body": "`fetch_rates` never passes `timeout`, so a slow upstream blocks the worker."}\n  ],\n'
        '  "overall_correctness": "patch is incorrect"\n}'
    )
    b = B()
    b.user("Review the changes")
    b.asst(answer)
    got = _facts(b)
    assert any("Cache key ignores locale" in t and "German" in t for t in got)
    assert any("fetch_rates" in t for t in got)


def test_pasted_failure_log():
    b = B()
    b.user("deploy falhou:\n[12:00:01] INFO building\n⚠ Config file app.yaml not found\n✖ Builder could not detect a runtime\n[12:00:03] INFO done")
    got = _facts(b)
    assert any("app.yaml" in t and "Pasted log" in t for t in got)


# --- phrasing families --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence, family",
    [
        ("There are still two failing checks in the lint job.", "gap"),
        ("Two endpoints are still untested after the refactor.", "gap"),
        ("还有 2 个测试失败。", "gap"),
        ("Ainda há um teste falhando no módulo de pagamentos.", "gap"),
        ("The nginx config lives under /etc/nginx/conf.d rather than sites-enabled.", "placement"),
        ("The broker answers on 5673, not 5672.", "placement"),
        ("O arquivo de chaves fica em ~/.ssh/keys, não em ~/.ssh.", "placement"),
        ("p95 dropped from 900 ms to 120 ms after the index.", "measured"),
        ("La latencia bajó un 35% con el pool nuevo.", "measured"),
        ("延迟下降了 40%。", "measured"),
        ("Raising the pool size made no difference.", "dead_end"),
        ("Aumentar o timeout não adiantou.", "dead_end"),
        ("缓存预热没有效果。", "dead_end"),
        ("The leak stems from the listener registered on every render.", "cause"),
        ("The 502s are due to the keep-alive timeout on the balancer.", "cause"),
        ("El error se debe a un certificado vencido.", "cause"),
        ("超时的原因是每个请求都做一次 DNS 查询。", "cause"),
        ("HOME is not set inside the build container.", "environment"),
        ("The box has no GPU, so training runs on CPU.", "environment"),
        ("A máquina não tem GPU.", "environment"),
    ],
)
def test_family(sentence, family):
    assert findings.kind_of(sentence) == family


@pytest.mark.parametrize(
    "sentence",
    ["Maybe the broker answers on 5673, not 5672?", "If the pool made no difference we could revert.", "Let me check the logs."],
)
def test_not_a_family(sentence):
    assert findings.kind_of(sentence) == ""


def test_family_sentence_becomes_fact_with_evidence():
    b = B()
    b.user("why is checkout slow")
    b.bash("ab -n 100 http://localhost/checkout", "p95 900 ms")
    b.asst("Found it. The slowness stems from a synchronous call to the tax service on every request.")
    assert any("tax service" in t for t in _facts(b))


def test_measured_claim_needs_a_measurement():
    b = B()
    b.user("plan the parallel rollout")
    b.asst("Plan: 4 workers in parallel, so the build goes from 40 min to 12 min, about 70% faster.")
    assert not [t for t in _facts(b) if "40 min" in t]
    b2 = B()
    b2.user("benchmark the build")
    b2.bash("time make", "real 12m03s\nbefore: 40 min")
    b2.asst("The build dropped from 40 min to 12 min.")
    assert [t for t in _facts(b2) if "40 min" in t]


@pytest.mark.parametrize(
    "prompt",
    [
        "ugh, we should have tagged the release before bumping the version",
        "da próxima vez rode as migrações antes dos testes",
        "下次先备份数据库再升级。",
    ],
)
def test_hindsight_lesson_is_a_constraint(prompt):
    b = B()
    b.user(prompt)
    b.asst("Noted.")
    out = facts.build(scan(b.build()))
    assert [f for f in out if f.kind == "constraint"]


def test_subagent_listing_is_not_a_finding():
    b = B()
    b.user("explore the repo")
    b.subagent(
        "Explore",
        "Here is the overview.\n\n- cli.py (210 lines): Entry point with argument parsing\n- Files: a.py, b.py\n"
        "- Created `scripts/seed.py` for fixtures\n\nThe worker reads `QUEUE_URL` but the compose file never sets it, "
        "so jobs fail at start.",
    )
    got = [f.text for f in facts.build(scan(b.build())) if f.kind == "subagent"]
    assert any("QUEUE_URL" in t for t in got)
    assert not any("210 lines" in t or "Created" in t for t in got)
