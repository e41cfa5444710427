"""Decision Log from the shape of the dialogue (issue 13 §1.1, §1.3, §2): plan lists the assistant carried out,
scope exclusions, recommendation headings approved by the user, replies that echo a proposal question, and a
user's own "X or Y?" answered by the assistant.  Invented sentences in several domains and languages.
"""

from __future__ import annotations

import pytest

from test_rules_decisions import decisions_of, rows
from rules_builder import B


# --- "X instead of Y for Z (why)": the purpose goes with the chosen option -------------------------------
@pytest.mark.parametrize(
    "sentence, approved, rejected, reason",
    [
        ("Using a trie instead of a hash map for prefix lookups (ordered keys, no rehashing).",
         "a trie for prefix lookups", "a hash map", "ordered keys, no rehashing"),
        ("I'll use WAL mode instead of the rollback journal for the audit database because readers never block.",
         "WAL mode for the audit database", "the rollback journal", "readers never block"),
        ("Going with server-sent events instead of polling for the status page, since it halves the requests.",
         "server-sent events for the status page", "polling", "it halves the requests"),
    ],
)
def test_purpose_after_the_alternative_goes_with_the_choice(sentence, approved, rejected, reason):
    b = B()
    b.user("Speed up the search box.")
    b.asst(f"I read the module. {sentence}")
    got = rows(decisions_of(b))
    assert got[0] == ("APPROVED", approved, reason)
    assert got[1][:2] == ("REJECTED", rejected)


# --- a plan list the assistant then carried out ---------------------------------------------------------------
PLANS = [
    (
        "The flaky upload has two causes.\n\nI'll fix both by:\n"
        "- Adding a retry wrapper around `put_object()` to survive the S3 503s\n"
        "- Run the tests\n",
        ("APPROVED", "adding a retry wrapper around `put_object()`", "to survive the S3 503s"),
    ),
    (
        "Vou corrigir assim:\n"
        "- Adicionar um índice em `pedidos.cliente_id` para evitar a varredura completa\n",
        ("APPROVED", "adicionar um índice em `pedidos.cliente_id`", "para evitar a varredura completa"),
    ),
    (
        "修改方案：\n"
        "- 添加 `max_connections=8` 限制，以避免数据库连接耗尽\n",
        ("APPROVED", "添加 `max_connections=8` 限制", "以避免数据库连接耗尽"),
    ),
]


@pytest.mark.parametrize("message, expected", PLANS)
def test_plan_list_carried_out_is_a_decision(message, expected):
    b = B()
    b.user("Fix it.")
    b.asst(message)
    b.edit("src/shop/storage.py")
    got = rows(decisions_of(b))
    assert got == [expected]


def test_plan_list_without_action_is_only_a_proposal():
    b = B()
    b.user("Fix it.")
    b.asst(PLANS[0][0] + "\nShould I go ahead?")
    assert decisions_of(b) == []


# --- a scope exclusion the assistant then carried out ---------------------------------------------------------
@pytest.mark.parametrize(
    "sentence, what",
    [
        ("Now I need to drop the legacy tables (not the audit_log table).",
         "drop the legacy tables, not the audit_log table"),
        ("Let me reformat the Go files (keeping the generated protobuf code as is).",
         "reformat the Go files, keeping the generated protobuf code as is"),
        ("Voy a borrar las imágenes antiguas (sin los logotipos).", "borrar las imágenes antiguas, not los logotipos"),
        ("我要删除旧的迁移文件（不包括 0001_initial.py）。", "删除旧的迁移文件, not 0001_initial.py"),
    ],
)
def test_scope_exclusion_carried_out(sentence, what):
    b = B()
    b.user("Clean up the repo.")
    b.asst(sentence)
    b.bash("rm -rf old/", "")
    got = decisions_of(b)
    assert [(d.status, d.what) for d in got] == [("APPROVED", what)]


def test_scope_exclusion_not_acted_on_is_nothing():
    b = B()
    b.user("Clean up the repo.")
    b.asst("I'll drop the legacy tables (not the audit_log table).")
    b.user("wait")
    assert decisions_of(b) == []


