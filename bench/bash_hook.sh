#!/usr/bin/env bash
# bench/bash_hook.sh: a RE-CREATION, for measurement only, of the bash+jq pre-compact hook duck-tape replaced.
#
# The original hook is not in this repository.  This script does the same job the same way, so that `make bench`
# can time duck-tape against it in the same run (issue 14) instead of quoting an old figure.  It is not shipped,
# installed or tested as a product; nothing in pipeline/ calls it.
#
# What it does, as the old one did:
#   * reads the Claude Code PreCompact hook payload (JSON) on stdin: transcript_path, cwd (trigger is recorded);
#   * skips transcripts over 5 MiB (marker only), the size check the old hook had.  The bench lifts the cap with
#     BASH_HOOK_MAX_BYTES=<bytes> so that the script really reads the big files;
#   * extracts with jq, one pass over the JSONL per section, what the old extractor produced (DESIGN.md "Raw
#     material"): user prompts, tool calls as `<name> on <target>`, the last 10 assistant messages, potential
#     decisions (grep of decision words in assistant text, deduplicated), failed tool results (named after their
#     call), session metadata (start, cwd, branch); every item one line, `N. <timestamp>: <text>`, cut at 2000
#     characters (cut, then whitespace collapsed);
#   * writes it as a markdown state file <cwd>/.duck-tape/<YYYY-MM-DD-HHMM>-auto.state.md (temp file + rename),
#     a .gitignore holding `*`, and the marker <cwd>/.duck-tape/.last-compact
#     (`<ISO-8601> | cwd: <path> | latest-state: <file> | transcript: <path>`);
#   * never fails its harness: exit 0, problems as one line on stderr.
# No secret masking (the old hook had none).
#
# usage: echo '{"transcript_path": "...", "cwd": "..."}' | BASH_HOOK_MAX_BYTES=2000000000 bench/bash_hook.sh
set -u

say() { printf 'bash-hook: %s\n' "$*" >&2; }

payload=$(cat)
transcript=$(jq -r '.transcript_path // empty' <<<"$payload" 2>/dev/null) || transcript=""
cwd=$(jq -r '.cwd // empty' <<<"$payload" 2>/dev/null) || cwd=""
trigger=$(jq -r '.trigger // "auto"' <<<"$payload" 2>/dev/null) || trigger="auto"
[ -n "$cwd" ] || cwd=$PWD
max_bytes=${BASH_HOOK_MAX_BYTES:-5242880}

store="$cwd/.duck-tape"
mkdir -p "$store" 2>/dev/null || { say "cannot create $store"; exit 0; }
[ -f "$store/.gitignore" ] || printf '*\n' >"$store/.gitignore"
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)

marker() {  # marker() [state file name]
    local line="$now | cwd: $cwd"
    [ -n "${1:-}" ] && line="$line | latest-state: $1"
    [ -n "$transcript" ] && line="$line | transcript: $transcript"
    printf '%s\n' "$line" >"$store/.last-compact.tmp" && mv -f "$store/.last-compact.tmp" "$store/.last-compact"
}

if [ -z "$transcript" ] || [ ! -f "$transcript" ] || [ -L "$transcript" ]; then
    say "no readable transcript (${transcript:-none}); marker only"
    marker
    exit 0
fi
size=$(stat -c %s "$transcript" 2>/dev/null || echo 0)
if [ "$size" -gt "$max_bytes" ]; then
    say "transcript is $size bytes, over the $max_bytes byte cap; marker only"
    marker
    exit 0
fi

# One line of text: cut at 2000 characters, whitespace collapsed (in that order: jq 1.6 gsub is slow on long text).
JQ_DEFS='def one: .[0:2000] | gsub("\\s+"; " ") | ltrimstr(" ") | rtrimstr(" ");
def texts: if type == "string" then . elif type == "array" then [.[] | select(.type? == "text") | .text] | join(" ")
           else "" end;
