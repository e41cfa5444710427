"""What of a state file belongs in CONTEXT.md (pipeline.context.classify; DESIGN.md "Translation (rigid map)",
revised 2026-12-04; issue 26).

Every family is checked on phrasings written for this test (several wordings, several languages), never on a
development session's own words: the classification reads structure, so it must hold for sessions nobody here saw.
"""

from __future__ import annotations

import pytest

from pipeline.context import classify as c

# --- decisions: lasting choice vs procedural approval -------------------------------------------------------

PROCEDURAL = [
    ("APPROVED", "push the branch now", 'user approved ("yes")'),
    ("APPROVED", "go ahead", 'user approved ("ok")'),
    ("APPROVED", "rerun the failing tests", 'user approved ("sure")'),
    ("APPROVED", "fix that lint warning", 'user approved ("yes")'),
    ("APPROVED", "commit these two files", 'user approved ("do it")'),
    ("APPROVED", "pode commitar as alterações", 'user approved ("sim")'),
    ("APPROVED", "rode os testes de novo", 'user approved ("sim")'),
    ("APPROVED", "haz commit de esto", 'user approved ("dale")'),
    ("APPROVED", "ejecuta la migración", 'user approved ("sí")'),
    ("APPROVED", "提交这些修改", 'user approved ("好")'),
    ("APPROVED", "继续", 'user approved ("好")'),
    ("APPROVED", "이거 커밋해줘", 'user approved ("네")'),
    ("APPROVED", "배포 진행해", 'user approved ("네")'),
    ("APPROVED", "この変更をプッシュして", 'user approved ("はい")'),
    ("APPROVED", "テストを実行して", 'user approved ("はい")'),
    ("REJECTED", "delete the old fixtures", "user declined the tool call"),
    ("REJECTED", "apague a pasta dist", "user declined the tool call"),
]


@pytest.mark.parametrize(("status", "what", "reasoning"), PROCEDURAL)
def test_procedural_approvals_are_left_out_in_any_language(status, what, reasoning):
    verdict = c.decision(status, what, reasoning)
    assert verdict.target is None
    assert verdict.reason == (c.PROCEDURAL if status == "APPROVED" else c.DECLINED_ACTION)


LASTING = [
    ("APPROVED", "Postgres 16 for the audit log", "it has logical replication"),
    ("APPROVED", "use SQLite instead of Postgres for local runs", 'user approved ("yes")'),
    ("APPROVED", "run migrations automatically on every deploy", 'user approved ("yes")'),
    ("APPROVED", "modify the loader so that it always reads UTF-8", 'user approved ("yes")'),
    ("APPROVED", "add a retry queue between the API and the mailer", "mail bursts time out the API"),
    ("REJECTED", "MongoDB", "no transactions across collections"),
    ("APPROVED", "usar Redis em vez de Memcached", "já temos Redis em produção"),
    ("APPROVED", "Parquet para os relatórios", "colunar e comprimido"),
    ("APPROVED", "usar pnpm en lugar de npm", "instala más rápido"),
    ("APPROVED", "用 SQLite 而不是 MySQL", "单机部署"),
    ("APPROVED", "采用 gRPC", "服务之间需要流式调用"),
    ("APPROVED", "JSON 대신 MessagePack 사용", "메시지가 작아진다"),
    ("APPROVED", "RESTではなくGraphQLを使う", "画面ごとに必要な項目が違う"),
]


@pytest.mark.parametrize(("status", "what", "reasoning"), LASTING)
def test_lasting_choices_go_to_decisions_in_any_language(status, what, reasoning):
    assert c.decision(status, what, reasoning) == c.Verdict("Decisions", text=what)


@pytest.mark.parametrize(("what", "reason"), [
    ("running `rm -rf dist/`", c.DECLINED_ACTION),
    ("the `terraform apply -auto-approve` command", c.DECLINED_ACTION),
    ("executing `npm publish --tag next`", c.DECLINED_ACTION),
])
def test_declined_commands_are_left_out(what, reason):
    assert c.decision("REJECTED", what, "user declined the tool call").reason == reason


@pytest.mark.parametrize("what", ["the plan: Migrate auth to OAuth", "计划: 重构数据层", "o plano: migrar o banco"])
def test_plan_approvals_are_a_task_list(what):
    assert c.decision("APPROVED", what, "user approved the plan").reason == c.PLAN