# --- a recommendation heading, then the user's go-ahead ------------------------------------------------------
@pytest.mark.parametrize(
    "heading, body, what",
    [
        ("### Recommended layout:", "Instead of 9 microservices, merge them into **3 services**:",
         "merge them into 3 services instead of 9 microservices"),
        ("**Proposed fix**", "Pin `numpy<2` in requirements.txt until the wheels catch up.",
         "Pin `numpy<2` in requirements.txt until the wheels catch up"),
        ("## Propuesta recomendada", "En lugar de cron, usar un temporizador de systemd por servicio.",
         "usar un temporizador de systemd por servicio instead of cron"),
    ],
)
def test_recommendation_heading_approved(heading, body, what):
    b = B()
    b.user("Review the deployment plan.")
    b.asst(f"Review done.\n\n{heading}\n\n{body}\n\n1. first part\n2. second part\n\nThat keeps it simpler.")
    b.user("ok, make the edits")
    assert [(d.status, d.what, d.origin) for d in decisions_of(b)] == [("APPROVED", what, "user-approval")]


def test_recommendation_heading_without_a_reply_is_not_approved():
    b = B()
    b.user("Review the deployment plan.")
    b.asst("### Recommended layout:\n\nMerge them into 3 services.\n\nWhich one would you prefer?")
    assert decisions_of(b) == []


# --- a reply that echoes the proposal question accepts it ----------------------------------------------------
@pytest.mark.parametrize(
    "question, reply, what",
    [
        ("Quer que eu comece a migrar o banco de dados para o Postgres?", "migra então o banco",
         "comece a migrar o banco de dados para o Postgres"),
        ("¿Quieres que genere el informe de cobertura ahora?", "genera el informe", "genere el informe de cobertura ahora"),
        ("Shall I regenerate the lockfile?", "regenerate the lockfile then", "regenerate the lockfile"),
    ],
)
def test_reply_echoing_the_question_approves(question, reply, what):
    b = B()
    b.user("Check the project.")
    b.asst(f"I looked at everything. {question}")
    b.user(reply)
    assert [(d.status, d.what) for d in decisions_of(b)] == [("APPROVED", what)]


@pytest.mark.parametrize("reply", ["não migra o banco", "don't regenerate the lockfile", "regenerate the lockfile?"])
def test_echo_with_a_negation_or_a_question_is_no_approval(reply):
    b = B()
    b.user("Check the project.")
    b.asst("I looked at everything. Shall I regenerate the lockfile? Quer que eu migre o banco?")
    b.user(reply)
    assert [d.status for d in decisions_of(b)] != ["APPROVED"]


# --- the user's own "X or Y?" answered by the assistant, then accepted ---------------------------------------
@pytest.mark.parametrize(
    "question, answer, reply, kept, dropped",
    [
        ("should we store sessions in redis or memcached?",
         "Redis fits better here. Memcached has no persistence, so a restart logs everyone out. Shall I add Redis?",
         "yes", "redis", "memcached"),
        ("qual é melhor pra gerar os gráficos, plotly ou matplotlib?",
         "Para este caso o plotly é melhor. O matplotlib não gera gráficos interativos no navegador. Quer que eu use o plotly?",
         "sim", "plotly", "matplotlib"),
        ("用 celery 还是 rq？",
         "这里推荐 rq。celery 需要单独的 broker 配置，没有必要。要我改成 rq 吗？",
         "好的", "celery", "rq"),
    ],
)
def test_users_or_question_answered_and_accepted(question, answer, reply, kept, dropped):
    b = B()
    b.user(question)
    b.asst(answer)
    b.user(reply)
    got = [(d.status, d.what) for d in decisions_of(b)]
    if kept == "celery":  # "celery 需要…没有必要": the sentence naming celery turns it down
        kept, dropped = "rq", "celery"
    assert ("APPROVED", kept) in got
    assert ("REJECTED", dropped) in got


def test_users_or_question_with_no_reply_decides_nothing():
    b = B()
    b.user("should we store sessions in redis or memcached?")
    b.asst("Redis fits better here. Memcached has no persistence, so a restart logs everyone out.")
    assert decisions_of(b) == []


# --- a correction: the plan just before is REJECTED, what the user asks instead APPROVED (§1.3) -------------
CORRECTIONS = [
    ("I'll add a Dockerfile and a compose file for the dev database.",
     "Hmm, no Docker for this. Just use a local Postgres.",
     [("REJECTED", "add a Dockerfile and a compose file for the dev database"), ("APPROVED", "a local Postgres")]),
    ("I'll wire up SQLAlchemy models for the orders table.",
     "Thanks, but no ORM. Plain SQL with psycopg is fine.",
     [("REJECTED", "ORM"), ("APPROVED", "Plain SQL with psycopg")]),
    ("I'll put the thumbnails on the local disk of each web node.",
     "actually, let's store them in the object bucket",
     [("REJECTED", "put the thumbnails on the local disk of each web node"), ("APPROVED", "store them in the object bucket")]),
    ("I'll rewrite the nightly report in Rust.",
     "Ok. Actually, no Rust: use the existing Go worker instead.",
     [("REJECTED", "rewrite the nightly report in Rust"), ("APPROVED", "the existing Go worker")]),
    ("We'll keep the session tokens in Memcached.",
     "Não, os tokens precisam sobreviver a reinícios. Use o Postgres.",
     [("REJECTED", "keep the session tokens in Memcached"), ("APPROVED", "o Postgres")]),
]


