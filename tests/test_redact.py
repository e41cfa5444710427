"""Tests for pipeline.redact (DESIGN.md "Redaction").

Every secret below is fake: format-valid, visibly made up (FAKE/fake in the body, 555 phone numbers,
mailbox-fixture.net addresses).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.redact import Finding, mask, report_lines, scan

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"

PEM_BODY = "\n".join(
    [
        "MIIEowIBAAKCAQEAFAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKE",
        "fake0123456789FAKEfake0123456789FAKEfake0123456789FAKEfake01234567",
        "FAKEfakeFAKEfake+/FAKEfake0123456789FAKEfakeFAKEfake0123456789abc=",
    ]
)
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiJmYWtlLXVzZXIiLCJuYW1lIjoiRmFrZSBVc2VyIn0"
    ".FAKEsignatureFAKE0123456789fakeFAKEsig"
)
BASIC = base64.b64encode(b"fakeuser:FakePassw0rd").decode()
WRAPPED = base64.b64encode(b"ghp_FAKEwrap0123456789abcdefGHIJKLmnopqrs").decode()

# (type, text with the value in context, the value that must be flagged and masked)
SECRETS = [
    ("openai-api-key", "export OPENAI_API_KEY=sk-proj-FAKEfake0123456789abcdefGHIJKLmnopqrstUVWX",
     "sk-proj-FAKEfake0123456789abcdefGHIJKLmnopqrstUVWX"),
    ("openai-api-key", "key: sk-FAKE0123456789fakeFAKE0123456789fakeFAKE012345 was rotated",
     "sk-FAKE0123456789fakeFAKE0123456789fakeFAKE012345"),
    ("anthropic-api-key", "client = Anthropic(api_key='sk-ant-api03-FAKEfake0123456789abcdefGHIJKL_mnop-QRST')",
     "sk-ant-api03-FAKEfake0123456789abcdefGHIJKL_mnop-QRST"),
    ("aws-access-key-id", "the old deploy log shows AKIAFAKE0123456789AB in plain text", "AKIAFAKE0123456789AB"),
    ("aws-access-key-id", "ASIAFAKE0123456789CD", "ASIAFAKE0123456789CD"),
    ("aws-secret-access-key", "aws_secret_access_key = FAKEfake0123456789/abcdefGHIJKL+mnopqrs",
     "FAKEfake0123456789/abcdefGHIJKL+mnopqrs"),
    ("github-token", "git push https://ghp_FAKEfake0123456789abcdefGHIJKLmnopqr@github.com/dev/app.git",
     "ghp_FAKEfake0123456789abcdefGHIJKLmnopqr"),
    ("github-token", "GH_TOKEN=gho_FAKEfake0123456789abcdefGHIJKLmnopqr gh pr list",
     "gho_FAKEfake0123456789abcdefGHIJKLmnopqr"),
    ("github-token", "token github_pat_11FAKE0123456789abcdef_FAKEfake0123456789abcdefGHIJKLmnopqrstUVWXyz0123456789ab",
     "github_pat_11FAKE0123456789abcdef_FAKEfake0123456789abcdefGHIJKLmnopqrstUVWXyz0123456789ab"),
    ("slack-token", "SlackClient(token=\"xoxb-000000000000-0000000000000-FAKEfakeFAKEfakeFAKEfake\")",
     "xoxb-000000000000-0000000000000-FAKEfakeFAKEfakeFAKEfake"),
    ("stripe-key", "stripe.api_key = 'sk_live_FAKEfake0123456789abcdef'", "sk_live_FAKEfake0123456789abcdef"),
    ("stripe-key", "use rk_live_FAKEfake0123456789abcdef for refunds", "rk_live_FAKEfake0123456789abcdef"),
    ("stripe-key", "STRIPE=sk_test_FAKEfake0123456789abcdef", "sk_test_FAKEfake0123456789abcdef"),
    ("google-api-key", "https://maps.googleapis.com/maps/api/js?key=AIzaFAKEfake0123456789abcdefGHIJKLmno_-",
     "AIzaFAKEfake0123456789abcdefGHIJKLmno_-"),
    ("gitlab-token", "glpat-FAKEfake0123456789ab", "glpat-FAKEfake0123456789ab"),
    ("huggingface-token", "login with hf_FAKEfakeFAKEfake0123456789abcdefGH", "hf_FAKEfakeFAKEfake0123456789abcdefGH"),
    ("huggingface-token", "HF_TOKEN=hf_FAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKEfa",
     "hf_FAKEfakeFAKEfakeFAKEfakeFAKEfakeFAKEfa"),
    ("npm-token", "//registry.npmjs.org/:_authToken=npm_FAKEfake0123456789abcdefGHIJKLmnopqr",
     "npm_FAKEfake0123456789abcdefGHIJKLmnopqr"),
    ("pypi-token", "password = pypi-AgEIcHlwaS5vcmcFAKEfake0123456789abcdefGHIJKLmnopqrstUVWXyz0123",
     "pypi-AgEIcHlwaS5vcmcFAKEfake0123456789abcdefGHIJKLmnopqrstUVWXyz0123"),
    ("sendgrid-key", "SG.FAKEfake0123456789abcd.FAKEfake0123456789abcdefGHIJKLmnopqrstUVWXy",
     "SG.FAKEfake0123456789abcd.FAKEfake0123456789abcdefGHIJKLmnopqrstUVWXy"),
    ("google-oauth-token", "access ya29.FAKEfake0123456789abcdefGHIJ expired", "ya29.FAKEfake0123456789abcdefGHIJ"),
    ("google-oauth-token", "client secret GOCSPX-FAKEfake0123456789abcdefGH", "GOCSPX-FAKEfake0123456789abcdefGH"),
    ("slack-webhook", "POST https://hooks.slack.com/services/T00000000/B00000000/FAKEfakeFAKEfake01234567",
     "T00000000/B00000000/FAKEfakeFAKEfake01234567"),
    ("bearer-token", "curl -H 'Authorization: Bearer FAKEtoken0123456789abcdef' https://api.dev/v1",
     "FAKEtoken0123456789abcdef"),
    ("basic-auth", f"Authorization: Basic {BASIC}", BASIC),
    ("jwt", f"the session cookie was {JWT};", JWT),
    ("private-key", f"cat ~/.ssh/deploy_key\n{PEM}\nthat is the key", PEM),
    ("password-assignment", 'password = "FakePassw0rd!"', "FakePassw0rd!"),
    ("password-assignment", "DB_PASSWORD=FakePassw0rd", "FakePassw0rd"),
    ("password-assignment", '{"username": "svc", "password": "FakePassw0rd"}', "FakePassw0rd"),
    ("password-assignment", "  POSTGRES_PASSWORD: fakepass123", "fakepass123"),
    ("password-assignment", "mysql --password FakePassw0rd -h db", "FakePassw0rd"),
    ("secret-assignment", '{"api_key": "FAKEfake0123456789"}', "FAKEfake0123456789"),
    ("secret-assignment", "export SERVICE_TOKEN=fake0123456789abcdef", "fake0123456789abcdef"),
    ("secret-assignment", "CLIENT_SECRET: 'FAKEfakeSecret42'", "FAKEfakeSecret42"),
    ("secret-assignment", "MAILGUN_KEY=key-FAKE0123456789abcdef", "key-FAKE0123456789abcdef"),
    ("secret-assignment", "curl -H \"X-Api-Key: fake0123456789abcd\" https://api.dev", "fake0123456789abcd"),
    ("secret-assignment", "const config = { apiKey: 'FAKEfake0123' };", "FAKEfake0123"),
    ("connection-string", "DATABASE_URL=postgres://app_user:FakePassw0rd@db.internal:5432/app", "FakePassw0rd"),
    ("connection-string", "mongodb+srv://admin:FakeMongo99@cluster0.fake.mongodb.net/db", "FakeMongo99"),
    ("connection-string", "REDIS_URL=redis://:FakeRedis42@cache:6379/0", "FakeRedis42"),
    ("email", "Reported by alex.sample@mailbox-fixture.net yesterday", "alex.sample@mailbox-fixture.net"),
    ("email", "<a href=\"mailto:jo.fixture@fake-mail.org\">", "jo.fixture@fake-mail.org"),
    ("email", "Author: Dev <dev@example.com>", "dev@example.com"),
    ("phone", "call +1 202-555-0173 if the job fails", "+1 202-555-0173"),
    ("phone", "office (202) 555-0147, ask for ops", "(202) 555-0147"),
    ("phone", "London desk +44 20 7946 0958.", "+44 20 7946 0958"),
    ("phone", "phone: 2025550123", "2025550123"),
    # issue 22 item 2: the forms no scanner rule covered
    ("discord-webhook", "POST https://discord.com/api/webhooks/1234567890123456789/FAKEdiscordWebhookToken0123456789"
                        "abcdefGHIJKLmnopqrst to alert", "FAKEdiscordWebhookToken0123456789abcdefGHIJKLmnopqrst"),
    ("kubeconfig-credential", "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpGQUtF",
     "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpGQUtF"),
    ("kubeconfig-credential", '{"client-certificate-data": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkZBS0U="}',
     "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkZBS0U="),
    ("base64-wrapped-secret", f"kubectl create secret generic gh --from-literal=t={WRAPPED}", WRAPPED),
    ("password-in-prose", "Das Passwort für die Datenbank lautet: Sonnenblume42!", "Sonnenblume42"),
    ("password-in-prose", "数据库的密码是 Hx9kFAKEm2pQr。", "Hx9kFAKEm2pQr"),
    ("password-in-prose", "la contraseña es Girasol2026x, no la cambies", "Girasol2026x"),
    ("password-in-prose", "le mot de passe est Tournesol77z", "Tournesol77z"),
    ("password-in-prose", "The password for staging is now 'Tr0ub4dor&3'.", "Tr0ub4dor&3"),
    ("digitalocean-token", "droplets use dop_v1_FAKEfake0123456789FAKEfake0123456789FAKEfake0123456789FAKEfake01 now",
     "dop_v1_FAKEfake0123456789FAKEfake0123456789FAKEfake0123456789FAKEfake01"),
]


@pytest.mark.parametrize(("kind", "text", "value"), SECRETS, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(SECRETS)])
def test_each_secret_type_is_detected_and_masked(kind: str, text: str, value: str) -> None:
    findings = scan(text)
    assert [(f.type, text[f.start : f.end]) for f in findings] == [(kind, value)]
    masked, masked_findings = mask(text)
    assert masked == text.replace(value, "<REDACTED>")
    assert masked_findings == findings
    assert findings[0].preview == value[:4]


LOOKALIKES = [
    "server listening on https://localhost:8443 (pid 48213)",
    "max_body_size = 5242880  # bytes",
    "fixes JIRA-1234 and #482 in version 1.0.45 (v2.14.3)",
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 (short 3f2a9c1)",
    "session 550e8400-e29b-41d4-a716-446655440000 resumed",
    '{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9X","name":"Read"}',
    '{"tool_call_id":"call_Abc123Def456Ghi789Jkl012","id":"msg_01XFDUDYJgAACzvnptvVoYEL"}',
    "2025-01-15T10:30:00.123Z 2025-01-15 10:30:00 +0000 epoch 1736937000000",
    "/home/dev/project/src/checkout/rate_limit.py and C:\\Users\\dev\\app\\main.py",
    'password = os.environ["DB_PASSWORD"]',
    'api_key = os.getenv("OPENAI_API_KEY")',
    "const token = process.env.GITHUB_TOKEN;",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "password = f'{prefix}{suffix}'",
    'password = "<REDACTED>"',
    'password: "[REDACTED]" and a bare [REDACTED]',
    '"api_key": "***"',
    'password = "changeme"',
    "DB_PASSWORD=changeme",
    "OPENAI_API_KEY=sk-...your-key-here",
    'api_key = "YOUR_API_KEY"',
    "max_tokens: 4096\ntoken_count = 12345\nnum_tokens=5",
    "password: str = Field(min_length=8)",
    "return { user, password: hashedPassword, token: this.token };",
    "def login(username, password=None, token=None):",
    "private_key = '/home/dev/.ssh/id_ed25519'",
    "SORT_KEY=created_at_desc_order\nPUBLIC_KEY=FAKEpublic0123456789abcdef",
    "The user asked whether the password reset token expires; the secret lives in Vault.",
    "Bearer token authentication is used for the admin API.",
    "the file starts with -----BEGIN RSA PRIVATE KEY----- and ends with the END line",
    "scikit uses task-management-service-layer-v2-implementation and sk-learn-style names",
    "postgres://localhost:5432/app and postgres://app:${DB_PASSWORD}@db/app and https://dev@github.com/x",
    "redis://:password@localhost:6379",
    "Co-Authored-By: Claude <noreply@anthropic.com>",
    "git@github.com:dev/app.git and 12345+dev@users.noreply.github.com",
    "npm install react@18.2.0; load assets/icon@2x.png; image app@sha256:" + "ab" * 32,
    "ip 10.0.0.1 and 192.168.100.200, dates 2025-01-15 and 2025.01.15, call 555-0100",
    '"integrity": "sha512-FAKEfakeFAKEfake0123456789abcdefGHIJKLmnopqrstUVWXyz+/0123456789abcdefghijklmnopqrstuv=="',
    "Tests: 12 passed, 0 failed in 3.21s; hotel: 12345678; automobile: 87654321",
    "@app.get(\"/health\")\n@router.post(\"/api/chat\")",
    # issue 22: messages about passwords, names and ports that only look like the new forms
    "the password is wrong; das Passwort ist falsch; le mot de passe est incorrect; la contraseña es inválida",
    "if password is None: raise; the password is user_password; 密码是必填项",
    "docker run --name mysql -p3306:3306 mysql:8 and mysql -h 127.0.0.1 -P 3306",
    "src/components/checkout/RateLimitHandlerFactory.tsx and a9f8e7d6c5b4a39f8e7d6c5b4a39f8e7d6c5b4a3",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "see https://discord.com/channels/123456789012345678/987654321098765432 for the thread",
    "certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkZBS0U=",
]


@pytest.mark.parametrize("text", LOOKALIKES)
def test_lookalikes_are_not_flagged_and_stay_byte_identical(text: str) -> None:
    assert scan(text) == []
    masked, findings = mask(text)
    assert masked == text
    assert findings == []


def test_lookalikes_in_json_escaped_text_are_not_flagged() -> None:
    """A raw transcript line holds code as a JSON string: ``\\n@app.get`` is not an address."""
    text = json.dumps({"content": "\n".join(LOOKALIKES)})
    assert scan(text) == []


def test_json_escaped_assignment_inside_a_json_string_is_masked() -> None:
    text = json.dumps({"input": {"command": json.dumps({"password": "FakePassw0rd"})}})
    masked, findings = mask(text)
    assert [f.type for f in findings] == ["password-assignment"]
    assert "FakePassw0rd" not in masked
    assert masked == text.replace("FakePassw0rd", "<REDACTED>")


def test_unquoted_value_stops_at_query_separator_and_json_escape() -> None:
    url = "GET https://api.dev/v1/items?access_token=FAKEfake0123456789&page=2"
    assert mask(url)[0] == "GET https://api.dev/v1/items?access_token=<REDACTED>&page=2"
    line = json.dumps({"file_text": "DB_PASSWORD=FakePassw0rd\nDEBUG=1"})
    assert mask(line)[0] == line.replace("FakePassw0rd", "<REDACTED>")


def test_line_numbers_offsets_and_previews_in_mixed_multiline_text() -> None:
    text = (
        "# Notes\n"  # line 1
        "user asked to deploy\n"  # line 2
        "OPENAI_API_KEY=sk-proj-FAKEfake0123456789abcdefGHIJKLmnopqrstUVWX\n"  # line 3
        "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39\n"  # line 4
        "\n"  # line 5
        "contact alex.sample@mailbox-fixture.net about AKIAFAKE0123456789AB\n"  # line 6
        f"{PEM}\n"  # lines 7-11
        'password = "FakePassw0rd!"\n'  # line 12
    )
    findings = scan(text)
    assert [(f.type, f.line, f.preview) for f in findings] == [
        ("openai-api-key", 3, "sk-p"),
        ("email", 6, "alex"),
        ("aws-access-key-id", 6, "AKIA"),
        ("private-key", 7, "----"),
        ("password-assignment", 12, "Fake"),
    ]
    for f in findings:
        assert f.line == text.count("\n", 0, f.start) + 1
    assert [f.start for f in findings] == sorted(f.start for f in findings)
    assert all(a.end <= b.start for a, b in zip(findings, findings[1:]))


def test_offsets_are_characters_not_bytes_after_non_ascii_text() -> None:
    value = "sk-proj-FAKEfake0123456789abcdefGHIJKLmnopqrstUVWX"
    text = f"    12\u2192 café 😀 naïve ✓ — {value} ✓\nnext"
    (finding,) = scan(text)
    assert (finding.start, finding.end) == (text.index(value), text.index(value) + len(value))
    assert mask(text)[0] == text.replace(value, "<REDACTED>")


def test_private_key_block_is_masked_whole_and_surroundings_kept() -> None:
    text = f"before\n{PEM}\nafter"
    masked, findings = mask(text)
    assert masked == "before\n<REDACTED>\nafter"
    assert findings[0].type == "private-key"


def test_private_key_without_end_line_is_masked_to_the_end_of_its_body() -> None:
    """A truncated tool result may cut the block: the body is still masked."""
    text = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{PEM_BODY}"
    masked, findings = mask(text)
    assert [f.type for f in findings] == ["private-key"]
    assert masked == "<REDACTED>"


def test_connection_string_masks_only_the_password() -> None:
    masked, _ = mask("postgres://app_user:FakePassw0rd@db.internal:5432/app?sslmode=require")
    assert masked == "postgres://app_user:<REDACTED>@db.internal:5432/app?sslmode=require"


def test_assignment_masks_only_the_value_not_the_name() -> None:
    masked, findings = mask('settings = {"client_secret": "FAKEfakeSecret42", "timeout": 30}')
    assert masked == 'settings = {"client_secret": "<REDACTED>", "timeout": 30}'
    assert findings[0].preview == "FAKE"


def test_overlapping_rules_give_one_finding_with_the_specific_type() -> None:
    cases = {
        f"Authorization: Bearer {JWT}": ("jwt", JWT),
        'OPENAI_API_KEY="sk-proj-FAKEfake0123456789abcdefGHIJKLmnopqrstUVWX"':
            ("openai-api-key", "sk-proj-FAKEfake0123456789abcdefGHIJKLmnopqrstUVWX"),
        "https://x-access-token:ghs_FAKEfake0123456789abcdefGHIJKLmnopqr@github.com/dev/app":
            ("github-token", "ghs_FAKEfake0123456789abcdefGHIJKLmnopqr"),
        "GITHUB_TOKEN=ghp_FAKEfake0123456789abcdefGHIJKLmnopqr":
            ("github-token", "ghp_FAKEfake0123456789abcdefGHIJKLmnopqr"),
    }
    for text, (kind, value) in cases.items():
        findings = scan(text)
        assert [(f.type, text[f.start : f.end]) for f in findings] == [(kind, value)], text


def test_masking_is_idempotent_for_both_placeholders() -> None:
    text = "\n".join(t for _, t, _ in SECRETS)
    for placeholder in ("<REDACTED>", "[REDACTED]"):
        once, findings = mask(text, placeholder)
        assert len(findings) == len(SECRETS)
        twice, again = mask(once, placeholder)
        assert again == []
        assert twice == once


def test_extract_raw_placeholder_is_used_verbatim() -> None:
    masked, _ = mask("key AKIAFAKE0123456789AB here", placeholder="[REDACTED]")
    assert masked == "key [REDACTED] here"


def test_report_lines_exact_wording() -> None:
    text = "x\nOPENAI_API_KEY=sk-proj-FAKEfake0123456789abcdefGHIJKLmnopqrstUVWX\nmail alex.sample@mailbox-fixture.net"
    assert report_lines(scan(text), "Established Facts") == [
        "Redaction: detected 2 potential secret(s) in Established Facts.",
        "Flagged: openai-api-key at line 2: sk-p...",
        "Flagged: email at line 3: alex...",
    ]


def test_report_lines_is_empty_without_findings() -> None:
    assert report_lines([], "Decision Log") == []


def test_report_never_shows_a_whole_value() -> None:
    text = "\n".join(t for _, t, _ in SECRETS)
    findings = scan(text)
    report = "\n".join(report_lines(findings, "state file"))
    for f in findings:
        value = text[f.start : f.end]
        assert len(value) > len(f.preview) == 4
        assert value not in report


def test_short_values_are_not_flagged_so_the_preview_cannot_be_the_whole_value() -> None:
    assert scan('password = "abcd"') == []
    assert [f.type for f in scan('password = "abcde"')] == ["password-assignment"]


def test_finding_is_frozen_and_slotted() -> None:
    f = Finding("email", 1, 0, 5, "abcd")
    with pytest.raises(AttributeError):
        f.line = 2  # type: ignore[misc]
    assert not hasattr(f, "__dict__")


def test_empty_text() -> None:
    assert scan("") == []
    assert mask("") == ("", [])


SECRET_PIECES = [t for _, t, _ in SECRETS]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(SECRET_PIECES), st.sampled_from(LOOKALIKES),
                  st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=30)),
        max_size=12,
    )
)
def test_mixed_text_property(pieces: list[str]) -> None:
    """Any mix: findings sorted and disjoint, masking idempotent, every planted value covered."""
    text = "\n".join(pieces)
    masked, findings = mask(text)
    assert all(a.end <= b.start for a, b in zip(findings, findings[1:]))
    assert all(text[f.start : f.start + 4] == f.preview for f in findings)
    assert scan(masked) == []
    values = {piece: value for _, piece, value in SECRETS}
    pos = 0
    for piece in pieces:
        if piece in values:
            start = pos + piece.index(values[piece])
            end = start + len(values[piece])
            assert any(f.start <= start and end <= f.end for f in findings), piece
        pos += len(piece) + 1


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_real_corpus_has_no_false_positives() -> None:
    """The 13 real transcripts hold no real secret; their e-mail addresses were replaced by
    dev@example.com, which is flagged like any address.  Besides it, only two test-fixture literals
    assigned to ``apiKey`` are flagged, on purpose: a quoted literal assigned to a secret name is what a
    real key looks like too.  Nothing else (SHAs, ids, paths, numbers of 2.5 MB of real text) is.
    """
    flagged = set()
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in {".json", ".jsonl"})
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8")
        flagged.update((f.type, text[f.start : f.end]) for f in scan(text))
    assert flagged <= {
        ("email", "dev@example.com"),
        ("secret-assignment", "lin_api_"),
        ("secret-assignment", "lin_api_test123"),
    }


def test_unquoted_values_in_code_versus_literals() -> None:
    """The documented boundary: identifier-like values are variables unless they carry digits."""
    assert [f.type for f in scan("password: hunter22")] == ["password-assignment"]
    # a whole YAML line "password: <word>" is a literal (issue 11); in code the same word is a variable
    assert [f.type for f in scan("db:\n  password: mysecretpassword\n")] == ["password-assignment"]
    assert scan("login({ password: mysecretpassword, user })") == []
    assert scan("  password: hashedPassword") == [] and scan("  password: user_password") == []
    assert [f.type for f in scan("DB_PASSWORD=mysecretpassword")] == ["password-assignment"]
    assert [f.type for f in scan("POSTGRES_PASSWORD: mysecretpassword")] == ["password-assignment"]