@pytest.mark.parametrize(("what", "reason"), [
    ("[option chosen]", c.PLACEHOLDER), ("2", c.NO_SUBJECT), ("either", c.NO_SUBJECT), ("this one", c.NO_SUBJECT),
    ("isso", c.NO_SUBJECT), ("这个", c.NO_SUBJECT),
    ("not to decide yet", c.TEMPORARY), ("por enquanto sem cache", c.TEMPORARY), ("暂时不加缓存", c.TEMPORARY),
    ("I need to look at the logs", c.NARRATION), ("The user will review this later", c.PROMPT_TEXT),
    ("show your reasoning first", c.REQUEST),
])
def test_non_choices_are_left_out_with_their_reason(what, reason):
    assert c.decision("APPROVED", what, "").reason == reason


def test_a_question_tools_json_answer_is_read_as_its_answer():
    verdict = c.decision("APPROVED", '{"answers": {"0": "Server-sent events"}}', "user's answer")
    assert verdict == c.Verdict("Decisions", text="Server-sent events")
    assert c.decision("APPROVED", "Server-sent events (Recommended)", "").text == "Server-sent events"


# --- facts: rule, term, durable fact, one-off -----------------------------------------------------------------

RULES = [
    ("never force-push to release branches", "never force-push to release branches"),
    ("always run the linter before committing", "always run the linter before committing"),
    ("don't touch the generated protobuf files, they come from the schema repo",
     "don't touch the generated protobuf files, they come from the schema repo"),
    ("merge it here, but never deploy on Fridays", "never deploy on Fridays"),
    ("You must not log access tokens", "You must not log access tokens"),
    ("nunca faça deploy na sexta-feira", "nunca faça deploy na sexta-feira"),
    ("não mexa no módulo de pagamentos", "não mexa no módulo de pagamentos"),
    ("nunca subas secretos al repositorio", "nunca subas secretos al repositorio"),
    ("no toques la carpeta vendor", "no toques la carpeta vendor"),
    ("永远不要直接推送到 main 分支", "永远不要直接推送到 main 分支"),
    ("不要修改 vendor 目录", "不要修改 vendor 目录"),
    ("절대 main 브랜치에 직접 푸시하지 마세요", "절대 main 브랜치에 직접 푸시하지 마세요"),
    ("本番DBは絶対に直接変更しないでください", "本番DBは絶対に直接変更しないでください"),
]


@pytest.mark.parametrize(("fact", "rule"), RULES)
def test_user_rules_go_to_conventions_in_any_language(fact, rule):
    assert c.fact(fact) == c.Verdict("Conventions", text=rule)


@pytest.mark.parametrize("fact", [
    "Do not push.", "don't push yet", "stick to the api layer", "não faça push agora", "no hagas commit todavía",
    "Keep the answer short.", "Do not ask the user to repeat it.", "Agents MUST read the spec before coding",
    "The layout must feel modern and fast.", "Assume you always have the file available in this conversation.",
])
def test_one_off_requests_and_prompt_text_are_no_rules(fact):
    assert c.fact(fact).target != "Conventions"


TERMS = [
    ("SKU: stock keeping unit, the id of one sellable variant", ("SKU", "stock keeping unit, the id of one sellable variant")),
    ("a tenant means one paying customer account", ("a tenant", "one paying customer account")),
    ("RPO stands for recovery point objective", ("RPO", "recovery point objective")),
    ("lote significa um conjunto de pedidos enviados juntos", ("lote", "um conjunto de pedidos enviados juntos")),
    ("租户是指一个付费客户账号", ("租户", "一个付费客户账号")),
    ("テナントとは課金される顧客アカウントのことです", ("テナント", "課金される顧客アカウントのことです")),
]


@pytest.mark.parametrize(("fact", "term"), TERMS)
def test_terms_the_session_defined_go_to_the_glossary(fact, term):
    verdict = c.fact(fact)
    assert (verdict.target, verdict.term, verdict.text) == ("Glossary", *term)


@pytest.mark.parametrize("fact", [
    "`npm ci`: installs exactly what the lockfile pins",
    "Fix: use the bash prefix in the setup script",
    "Redis port: 6380 in the dev container",
    "`git add src/app.py` failed (fatal: pathspec 'src/app.py' did not match any files); `cd api` worked",
])
def test_commands_labels_and_values_are_no_terms(fact):
    assert c.fact(fact).target != "Glossary"


DURABLE = [
    "the API listens on port 8443 in staging",
    "Redis port: 6380 in the dev container",
    "Root cause: the cron job runs in UTC, so the daily report shifts by one day",
    "`pytest` failed (bash: pytest: command not found); `uv run pytest` worked",
    "`rm -rf build` was blocked (hook: dangerous rm command); `rm -r build/tmp` worked",
    "The upload fails for files over 10 MB because nginx keeps its default client_max_body_size",
    "O Postgres local roda na porta 5433",
    "A causa era o fuso horário do servidor",
    "La causa fue que el servidor usa UTC",
    "原因是服务器时区设置为 UTC",
    "원인은 캐시 만료 시간이 너무 짧았기 때문입니다",
    "原因はタイムゾーンの設定でした",
]