@pytest.mark.parametrize("plan, reply, expected", CORRECTIONS)
def test_correction_rejects_the_plan_and_approves_the_replacement(plan, reply, expected):
    b = B()
    b.user("Work on the reporting service.")
    b.asst(f"I read the code. {plan}")
    b.user(reply)
    got = decisions_of(b)
    # the plan sentence itself is logged too when it is a plan in the agent's own verbs, marked as reversed
    assert all(d.reasoning.endswith("(later rejected)") for d in got if d.evidence.event_index == 1 and d.status == "APPROVED")
    assert [(d.status, d.what) for d in got if not d.reasoning.endswith("(later rejected)")] == expected


@pytest.mark.parametrize("reply", ["No problem, go ahead.", "Actually, also add a test for it.", "no worries"])
def test_not_a_correction(reply):
    b = B()
    b.user("Work on the reporting service.")
    b.asst("I read the code. I'll rewrite the nightly report in Rust.")
    b.user(reply)
    assert [d.status for d in decisions_of(b) if d.status == "REJECTED"] == []


# --- non-English choices and rejections (§2) ------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("不要用 Kafka，改用 NATS", [("APPROVED", "NATS"), ("REJECTED", "Kafka")]),
        ("vamos usar MinIO em vez de S3", [("APPROVED", "MinIO"), ("REJECTED", "S3")]),
        ("mejor usa pnpm en lugar de npm", [("APPROVED", "pnpm"), ("REJECTED", "npm")]),
        ("Jenkins 말고 GitHub Actions를 쓰자", [("APPROVED", "GitHub Actions"), ("REJECTED", "Jenkins")]),
        ("webpackではなく esbuildを使って", [("APPROVED", "esbuild"), ("REJECTED", "webpack")]),
    ],
)
def test_user_instruction_in_other_languages(text, expected):
    b = B()
    b.user("Set up the build.")
    b.asst("I looked at the repository layout.")
    b.user(text)
    assert sorted((d.status, d.what) for d in decisions_of(b)) == sorted(expected)


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("Vamos usar Parquet em vez de CSV porque os arquivos ficam 5x menores.",
         [("APPROVED", "Parquet", "os arquivos ficam 5x menores"), ("REJECTED", "CSV", "os arquivos ficam 5x menores")]),
        ("我们决定用 Caddy，不用 Nginx，因为证书自动续期。",
         [("APPROVED", "Caddy", "证书自动续期"), ("REJECTED", "Nginx", "证书自动续期")]),
        ("Usaremos Celery en lugar de cron porque necesitamos reintentos.",
         [("APPROVED", "Celery", "necesitamos reintentos"), ("REJECTED", "cron", "necesitamos reintentos")]),
    ],
)
def test_assistant_choice_in_other_languages(sentence, expected):
    b = B()
    b.user("Plan the export job.")
    b.asst(sentence)
    assert rows(decisions_of(b)) == expected


@pytest.mark.parametrize(
    "sentence",
    ["Se usarmos Parquet em vez de CSV, os arquivos ficam menores.", "如果用 Caddy 而不是 Nginx 会更简单吗？",
     "¿Usamos Celery en lugar de cron?", "Vamos usar isso?"],
)
def test_conditional_or_question_in_other_languages_is_no_decision(sentence):
    b = B()
    b.user("Plan the export job.")
    b.asst(sentence)
    assert decisions_of(b) == []


