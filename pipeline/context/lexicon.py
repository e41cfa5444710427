"""Word families the CONTEXT.md translation classifies by (DESIGN.md "Translation (rigid map)"; issue 26).

Each family is a closed class of function words and verbs, in English, Portuguese, Spanish, Chinese, Korean and
Japanese, that marks a *structure* rather than a topic:

* ``SESSION_VERBS`` / ``EDIT_VERBS``: actions of one working session (commit, push, run, retry, continue …;
  edit, fix, add, implement …).  A decision headed by one of them is about this session's work unless something
  lasting is said about it;
* ``DEICTIC``: words that point at this session's things (these changes, that error, it, the above, 这些, 이거, これ,
  isso, eso);
* ``LASTING``: what makes a statement hold beyond the session (instead of, every, always, by default, from now on,
  so that …); ``ONE_OFF``: what ties it to now (for now, first, yet, this time, 先, 일단, とりあえず, por enquanto);
* ``RULE_START`` / ``PROHIBITION``: a standing rule (never, always, must; don't touch / commit / push X);
* ``CAUSE``, ``ENVIRONMENT``, ``GENERAL``: a fact that explains or holds (because, root cause, port, version,
  does not, every …); ``PROGRESS``: a report of what this session did (fixed, 12 tests passing, clean);
* ``QUESTION`` / ``OFFER``: a question, and an assistant's offer to do something ("shall I …?", "要我…吗");
* ``GOAL``: the user naming a goal or a priority ("the goal is", "目标是", "목표는", "o objetivo é").

Patterns are compiled lazily (``lazy_re``) so importing the context package costs nothing on the hook paths.
Nothing here is tuned to one session's wording: every family lists the function words of its structure.
"""

from __future__ import annotations

import re

from pipeline.lazyre import lazy_re

_I = re.IGNORECASE


def inflect(bases: str) -> str:
    """A regex alternation of English verbs and their -s/-es/-ed/-ing forms (``run`` -> run|runs|ran…).

    ``bases``: space-separated base forms; irregular forms are listed by the caller.  Doubling of a final
    consonant (``commit`` -> ``committing``) and a dropped final ``e`` (``change`` -> ``changing``) are generated.
    """
    forms: set[str] = set()
    for base in bases.split():
        forms |= {base, base + "s", base + "es", base + "ed", base + "d", base + "ing"}
        if base.endswith("e"):
            forms |= {base[:-1] + "ing", base[:-1] + "ed"}
        if re.search(r"[^aeiou][aeiou][bdgmnprt]$", base):
            forms |= {base + base[-1] + "ing", base + base[-1] + "ed"}
        if base.endswith("y"):
            forms |= {base[:-1] + "ies", base[:-1] + "ied"}
    return "|".join(sorted((re.escape(f) for f in forms), key=len, reverse=True))


#: Actions that only exist inside a working session: version control, running things, flow control.
SESSION_VERB_BASES = (
    "commit recommit push pull merge rebase stage unstage stash checkout cherry-pick squash amend tag "
    "run rerun execute launch start restart stop kill terminate test retest build rebuild compile recompile "
    "deploy redeploy install reinstall uninstall sync retry continue proceed resume delete remove clean clear "
    "undo revert reset download upload send print show list read open close try do finish complete approve "
    "accept publish release lint format save"
)
SESSION_VERBS_EN = inflect(SESSION_VERB_BASES) + "|ran|did|done|sent|shown|read|go ahead|go on|carry on|keep going"
#: Changes to the project that are one step of this session unless a lasting reason or marker comes with them.
EDIT_VERB_BASES = (
    "edit change modify touch update fix patch add implement create write rewrite refactor rename move copy "
    "generate regenerate bump upgrade downgrade ask answer explain summarize investigate search look check "
    "verify review debug document"
)
EDIT_VERBS_EN = inflect(EDIT_VERB_BASES) + "|wrote|written|made"