@pytest.mark.parametrize("fact", DURABLE)
def test_durable_facts_go_to_notes_in_any_language(fact):
    assert c.fact(fact) == c.Verdict("Notes", text=fact)


ONE_OFF = [
    ("`git push` failed (rejected: non-fast-forward)", c.ONE_OFF_FAILURE),
    ("`npm test` failed (TypeError: x is undefined); `npm test` worked", c.ONE_OFF_FAILURE),
    ("`write_file src/a.py` was blocked: you are in plan mode", c.ONE_OFF_FAILURE),
    ("12 tests passing", c.PROGRESS),
    ("Fixed the import order in app.py", c.PROGRESS),
    ("Corrigi a ordem dos imports", c.PROGRESS),
    ("Pasted log: Traceback (most recent call last):", c.PASTED),
    ("| case | before | after |", c.PASTED),
    ("I'll check the logs next", c.NARRATION),
    ("Let me look at the failing test.", c.NARRATION),
    ("The error is `KeyError: 'id'`", c.ONE_OFF_FAILURE),
    ("The build is probably broken by the stale cache", c.GUESS),
    ("可能是缓存的问题", c.GUESS),
    ("So the second call never happens", c.FRAGMENT),
    ("그래서 두 번째 호출이 실행되지 않습니다", c.FRAGMENT),
    ("Copilot CLI reported: model error: rate limited", c.HARNESS),
]


@pytest.mark.parametrize(("fact", "reason"), ONE_OFF)
def test_one_off_facts_are_left_out_with_their_reason(fact, reason):
    assert c.fact(fact).reason == reason


# --- remaining items: question vs work item ---------------------------------------------------------------------

@pytest.mark.parametrize(("item", "question"), [
    ("Should refunds share the checkout bucket?", "Should refunds share the checkout bucket?"),
    ("Waiting for the user: Which region hosts the EU tenants?", "Which region hosts the EU tenants?"),
    ("退款是否应该共用同一个限流桶？", "退款是否应该共用同一个限流桶？"),
    ("환불도 같은 버킷을 써야 하나요?", "환불도 같은 버킷을 써야 하나요?"),
    ("Os reembolsos usam o mesmo limite?", "Os reembolsos usam o mesmo limite?"),
])
def test_unanswered_questions_go_to_open_questions(item, question):
    assert c.remaining(item) == c.Verdict("Open-Questions", text=question)


@pytest.mark.parametrize(("item", "reason"), [
    ("Would you like me to add tests for the parser?", c.OFFER),
    ("Shall I open the PR now?", c.OFFER),
    ("要我继续写测试吗？", c.OFFER),
    ("Quer que eu adicione os testes?", c.OFFER),
    ("Which one do you prefer?", c.NO_SUBJECT),
    ("Push the branch and open a PR", c.STEP),
    ("Rode os testes de novo", c.STEP),
    ("重新部署一次", c.STEP),
    ("Get `npm run e2e` passing: last run failed — [Request interrupted by user]", c.INTERRUPTED),
    ("Configure your API keys in `.env`", c.FOR_THE_USER),
])
def test_offers_and_session_steps_are_left_out(item, reason):
    assert c.remaining(item).reason == reason


@pytest.mark.parametrize(("item", "kind"), [
    ("Add an index on orders.created_at", "todo"),
    ("Get `npm test` passing: last run failed — 3 failures", "fix"),
    ("Raise the test coverage of the parser", "test"),
    ("Get `make release` succeeding: last run failed — Exit code 2", "fix"),
    ("Document the RATE_LIMIT_* settings in docs/configuration.md", "docs"),
    ("修复登录页的错误", "fix"),
    ("문서에 설정 방법 추가", "docs"),
    ("Rotate the leaked staging credentials", "security"),
    ("Ask the partner team whether 40 requests per bucket is enough", "todo"),
])
def test_unfinished_work_goes_to_deferred_debt_with_a_type(item, kind):
    assert c.remaining(item) == c.Verdict("Deferred-Debt", text=item, type=kind)