# --- English choice verbs, prose rejections, the reason in the clause before (§2) ------------------------------
@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("We'll proceed with the canary deploy because it limits the blast radius.",
         [("APPROVED", "the canary deploy", "it limits the blast radius")]),
        ("We decided to move forward with protobuf for the event bus since JSON was 40% of the CPU.",
         [("APPROVED", "protobuf for the event bus", "JSON was 40% of the CPU")]),
        ("I'm switching the tokenizer to sentencepiece because the regex one splits emoji.",
         [("APPROVED", "the tokenizer to sentencepiece", "the regex one splits emoji")]),
        ("Changing the retry budget to 3 attempts since the upstream rate-limits us.",
         [("APPROVED", "the retry budget to 3 attempts", "the upstream rate-limits us")]),
        ("The stalls trace back to a full GC every minute; we're going with a smaller heap.",
         [("APPROVED", "a smaller heap", "The stalls trace back to a full GC every minute")]),
        ("We dropped the idea of a shared NFS mount, it breaks file locking.",
         [("REJECTED", "a shared NFS mount", "it breaks file locking")]),
        ("A second replica is not worth it because reads are 2% of the traffic.",
         [("REJECTED", "A second replica", "reads are 2% of the traffic")]),
    ],
)
def test_english_choice_families(sentence, expected):
    b = B()
    b.user("Tune the service.")
    b.asst(f"I profiled it. {sentence}")
    assert rows(decisions_of(b)) == expected


@pytest.mark.parametrize(
    "sentence",
    ["Let me proceed with the next step.", "Either Parquet or Avro would work here.",
     "The lean approach avoided scope creep.", "Keep the API surface minimal."],
)
def test_narration_is_no_decision(sentence):
    b = B()
    b.user("Tune the service.")
    b.asst(sentence)
    assert decisions_of(b) == []


# --- a branch the user rewound away from (Claude Code parentUuid trees, §1.4) ---------------------------------
def _tree(b: B, links: list[tuple[str, str | None]]):
    """Give the built events ``uuid``/``parent_uuid`` in order."""
    t = b.build()
    for ev, (u, p) in zip(t.events, links):
        ev.uuid, ev.parent_uuid = u, p
    return t


def test_sibling_subtree_of_the_last_leaf_is_dropped():
    fork = "sys0"
    from pipeline.stages import distil
    b = B()
    b.user("Add caching to the thumbnail service.")
    b.asst("We're going with Memcached for the thumbnails because it is already deployed.")
    b.edit("src/thumbs/cache.py")
    b.user("Add caching to the thumbnail service, on local disk this time.")
    b.asst("Going with a local disk cache since it needs no new service.")
    b.edit("src/thumbs/disk.py")
    # u1 and u2 are both children of the same earlier record "sys0" (the rewind point)
    t = _tree(b, [("u1", fork), ("a1", "u1"), ("c1", "a1"), ("r1", "c1"), ("u2", fork), ("a2", "u2"), ("c2", "a2"), ("r2", "c2")])
    from pipeline.transcripts.model import Event
    t.events.insert(0, Event(index=0, kind="user_prompt", text="Look at the thumbnail service.", uuid=fork,
                             timestamp="2026-09-01T09:59:00.000Z"))
    for k, ev in enumerate(t.events):
        ev.index = k
    d = distil.run(t)
    assert [x.what for x in d.decisions] == ["a local disk cache"]
    assert not any("cache.py" in item for item in d.position.done)
    assert any("disk.py" in item for item in d.position.done)


def test_dangling_parent_keeps_everything():
    from pipeline.stages import distil
    b = B()
    b.user("Add caching to the thumbnail service.")
    b.asst("We're going with Memcached for the thumbnails because it is already deployed.")
    b.user("Now on local disk.")
    b.asst("Going with a local disk cache since it needs no new service.")
    # the first half hangs off an id no record carries (a compaction dropped it): nothing is provably abandoned
    t = _tree(b, [("u1", "gone-1"), ("a1", "u1"), ("u2", "gone-2"), ("a2", "u2")])
    assert [x.what for x in distil.run(t).decisions] == ["Memcached for the thumbnails", "a local disk cache"]


def test_claude_code_reader_links_events_across_records_without_events(tmp_path):
    import json

    from pipeline.transcripts import read_transcript

    def line(uuid, parent, role, text, **kw):
        rec = {"parentUuid": parent, "isSidechain": False, "type": role, "uuid": uuid, "sessionId": "s1",
               "timestamp": "2026-09-01T10:00:00.000Z", "cwd": "/w", "version": "2.1.89",
               "message": {"role": role, "content": [{"type": "text", "text": text}]}}
        if role == "assistant":
            rec["message"].update(id="m-" + uuid, model="claude")
        rec.update(kw)
        return json.dumps(rec)

    f = tmp_path / "s1.jsonl"
    f.write_text("\n".join([
        line("u1", None, "user", "Add caching."),
        line("a1", "u1", "assistant", "We're going with Memcached because it is deployed."),
        json.dumps({"type": "progress", "uuid": "p1", "parentUuid": "a1", "sessionId": "s1"}),
        line("u2", "p1", "user", "Use disk instead."),
        line("u3", "gone", "user", "And a TTL of 1h."),
    ]) + "\n")
    ev = read_transcript(str(f)).events
    assert [(e.uuid, e.parent_uuid) for e in ev] == [("u1", None), ("a1", "u1"), ("u2", "a1"), ("u3", "gone")]