SESSION_VERBS_LATIN = (
    # Portuguese
    r"commitar|comitar|commite|comite|fa[zç]a\s+(?:o\s+)?(?:commit|push|deploy|merge)|fazer\s+(?:o\s+)?(?:commit|push|deploy|merge)|"
    r"envie|enviar|mescle|mesclar|rode|rodar|execute|executar|executa|implante|implantar|instale|instalar|sincronize|"
    r"sincronizar|tente\s+de\s+novo|continue|continuar|prossiga|prosseguir|siga|seguir|comece|come[cç]ar|apague|apagar|"
    r"delete|deletar|remova|remover|limpe|limpar|desfa[cç]a|desfazer|reverta|reverter|teste|testar|compile|compilar|"
    r"publique|publicar|baixe|baixar|reinicie|reiniciar|pare|parar|"
    # Spanish
    r"commitea|commitear|haz\s+(?:el\s+)?(?:commit|push|deploy|merge)|hacer\s+(?:el\s+)?(?:commit|push|deploy|merge)|"
    r"sube|subir|fusiona|fusionar|ejecuta|ejecutar|corre|correr|despliega|desplegar|instala|instalar|sincroniza|"
    r"reintenta|reintentar|contin[uú]a|procede|proceder|sigue|empieza|empezar|borra|borrar|elimina|eliminar|limpia|"
    r"deshaz|deshacer|revierte|revertir|prueba|probar|compila|compilar|publica|descarga|descargar|reinicia|"
    r"reiniciar|det[eé]n|detener"
)
EDIT_VERBS_LATIN = (
    r"corrija|corrigir|conserte|consertar|arrume|arrumar|edite|editar|altere|alterar|modifique|modificar|mude|mudar|"
    r"atualize|atualizar|adicione|adicionar|crie|criar|implemente|implementar|escreva|escrever|renomeie|renomear|"
    r"mova|mover|documente|documentar|verifique|verificar|revise|revisar|"
    r"arregla|arreglar|corrige|corregir|edita|cambia|cambiar|modifica|actualiza|actualizar|agrega|agregar|a[nñ]ade|"
    r"a[nñ]adir|crea|crear|implementa|escribe|escribir|renombra|renombrar|mueve|documenta|documentar|verifica|"
    r"revisa"
)
#: CJK verbs of the same two classes; in Korean and Japanese the verb comes last, so these match anywhere.
SESSION_VERBS_CJK = (
    r"提交|推送|合并|运行|执行|跑一下|部署|安装|同步|重试|继续|开始|删除|清理|撤销|回滚|测试一下|构建|编译|重启|发布|"
    r"커밋|푸시|머지|병합|실행|돌려|배포|설치|동기화|재시도|계속|진행해|시작|삭제|정리|되돌|빌드|컴파일|재시작|"
    r"コミット|プッシュ|マージ|実行|デプロイ|インストール|同期|再試行|続け|進め|開始|削除|元に戻|ビルド|コンパイル|再起動"
)
EDIT_VERBS_CJK = (
    r"修复|修正|修改|改一下|更新|添加|加上|创建|实现|重写|重做|重新|重构|改名|检查|确认|"
    r"수정|고쳐|고치|변경|업데이트|추가|생성|구현|다시\s*작성|다시\s*만들|리팩터|확인|검토|"
    r"修正|直して|直す|変更|更新|追加|作成|実装|書き換|書き直|作り直|やり直|リファクタ|確認"
)