# --- goals --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("workflow", "goal"), [
    ("Add rate limiting. The goal is a p95 under 300 ms during the sale.", "The goal is a p95 under 300 ms during the sale"),
    ("Our priority: no partner can starve the others", "Our priority: no partner can starve the others"),
    ("重构构建脚本。目标是把构建时间降到五分钟以内。", "目标是把构建时间降到五分钟以内"),
    ("o objetivo é suportar 10 mil usuários simultâneos", "o objetivo é suportar 10 mil usuários simultâneos"),
    ("목표는 첫 화면을 1초 안에 띄우는 것", "목표는 첫 화면을 1초 안에 띄우는 것"),
])
def test_goals_only_from_explicit_words(workflow, goal):
    assert c.goals(workflow) == [goal]


@pytest.mark.parametrize("workflow", [
    "Add rate limiting to the checkout API and write tests.",
    "Task 2026-01-06T15:44:48Z: deploy and test\nTask 2026-01-06T16:53:30Z: update the deploy script",
    "Goal:\n- Turn the working tree into meaningful commits",
    "The goal is to commit these changes",
])
def test_a_task_list_has_no_goal(workflow):
    assert c.goals(workflow) == []


@pytest.mark.parametrize("what", [
    "add a retry with exponential backoff to the client wrapper, keyed by an idempotency key",
    "implement the cache using Redis hashes",
    "adicionar uma fila de reenvio com backoff exponencial",
])
def test_an_approved_edit_that_names_how_the_project_works_is_a_decision(what):
    """An approval of a proposal ("yes, do that") is a decision when the edit names a mechanism (DESIGN.md: user
    approvals of a proposal); "fix that error" names none."""
    assert c.decision("APPROVED", what, 'user approved ("yes, do that")').target == "Decisions"
    assert c.decision("APPROVED", "fix that error with the linter", 'user approved ("yes")').target is None


@pytest.mark.parametrize("fact", [
    "When the page scrolls, the header must stay visible so it is never cut off",
    "The export should finish in under a minute",
    "O relatório deve mostrar o total por cliente",
    "エクスポートは1分以内に終わるべきです",
])
def test_a_requirement_of_the_task_is_no_finding(fact):
    assert c.fact(fact).reason == c.REQUIREMENT


def test_a_command_blocked_for_a_session_reason_is_no_trap():
    assert c.fact("`git commit -m x` was blocked: fatal: cannot lock ref 'HEAD': Unable to create 'HEAD.lock'").reason \
        == c.ONE_OFF_FAILURE


def test_a_word_of_the_command_that_worked_does_not_make_a_failure_a_trap():
    fact = ("`git checkout main` failed (CONFLICT (content): Merge conflict in app.log); "
            "`git commit -m \"Hook cleanup\"` worked")
    assert c.fact(fact).reason == c.ONE_OFF_FAILURE


@pytest.mark.parametrize(("fact", "reason"), [
    ("Manual follow-ups: release date is still unset in the changelog", c.OBSERVATION),
    ("Where we are: the dev server throws on every page request", c.PROGRESS),
    ("我看到接口已经返回了数据，所以不需要转换。", c.NARRATION),
    ("확인해 보니 설정 파일이 없습니다", c.NARRATION),
])
def test_labels_statuses_and_narration_are_no_terms_or_facts(fact, reason):
    assert c.fact(fact).reason == reason


@pytest.mark.parametrize(("fact", "reason"), [
    ("The docs folder doesn't exist, so I need to create it first.", c.NARRATION),
    ("Working on branch `042-search`; numbering began at 042", c.PROGRESS),
    ("Result: the build number now increments on every make", c.PROGRESS),
    ('"summary": "two endpoints return the wrong payload shape",', c.PASTED),
])
def test_status_lines_json_and_the_agents_plans_are_left_out(fact, reason):
    assert c.fact(fact).reason == reason


@pytest.mark.parametrize(("fact", "target"), [
    ("kimodo에서 제공되는 파일 이름은 바꾸지 말자.", "Conventions"),
    ("항상 테스트를 먼저 돌리고 커밋하세요", "Conventions"),
    ("常にmainブランチから作業を始めてください", "Conventions"),
    ("`format` が `Form` ではなくクエリ扱いだったため常に `wav` が適用されていました", "Notes"),
    ("每次构建都会把版本号加一，因为脚本在 make 里运行", "Notes"),
])
def test_cjk_always_is_a_rule_only_with_an_imperative(fact, target):
    assert c.fact(fact).target == target


@pytest.mark.parametrize("fact", [
    "This: when the handler returns false the CLI prints the token as unknown",
    "Tenho integração direta com o terminal e posso testar o servidor",
])
def test_deictic_terms_and_the_assistants_self_description_are_left_out(fact):
    assert c.fact(fact).target is None


def test_a_status_label_is_no_term():
    assert c.fact("Outstanding: non-functional details (logging, limits) are still light.").target != "Glossary"
    assert c.fact("Pendente: a tradução do manual").target != "Glossary"
