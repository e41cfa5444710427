"""Decisions the assistant states as its own plan and then carries out (issue 13 §1.1/§1.4, §2).

Two dialogue shapes, read the same way in any language:

* **a plan list**: a line in the assistant's own voice that announces a plan and ends with a colon ("I'll fix
  both by:", "Here's the plan:", "Vou corrigir assim:", "我会这样修改：") followed by list items; each item that
  gives its purpose or reason ("… to suppress the noise", "… para evitar …", "…（为了…）") is a choice the
  assistant made;
* **a scope exclusion**: an action sentence in the assistant's voice with a parenthesis or clause that leaves
  something out on purpose ("I need to delete the source files (not the plugin scripts)", "(keeping the
  Justfile)", "(sem os testes)", "（不包括插件脚本）") — what was kept out is part of the decision.

Both count only when the assistant acted on them: a file edit or shell call follows before the next user prompt
(a plan that waits for the user's answer is a proposal, read by ``approvals``).  Status APPROVED, reasoning the
item's own purpose clause; origin ``implicit``.  Items are returned as ``(what, reason, start, end)`` spans of
the message so the caller quotes them.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re
from pipeline.stages.rules import tools
from pipeline.stages.rules.clauses import clean
from pipeline.stages.rules.text import clip, code_ranges, strip_markup

WHAT_LIMIT = 160
ACT_LOOKAHEAD = 12  # events after the message in which the assistant must act

#: a plan lead: first person (or "the plan / the fix") and a colon at the end of the line
_PLAN_LEAD = lazy_re(
    r"^[ \t#>*]*(?:(?:so|now|ok(?:ay)?)\s*,?\s+)?(?:"
    r"(?:I|we)(?:'ll|\s+will|'m\s+going\s+to|\s+am\s+going\s+to|'re\s+going\s+to|\s+plan\s+to|\s+need\s+to)\s+[^\n:]{0,60}|"
    r"(?:here'?s|here\s+is)\s+(?:the|my|our)\s+(?:plan|fix|approach)[^\n:]{0,30}|"
    r"(?:the\s+|my\s+|our\s+)?(?:plan|fix|approach|changes?\s+I'll\s+make)|"
    r"(?:vou|vamos|voy\s+a|vamos\s+a)\s+[^\n:]{0,60}|(?:o|el)\s+plano?|plan|"
    r"(?:我(?:会|将|要|打算)|计划|方案|修复方法|修改方案)[^\n:：]{0,30}|"
    r"(?:以下の|次の|方針|計画)[^\n:：]{0,30}|(?:다음과\s+같이|계획)[^\n:：]{0,30}"
    r")\s*(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*$",
    re.IGNORECASE | re.MULTILINE,
)
_ITEM = lazy_re(r"^[ \t]*(?:[-*+•]|\d{1,2}[.)])[ \t]+(?P<body>\S[^\n]*)$", re.MULTILINE)
#: the purpose or reason of a plan item
_PURPOSE = lazy_re(
    r"\s+(?:to\s+(?=[a-z]+\b)(?!be\b)|so\s+that\s+|because\s+|since\s+|which\s+(?:avoids|keeps|fixes|removes|prevents)\b)"
    r"|\s+(?:para\s+|porque\s+|pois\s+)|\s*[—–]\s+|\s+-\s+|\s*\((?=[^()]{3,}\)\s*$)"
    r"|(?:以便|为了|以|来|因为)|(?:ために|ため|ので)|(?:위해|때문에)",
    re.IGNORECASE,
)
_ITEM_VERB = lazy_re(
    r"^(?:add|adding|use|using|replace|replacing|switch|switching|move|moving|keep|keeping|drop|dropping|remove|removing|"
    r"swap|swapping|split|splitting|cache|caching|wrap|wrapping|store|storing|pin|pinning|make|making|change|changing|"
    r"set|setting|limit|limiting|introduce|introducing|apply|applying|raise|raising|lower|lowering|"
    r"adicionar|usar|trocar|substituir|mover|manter|remover|añadir|agregar|cambiar|reemplazar|mantener|quitar|eliminar|"
    r"添加|增加|使用|改用|替换|移除|删除|保留|追加|使う|置き換え|削除|추가|사용|교체|제거|유지)",
    re.IGNORECASE,
)

#: an action sentence in the assistant's own voice ...
_ACTION = lazy_re(
    r"^(?:(?:so|now|ok(?:ay)?|first|next|then)\s*,?\s+)*(?:I\s+need\s+to|I'll|I\s+will|let\s+me|we'll|we\s+will|we\s+need\s+to|"
    r"I'm\s+going\s+to|vou|vamos|voy\s+a|necesito|preciso|我(?:要|会|需要|先)|私は)\s*(?P<act>.+)$",
    re.IGNORECASE,
)
#: ... that leaves something out on purpose
_EXCLUDE = lazy_re(
    r"\s*[(（]\s*(?P<kw>not|but\s+not|except(?:\s+for)?|excluding|keeping|leaving|without|sem|não|nao|excepto|exceto|salvo|"
    r"sin|no|manteniendo|mantendo|不包括|不含|除了|保留|不动)\s*(?P<y>[^()（）]{2,80}?)\s*[)）]"
    r"|\s*[(（]\s*(?P<y2>[^()（）]{2,60}?)\s*(?P<kw2>제외|を除く|は除く|以外|除外)\s*[)）]",
    re.IGNORECASE,
)
#: the assistant's plan in any verb ("We'll keep tokens in Memcached", "Caching thumbnails on local disk."):
#: logged only when a later entry rejects it (``decisions`` marks it "(later rejected)"), so it costs no noise
_STATED = lazy_re(
    r"^(?:(?:so|ok(?:ay)?|for\s+now|first|then)\s*,?\s+)?(?:(?:we'll|we\s+will|we're\s+going\s+to|I'll|I\s+will|I'm\s+going\s+to|"
    r"let's)\s+(?P<v>keep|store|put|cache|host|run|serve|deploy|save|send|queue|route|persist|use|move|split|shard|pin|"
    r"back|hold|stream|batch|render|compute|fetch|load|mount|expose)\s+|(?P<g>caching|storing|keeping|putting|hosting|"
    r"serving|running|routing|persisting|sharding|pinning|batching|streaming|rendering|mounting)\s+)(?P<x>.+)$",
    re.IGNORECASE,
)
_GERUND = {"caching": "cache", "storing": "store", "keeping": "keep", "putting": "put", "hosting": "host",
           "serving": "serve", "running": "run", "routing": "route", "persisting": "persist", "sharding": "shard",
           "pinning": "pin", "batching": "batch", "streaming": "stream", "rendering": "render", "mounting": "mount"}
_KEEP_KW = frozenset({"keeping", "leaving", "manteniendo", "mantendo", "保留", "不动"})


def acted_after(events, i: int) -> bool:
    """True when the assistant edits a file or runs a shell command after event ``i`` and before the next user
    prompt."""
    for j in range(i + 1, min(len(events), i + 1 + ACT_LOOKAHEAD)):
        ev = events[j]
        if ev.kind == "user_prompt":
            return False
        if ev.kind == "tool_call" and (tools.edit_paths(ev) or tools.command_of(ev)):
            return True
    return False


def _in_code(ranges: list[tuple[int, int]], pos: int) -> bool:
    return any(a <= pos < b for a, b in ranges)


def plan_items(text: str) -> list[tuple[str, str, int, int]]:
    """``(what, reason, start, end)`` for each item with a purpose in a plan list of ``text``."""
    out: list[tuple[str, str, int, int]] = []
    if ":" not in text and "：" not in text:
        return out
    code = code_ranges(text)
    for lead in _PLAN_LEAD.finditer(text):
        if _in_code(code, lead.start()):
            continue
        pos = lead.end() + 1
        while True:
            m = _ITEM.match(text, pos)
            if m is None:
                nl = text.find("\n", pos)  # a blank line between lead and items is allowed once
                if pos == lead.end() + 1 and nl == pos:
                    pos += 1
                    continue
                break
            pos = m.end() + 1
            body = strip_markup(m.group("body").replace("’", "'"))
            if not _ITEM_VERB.match(body):
                continue
            p = _PURPOSE.search(body, 3)
            if p is None:
                continue
            what = clean(body[: p.start()])
            reason = body[p.start():].strip(" -—–(（").rstrip(").）")
            if not what or len(what.split()) > 25 or len(reason) < 6:
                continue
            what = what[0].lower() + what[1:] if what[:1].isupper() and not what[1:2].isupper() else what
            out.append((clip(what, WHAT_LIMIT), clip(clean(reason), 200), lead.start(), m.end()))
    return out


def exclusions(text: str, spans: list[tuple[int, int]]) -> list[tuple[str, str, int, int]]:
    """``(what, reason, start, end)`` for each action sentence that leaves something out on purpose."""
    out: list[tuple[str, str, int, int]] = []
    if "(" not in text and "（" not in text:
        return out
    code = code_ranges(text)
    for a, b in spans:
        sent = text[a:b]
        if "(" not in sent and "（" not in sent or _in_code(code, a):
            continue
        flat = strip_markup(sent.replace("’", "'"))
        m = _ACTION.match(flat)
        if not m:
            continue
        e = _EXCLUDE.search(m.group("act"))
        if not e:
            continue
        act = clean(m.group("act")[: e.start()])
        y = clean(e.group("y") or e.group("y2") or "")
        kw = (e.group("kw") or e.group("kw2") or "").lower()
        if not act or not y or len(act.split()) > 15 or act.endswith("?"):
            continue
        y = re.split(r"\s+(?:which|that|since|because|as(?!\s+is\b))\s+", y, maxsplit=1)[0]
        if kw in _KEEP_KW:
            what = f"{act}, keeping {y}"
        else:
            what = f"{act}, not {y}"
        reason = "scope chosen by the assistant, then carried out"
        out.append((clip(what, WHAT_LIMIT), reason, a, b))
    return out


def stated_plans(text: str, spans: list[tuple[int, int]]) -> list[tuple[str, int, int]]:
    """``(what, start, end)`` of each plan sentence in the assistant's voice ("We'll keep X in Y")."""
    out: list[tuple[str, int, int]] = []
    code = code_ranges(text) if "`" in text else []
    for a, b in spans:
        if b - a > 300 or _in_code(code, a):
            continue
        sent = strip_markup(text[a:b].replace("’", "'")).rstrip()
        if sent.endswith("?"):
            continue
        m = _STATED.match(sent)
        if not m:
            continue
        x = clean(re.split(r"\s+(?:and\s+then|then|so\s+that|because|since)\s+|[;:,]\s", m.group("x"), maxsplit=1)[0])
        verb = (m.group("v") or _GERUND.get((m.group("g") or "").lower(), "")).lower()
        if not x or len(x.split()) < 2 or len(x.split()) > 15 or not verb:
            continue
        out.append((clip(f"{verb} {x}", WHAT_LIMIT), a, b))
    return out