# --- an earlier plan in any verb is marked "(later rejected)" when reversed (§1.4) ------------------------------
@pytest.mark.parametrize(
    "plan, reversal, first",
    [
        ("We'll keep the session tokens in Memcached for now.",
         "Memcached doesn't keep tokens across restarts, so I'm switching to Postgres instead.",
         "keep the session tokens in Memcached"),
        ("Caching thumbnails on the local disk of each node.",
         "Local disk caching breaks behind the load balancer, so we're going with the shared bucket instead of local disk.",
         "cache thumbnails on the local disk of each node"),
        ("Vamos usar Redis em vez de Postgres para as filas porque é mais rápido.",
         "Não vamos usar Redis, porque perde mensagens quando reinicia.",
         "Redis"),
    ],
)
def test_reversed_plan_is_marked_later_rejected(plan, reversal, first):
    b = B()
    b.user("Build the session store.")
    b.asst(plan)
    b.bash("make test", "ok")
    b.asst(reversal)
    got = decisions_of(b)
    head = [d for d in got if d.what == first]
    assert head and head[0].status == "APPROVED" and head[0].reasoning.endswith("(later rejected)")


def test_plan_nobody_reversed_is_not_logged():
    b = B()
    b.user("Build the session store.")
    b.asst("We'll keep the session tokens in Memcached for now.")
    assert decisions_of(b) == []


# --- noise out (§3) ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sentence",
    ["Let's keep the config minimal.", "Let's keep the exporter backwards compatible.", "Let's keep the schema flat."],
)
def test_keep_x_minimal_approves_nothing(sentence):
    b = B()
    b.user("Tidy the exporter.")
    b.asst(sentence)
    assert decisions_of(b) == []


@pytest.mark.parametrize(
    "sentence, what",
    [
        ("Let's use the cache but key it on the user id.", "the cache"),
        ("We're going with sqlc but generate it in CI.", "sqlc"),
        ("Let's stick with Flask but move the views into blueprints.", "Flask"),
    ],
)
def test_what_stops_before_but(sentence, what):
    b = B()
    b.user("Tidy the exporter.")
    b.asst(sentence)
    assert [d.what for d in decisions_of(b)] == [what]


@pytest.mark.parametrize(
    "first, second",
    [
        ("We're going with Redis for the counters because it is shared.",
         "Going with Redis for the rate-limit counters since it is shared across pods."),
        ("I settled on zstd for the archives because it is faster.", "Settled on zstd for the nightly archives, it decompresses 3x faster."),
        ("Vamos usar Parquet em vez de CSV porque é menor.", "Vamos usar Parquet em vez de CSV porque os arquivos ficam menores."),
    ],
)
def test_near_duplicates_collapse(first, second):
    b = B()
    b.user("Tidy the exporter.")
    b.asst(first)
    b.asst(second)
    approved = [d for d in decisions_of(b) if d.status == "APPROVED"]
    assert len(approved) == 1


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("The per-tenant schema design would work but is overly complex for 40 customers.",
         [("REJECTED", "The per-tenant schema design", "overly complex for 40 customers")]),
        ("A cron job would work, but it's too fragile for retries.", [("REJECTED", "A cron job", "too fragile for retries")]),
        ("The regex parser works but is way too slow on 10 MB inputs.",
         [("REJECTED", "The regex parser", "way too slow on 10 MB inputs")]),
    ],
)
def test_works_but_too_complex_is_a_prose_rejection(sentence, expected):
    b = B()
    b.user("Tune the service.")
    b.asst(f"I compared the options. {sentence}")
    assert rows(decisions_of(b)) == expected


@pytest.mark.parametrize("sentence", ["Polling would work but is it too slow?", "It would work but is too slow."])
def test_works_but_as_a_question_or_pronoun_is_nothing(sentence):
    b = B()
    b.user("Tune the service.")
    b.asst(sentence)
    assert decisions_of(b) == []