SESSION_VERB_LATIN = lazy_re(rf"(?:{SESSION_VERBS_EN}|{SESSION_VERBS_LATIN})\b", _I)
EDIT_VERB_LATIN = lazy_re(rf"(?:{EDIT_VERBS_EN}|{EDIT_VERBS_LATIN})\b", _I)
SESSION_VERB_CJK = lazy_re(SESSION_VERBS_CJK)
EDIT_VERB_CJK = lazy_re(EDIT_VERBS_CJK)
CJK = lazy_re(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")

#: Leading words before the head verb of a request ("ok, let's commit", "sim, pode rodar", "好的，请提交").
LEAD_IN = lazy_re(
    r"^(?:(?:ok(?:ay)?|yes|yeah|yep|sure|alright|great|good|fine|please|pls|now|then|just|also|and|so|"
    r"let'?s|let\s+us|go\s+ahead\s+and|can\s+you|could\s+you|would\s+you|you\s+can|we\s+(?:can|should|need\s+to)|"
    r"sim|s[ií]|claro|beleza|pode|podes|por\s+favor|vamos|ent[aã]o|agora|ahora|bueno|vale|dale|puedes|"
    r"好的?|请|那就|然后|现在|네|좋아요?|그럼|이제|はい|では|じゃあ|お願いします)[\s,，、.!！:：]*)+",
    _I,
)

DEICTIC = lazy_re(
    r"\b(?:this|that|these|those|it|them|all|everything|both|either|above|following|same)\b|"
    r"\b(?:isso|isto|esse|essa|este|esta|esses|essas|estes|estas|tudo|aquilo|eso|esto|ese|esa|esos|esas|estos|todo)\b|"
    r"这些|那些|这个|那个|这|那|它|所有|全部|上面|以上|该|"
    r"이것|그것|이거|그거|이|그|저|모두|전부|위의|"
    r"これら|それら|これ|それ|あれ|この|その|あの|上記|全部|すべて",
    _I,
)
#: Nouns that a question or a decision needs a real subject besides (``which approach?`` names nothing).
GENERIC_NOUNS = frozenset(
    "approach approaches option options one ones way ways method methods thing things choice choices version "
    "step steps idea ideas solution solutions plan plans change changes error errors issue issues fix fixes "
    "prefer like want go proceed next recommended recommendation do does".split()
)

LASTING = lazy_re(
    r"\b(?:instead\s+of|rather\s+than|in\s+favou?r\s+of|so\s+that|every(?:\s+time)?|each|always|never|"
    r"by\s+default|from\s+now\s+on|going\s+forward|whenever|automatically|on\s+every|for\s+all|based\s+on|"
    r"depending\s+on|no\s+longer|anymore|permanently)\b|"
    r"\b(?:em\s+vez\s+de|ao\s+inv[eé]s\s+de|no\s+lugar\s+de|sempre|cada|toda\s+vez|por\s+padr[aã]o|"
    r"daqui\s+(?:em\s+diante|pra\s+frente)|a\s+partir\s+de\s+agora|automaticamente|nunca|jamais|"
    r"en\s+lugar\s+de|en\s+vez\s+de|siempre|por\s+defecto|de\s+ahora\s+en\s+adelante|a\s+partir\s+de\s+ahora|"
    r"autom[aá]ticamente|jam[aá]s)\b|"
    r"而不是|代替|改用|改为|换成|总是|每次|始终|永远|默认|以后都|今后|一律|自动|"
    r"대신|말고|항상|매번|언제나|기본값|앞으로|자동으로|"
    r"代わりに|ではなく|常に|毎回|いつも|デフォルト|今後|自動で|自動的",
    _I,
)
ONE_OFF = lazy_re(
    r"\b(?:for\s+now|right\s+now|yet|this\s+time|for\s+the\s+moment|temporarily|today|again|first)\b|"
    r"\b(?:por\s+enquanto|por\s+agora|agora|ainda|desta\s+vez|de\s+novo|primeiro|hoje|por\s+ahora|ahora|"
    r"todav[ií]a|a[uú]n|esta\s+vez|primero|hoy)\b|"
    r"先|暂时|这次|本次|今天|再|먼저|일단|이번|오늘|다시|先に|まず|とりあえず|今回|今日|もう一度",
    _I,
)
#: Words that tie a text to this one conversation.
THIS_SESSION = lazy_re(
    r"\bthis\s+(?:conversation|session|chat|task|turn|prompt|run|pr|branch)\b|"
    r"\b(?:nesta|esta|desta)\s+(?:conversa|sess[aã]o|tarefa|conversaci[oó]n|sesi[oó]n)\b|"
    r"本次|这次对话|이번\s*(?:대화|세션|작업)|今回の(?:会話|セッション|作業)",
    _I,
)

#: A rule starts with one of these (in its own clause): never, always, must …
RULE_START = lazy_re(
    r"^(?:(?:you|we|agents?|everyone|contributors?|devs?|developers?)\s+)?(?:should\s+|must\s+|shall\s+)?"
    r"(?:never|always|only\s+ever|under\s+no\s+circumstances|at\s+all\s+times)\b|"
    r"^(?:you|we|agents?|everyone|contributors?|devs?|developers?)\s+(?:must(?:\s+not|n'?t)?|shall\s+not|"
    r"should\s+not|shouldn'?t|may\s+not)\b|"
    r"^(?:prefer\s+.+\s+(?:over|to)\s+)|^(?:from\s+now\s+on|going\s+forward)\b|"
    r"^(?:nunca|sempre|jamais|jam[aá]s|siempre|toda\s+vez\s+que|cada\s+vez\s+que|sempre\s+que)\b|"
    r"^(?:voc[eê]|n[oó]s|t[uú]|ustedes?)\s+(?:deve|devem|debe|deben|nunca|sempre|siempre)\b|"
    r"^(?:prefira\s+.+\s+a|prefiere\s+.+\s+a)\s|"
    # CJK: a deontic word, or a word for "always" with an imperative or deontic ending in the same clause
    r"(?:永远不要|绝不|绝对不要|禁止|不得|务必|请勿|一律不)|(?:总是|始终|每次都?|一律).*(?:要|请|应该|应当)|"
    r"(?:절대|반드시|금지)|(?:항상|언제나|매번).*(?:하세요|해야|해라|할\s*것|하자|합시다|하십시오)|"
    r"(?:絶対に?|禁止|してはいけない|してはならない)|(?:常に|いつも|毎回|必ず).*(?:ください|すること|しなさい|しましょう|べき)",
    _I,
)
#: A prohibition of touching a named part of the project: "don't touch X", "do not commit X", "não mexa em X".
PROHIBITION = lazy_re(
    r"^(?:please\s+)?(?:do\s+not|don'?t|never)\s+(?:ever\s+)?"
    r"(?:touch|modify|change|edit|break|commit|push|delete|remove|rename|move|install|upgrade|downgrade|bump|"
    r"merge|deploy|disable|skip|bypass|hard-?code|expose|log|store|check\s+in|rewrite|force-push)\b\s*(?P<object>\S.*)|"
    r"^(?:por\s+favor,?\s+)?n[aã]o\s+(?:mexa|modifique|altere|edite|quebre|commite|fa[cç]a\s+(?:commit|push)|envie|"
    r"apague|delete|remova|toque|suba)\b\s*(?P<pt>\S.*)|"
    r"^(?:por\s+favor,?\s+)?no\s+(?:toques|modifiques|cambies|edites|rompas|hagas\s+(?:commit|push)|subas|borres|"
    r"elimines|despliegues)\b\s*(?P<es>\S.*)|"
    r"(?:不要|别|请勿|不许|不准)(?:去)?(?:修改|改动|动|碰|提交|推送|删除|破坏|上传|合并)|"
    r"(?:수정|변경|바꾸|고치|건드리|커밋|푸시|삭제|깨뜨리|올리)\S*\s*(?:하지\s*마|지\s*마|말아|말자|맙시다|않도록|금지)|"
    r"(?:変更|修正|触ら|触れ|コミット|プッシュ|削除|壊さ)\S*(?:ないで|ないこと|するな|禁止)",
    _I,
)
#: Uppercase RFC 2119 keywords: the language of a specification or a prompt template, not of a user's rule.
RFC_KEYWORD = lazy_re(r"\b(?:MUST|SHALL|SHOULD|REQUIRED|MUST NOT|SHALL NOT)\b")
#: A text that speaks of the user in the third person was written for the agent (a prompt), not by the user.
THE_USER = lazy_re(
    r"\b(?:the|a)\s+user(?:'s)?\b|\buser\s+input\b|\bo\s+usu[aá]rio\b|\bel\s+usuario\b|用户|사용자|ユーザー", _I
)

CAUSE = lazy_re(
    r"\b(?:because|due\s+to|caused\s+by|root\s+cause|the\s+(?:issue|problem|cause|reason|culprit|bug)\s+"
    r"(?:is|was|here\s+is)\s+(?:that|:)|turns?\s+out|turned\s+out|the\s+fix\s+(?:is|was))\b|"
    r"\b(?:porque|devido\s+a|por\s+causa|a\s+causa|o\s+motivo|debido\s+a|a\s+causa\s+de|la\s+causa|el\s+motivo)\b|"
    r"因为|由于|原因|导致|根因|때문|원인|탓에|ため|原因|せいで",
    _I,
)
ENVIRONMENT = lazy_re(
    r"\b(?:port|ports|listens?|version|versions|installed|not\s+installed|requires?|needs?|default|environment|"
    r"container|virtualenv|venv|conda|PATH|env(?:ironment)?\s+var(?:iable)?s?|externally\s+managed|config(?:ured|uration)?|"
    r"runs\s+on|only\s+works|not\s+available|unavailable|(?:set|configured|defined)\s+in)\b|"
    r"\.(?:ya?ml|toml|ini|env|cfg|conf)\b|\bv\d+(?:\.\d+)+(?!\d)|\b\d+\.\d+\.\d+(?!\d)|"
    r"\b[A-Z][\w.+-]*\s+v?\d+(?:\.\d+)+(?!\d)|(?:>=|<=|==|~=|\^)\s*\d+(?:\.\d+)+|:\d{4,5}\b|"
    r"\b(?:porta|vers[aã]o|padr[aã]o|ambiente|precisa|configura[cç][aã]o|instalad[oa]|puerto|versi[oó]n|"
    r"por\s+defecto|entorno|necesita|configuraci[oó]n)\b|"
    r"端口|版本|默认|环境|需要|配置|安装|포트|버전|기본|환경|필요|설정|설치|ポート|バージョン|デフォルト|環境|必要|設定|インストール",
    _I,
)
GENERAL = lazy_re(
    r"\b(?:quirk|gotcha|caveat|beware|careful|note\s+that|does\s+not|doesn'?t|do\s+not\s+carry|cannot|can'?t|"
    r"won'?t|never|always|every|whenever|carry\s+over|not\s+persist|instead)\b|"
    r"\b(?:n[aã]o\s+funciona|n[aã]o\s+pode|sempre|nunca|no\s+funciona|no\s+puede|siempre)\b|"
    r"不会|不能|总是|每次|只能|안\s*됩니다|안\s*돼|않습니다|항상|매번|できない|しない|常に|毎回",
    _I,
)
PROGRESS = lazy_re(
    r"^(?:(?:successfully\s+)?(?:fixed|modified|updated|replaced|created|added|removed|resolved|implemented|"
    r"committed|pushed|refactored|renamed|moved|cleaned|deleted|wrote|finished|completed|merged|deployed|"
    r"installed|verified|confirmed|tested|ran|reverted|corrigi|atualizei|criei|adicionei|removi|corregí|"
    r"actualicé|creé|agregué|eliminé)\b)|"
    r"\b\d+\s*(?:/\s*\d+\s*)?(?:tests?\s+)?(?:passing|passed|failing|failed)\b|"
    r"\b(?:tests?\s+pass(?:es|ed)?|all\s+(?:tests\s+)?pass(?:ing)?|working\s+tree\s+(?:is\s+)?clean|"
    r"(?:is|are)\s+(?:now\s+)?(?:working|fixed|resolved|done|green)(?:\s+(?:again|now))?|now\s+works|"
    r"no\s+(?:\w+\s+){0,4}(?:found|detected|remaining)|nothing\s+to\s+commit)\b|"
    r"^(?:已|已经)|(?:했습니다|했어요|완료)|(?:しました|完了)|"
    r"^(?:working\s+on|now\s+working\s+on|currently)\b|"
    r"^(?:where\s+we\s+are|status|current\s+state|progress|summary|result|outcome|next\s+steps?|onde\s+estamos|"
    r"estado|resumo|resultado|"
    r"resumen|当前状态|进度|현재\s*상태|進捗|現状)\s*[:：]",
    _I,
)
NARRATION = lazy_re(
    r"^(?:I|I'?m|I'?ll|I'?ve|I\s+need|I\s+will|let\s+me|now\s+I|we'?ll\s+now|next,?\s+I)\b|"
    r"^(?:vou|deixe-me|voy\s+a|déjame|tenho|posso|consigo|estou|fiz|preciso|tengo|puedo|estoy|hice|necesito)\b|^(?:我来|我将|我会|让我|我看到|我发现|我注意到|我需要|我先|我已经|我们需要)|"
    r"^(?:제가|이제\s*제가|확인해\s*보니|먼저\s*확인)|^(?:私が|では、?私|確認したところ|まず確認)|"
    r"\bI'?ll\s+(?:flag|check|keep|watch|monitor|look)\b|\bI\s+(?:need|have|want|am\s+going)\s+to\b|\blet\s+me\b",
    _I,
)
QUESTION = lazy_re(r"[?？]\s*[)\"'”’]*\s*$|[吗呢]\s*[。.]?\s*$|(?:까요|나요|습니까|가요)\s*[.。]?\s*$|(?:ですか|ますか|でしょうか)\s*[。.]?\s*$")
OFFER = lazy_re(
    r"\b(?:would\s+you\s+like\s+(?:me|us)\s+to|do\s+you\s+want\s+(?:me|us)\s+to|want\s+me\s+to|shall\s+I|"
    r"should\s+I|should\s+we\s+(?:now\s+)?(?:proceed|continue|go\s+ahead|commit|push|run|start)|may\s+I|"
    r"can\s+I|ready\s+(?:for\s+me\s+)?to|ready\s+when)\b|"
    r"\b(?:quer\s+que\s+eu|devo|posso|quieres\s+que|debo|puedo)\b|"
    r"要我|需要我|我来|要不要我|제가\s*.*(?:할까요|드릴까요)|(?:할까요|드릴까요)|(?:しましょうか|しますか|いたしましょうか)",
    _I,
)
GOAL = lazy_re(
    r"(?:^|[.!?;]\s+|\n)\s*(?:(?:our|the|my|main|primary|overall|end)\s+)*(?:goal|aim|objective|priority|"
    r"top\s+priority|target)s?[ \t]*(?:is|are|:|=)[ \t]*(?P<en>[^\n]+?)(?=[.!?;]\s|[.!?;]?$|\n)|"
    r"(?:^|[.!?;]\s+|\n)\s*(?:o\s+(?:nosso\s+)?objetivo|a\s+(?:nossa\s+)?meta|a\s+prioridade|el\s+(?:nuestro\s+)?objetivo|"
    r"la\s+meta|la\s+prioridad|nuestro\s+objetivo|nossa\s+prioridade)[ \t]*(?:é|es|:)[ \t]*(?P<latin>[^\n]+?)(?=[.!?;]\s|[.!?;]?$|\n)|"
    r"(?:目标|目的|首要任务|优先级?)(?:是|：|:)[ \t]*(?P<zh>[^。！？\n]+)|"
    r"(?:목표|목적|우선순위)(?:는|은|:)[ \t]*(?P<ko>[^.。!?\n]+)|"
    r"(?:目標|目的|優先(?:順位|事項)?)(?:は|：|:)[ \t]*(?P<ja>[^。！？\n]+)",
    _I,
)
#: A text that leans on the sentence before it ("So …", "It …", "… will therefore …") is a fragment of a message.
ANAPHORIC = lazy_re(
    r"^(?:so|thus|therefore|hence|this|that|these|those|it|they|then|also|and|but|which|instead|otherwise)\b|"
    r"\b(?:therefore|thus|hence)\b|^(?:portanto|ent[aã]o|isso|isto|em\s+vez\s+disso|por\s+lo\s+tanto|entonces|eso|"
    r"esto|en\s+cambio)\b|^(?:因此|所以|这|那|它|相反|反而)|^(?:따라서|그래서|그러므로|이것|그것|대신)|"
    r"^(?:そのため|したがって|だから|これ|それ|代わりに)",
    _I,
)
#: A guess is no established fact: likely, probably, might, seems, 可能, 아마, たぶん, provavelmente …
HEDGE = lazy_re(
    r"\b(?:likely|probably|possibly|perhaps|maybe|might|seems?\s+to|I\s+think|I\s+suspect|could\s+be|may\s+be|"
    r"provavelmente|talvez|possivelmente|probablemente|quiz[aá]s|tal\s+vez)\b|"
    r"可能|也许|大概|似乎|아마|것\s*같|듯합니다|たぶん|おそらく|かもしれ|ようです",
    _I,
)
#: A statement that a choice was made, in the other languages (English cues live in ``migrate.CUES``).
DECIDED = lazy_re(
    r"\b(?:decidimos|decidi|decid[ií]|optamos|optei|escolhemos|elegimos|usamos|utilizamos|adotamos|adoptamos|"
    r"mudamos\s+para|cambiamos\s+a|trocamos|en\s+lugar\s+de|em\s+vez\s+de)\b|"
    r"决定|选择了|选用|采用|改用|使用了|而不是|"
    r"결정|선택했|사용하기로|하기로\s*했|대신|"
    r"決定|採用|使うことに|にしました|ではなく",
    _I,
)
#: Work left for later, in the other languages (English cues live in ``migrate.CUES``).
DEFERRED = lazy_re(
    r"\b(?:por\s+enquanto|tempor[aá]ri[oa]|provis[oó]ri[oa]|pendente|d[ií]vida\s+t[eé]cnica|por\s+ahora|temporal|"
    r"provisional|pendiente|deuda\s+t[eé]cnica)\b|暂时|临时|待办|待修复|技术债|일단|임시|나중에|기술\s*부채|とりあえず|暫定|"
    r"後で|技術的負債",
    _I,
)