def target: (.input // {}) as $i
  | ($i.file_path // $i.notebook_path // $i.command // $i.pattern // $i.url // $i.query // $i.path // $i.description
     // (if $i.todos then "\($i.todos | length) todos" else null end) // "") | tostring | one;'

number() { awk '{ printf "%d. %s\n", NR, $0 }'; }

prompts() {
    jq -r "$JQ_DEFS"'
      select(.type == "user" and (.isSidechain | not) and (.isMeta | not))
      | (.message.content | texts | one) as $t | select($t != "") | "\(.timestamp): \($t)"' "$transcript" | number
}

tool_calls() {
    jq -r "$JQ_DEFS"'
      select(.type == "assistant" and (.isSidechain | not)) | .timestamp as $ts
      | .message.content[]? | select(.type? == "tool_use") | "\($ts): \(.name) on \(target)"' "$transcript" | number
}

assistant_texts() {
    jq -r "$JQ_DEFS"'
      select(.type == "assistant" and (.isSidechain | not)) | .timestamp as $ts
      | [.message.content[]? | select(.type? == "text") | .text] | join(" ") | one | select(. != "")
      | "\($ts): \(.)"' "$transcript"
}

decisions() {
    cat "$texts" \
        | grep -iE "\b(approved|rejected|decided|decision|chose|chosen|going with|settled on|switch(ing|ed) to|ruled out|opt(ing|ed) for|instead of|rather than|didn'?t work because)\b" \
        | awk '{ key = $0; sub(/^[^ ]+ /, "", key); if (!(key in seen)) { seen[key] = 1; print } }' | number
}

failures() {  # a failed result is named after its call: carry the calls seen so far (id -> "name on target")
    jq -n -r "$JQ_DEFS"'
      foreach (inputs | select(.isSidechain | not)) as $l ({calls: {}, out: null};
        .out = null
        | if $l.type == "assistant" then
            reduce ($l.message.content[]? | select(.type? == "tool_use")) as $c (.; .calls[$c.id] = "\($c.name) on \($c | target)")
          elif $l.type == "user" and ($l.message.content | type) == "array" then
            .calls as $calls
            | .out = [$l.message.content[] | select(.type? == "tool_result" and .is_error == true)
                      | "\($l.timestamp): \($calls[.tool_use_id] // "tool"): \(.content | texts | one)"]
          else . end;
        .out[]?)' "$transcript" | number
}

metadata() {
    local start mcwd branch
    start=$(jq -r 'select(.timestamp) | .timestamp' "$transcript" | head -n 1)
    mcwd=$(jq -r 'select(.cwd) | .cwd' "$transcript" | head -n 1)
    branch=$(jq -r 'select(.gitBranch) | .gitBranch' "$transcript" | tail -n 1)
    printf -- '- Start: %s\n- Cwd: %s\n- Branch: %s\n' "${start:-unknown}" "${mcwd:-unknown}" "${branch:-unknown}"
}

or_none() { local body; body=$(cat); if [ -n "$body" ]; then printf '%s\n' "$body"; else echo None; fi; }

stamp=$(date -u +%Y-%m-%d-%H%M)
name="$stamp-auto.state.md"
tmp="$store/.$name.tmp.$$"
texts="$store/.assistant.tmp.$$"  # the assistant texts, read once for two sections
trap 'rm -f "$texts"' EXIT
{
    printf '# Agent State\n\nSession: %s-auto | Cwd: %s | Trigger: %s\nCreated: %s\n\n' "$stamp" "$cwd" "$trigger" "$now"
    printf '## User Prompts (chronological)\n'; prompts | or_none
    printf '\n## Tool Calls (chronological)\n'; tool_calls | or_none
    assistant_texts >"$texts"
    printf '\n## Assistant Messages (last 10, chronological)\n'; tail -n 10 "$texts" | number | or_none
    printf '\n## Potential Decisions (all matching, chronological, deduped)\n'; decisions | or_none
    printf '\n## Failed Tool Results\n'; failures | or_none
    printf '\n## Session Metadata\n'; metadata
} >"$tmp" 2>/dev/null || { say "could not read $transcript; marker only"; rm -f "$tmp"; marker; exit 0; }
mv -f "$tmp" "$store/$name"
marker "$name"
echo "Wrote $store/$name"
exit 0
