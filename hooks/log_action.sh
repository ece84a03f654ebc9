#!/usr/bin/env bash
# Sophia System 3 — log_action.sh (PostToolUse, PostToolUseFailure).
#
# Appends ONE compact JSONL line per tool call to $SOPHIA_HOME/buffers/<session_id>.jsonl
# (0600): ts, session, tool, id, event, outcome (ok/error), exit (Bash), duration_ms, summary,
# file. session_end.sh turns the buffer into an episode (through sophia.redact); the call's
# args_hash comes from the transcript's copy of the call there (hooks/episode.py judged_buffer).
#
# Pure bash with builtins only (a `tail` only past 64 KiB): it runs after EVERY tool call, so it must
# cost about as much as `bash -c 'cat >/dev/null'`. No Python, no jq. The state home comes from
# hooks/lib/env.sh (sourced: builtins only), as for every hook.
# - Only the first 64 KiB of the payload are scanned; a bigger payload is drained and its
#   last 4 KiB kept (Claude Code puts duration_ms and tool_use_id after tool_response).
# - tool_use_id is taken from the top-level keys before tool_input when it is there (another key
#   order), else from its LAST occurrence (the tool's output may quote the key too).
# - The Bash summary keeps at most the first 3 words of the command, and only words that
#   match a strict whitelist, stopping at the first that does not: secrets (tokens,
#   assignments, quoted strings, URLs) cannot reach the buffer by construction. A leading
#   `cd DIR &&` (or `;`) is skipped: the summary names what ran there, never the folder.
# - Never fails the session: whatever happens, exit 0.
set -euo pipefail
umask 077
trap 'exit 0' EXIT
[[ ${SOPHIA_HOOK_GUARD:-} == 1 ]] && exit 0
here=${BASH_SOURCE[0]%/*}
[[ $here == "${BASH_SOURCE[0]}" ]] && here=.
# shellcheck source=hooks/lib/env.sh
. "$here/lib/env.sh" 2>/dev/null || exit 0
LC_ALL=C

payload=
IFS= read -r -N 65536 payload || true
# The top-level keys before tool_input (session_id, transcript_path, cwd, hook_event_name,
# tool_name...) sit in the first few KiB; the ones after tool_response at the very end.
head=${payload:0:4096}
tail=$payload
last=$payload # where the keys after tool_response are: all that was read, or the drained tail
if ((${#payload} >= 65536)); then
  tail=$(tail -c 4096) || tail=
  last=$tail
elif ((${#payload} > 4096)); then
  tail=${payload:${#payload}-4096}
fi

re_str='"((\\.|[^"\\])*)"'
sp='[[:space:]]*'

# No session id: not a hook payload; nothing to record.
[[ $head =~ \"session_id\"$sp:$sp\"([^\"]+)\" ]] || exit 0
sid=${BASH_REMATCH[1]:0:128}
sid=${sid//[^A-Za-z0-9_-]/}
[[ -n $sid ]] || sid=unknown

tool=unknown
if [[ $head =~ \"tool_name\"$sp:$sp\"([A-Za-z0-9_.:-]+)\" ]] && ((${#BASH_REMATCH[1]} <= 100)); then
  tool=${BASH_REMATCH[1]}
fi

event=PostToolUse
outcome=ok
if [[ $head =~ \"hook_event_name\"$sp:$sp\"PostToolUseFailure\" ]]; then
  event=PostToolUseFailure
  outcome=error
fi

# tool_input: from its key up to tool_response (PostToolUse) or the end of what was read.
# (Prefix removal with a leading * is quadratic in bash: find the key with %% instead.)
pre=${head%%\"tool_input\"*}
ti=
if ((${#pre} < ${#head})); then
  ti=${payload:${#pre}+12:16384}
  ti=${ti%%\"tool_response\"*}
fi
top=${pre%%\"tool_response\"*} # the top-level keys before the tool's input and output

summary=
file=
case $tool in
  Bash)
    re='"command"'$sp:$sp$re_str
    if [[ $ti =~ $re ]]; then
      cmd=${BASH_REMATCH[1]:0:512}
      cmd=${cmd//\\n/ }
      cmd=${cmd//\\t/ }
      # `cd DIR && make test` is summarised by what ran there (`make test`), not by `cd` (at most 3 cd's)
      re_cd='^[[:space:]]*cd[[:space:]]+[^;&|]*(&&|;)(.*)$'
      for _ in 1 2 3; do
        if [[ $cmd =~ $re_cd ]]; then cmd=${BASH_REMATCH[2]}; else break; fi
      done
      re_w1='^[a-z][a-z0-9._+-]*$'
      re_wn='^[a-z][a-z-]*$'
      n=0
      while ((n < 3)) && [[ $cmd =~ ^[[:space:]]*([^[:space:]]+)(.*)$ ]]; do
        w=${BASH_REMATCH[1]}
        cmd=${BASH_REMATCH[2]}
        ((n == 0)) && w=${w##*/}
        if ((n == 0)); then
          if ((${#w} > 24)) || ! [[ $w =~ $re_w1 ]]; then break; fi
        else
          if ((${#w} > 16)) || ! [[ $w =~ $re_wn ]]; then break; fi
        fi
        summary+=${summary:+ }$w
        n=$((n + 1))
      done
    fi
    ;;
  Write | Edit | MultiEdit | Read | NotebookEdit)
    re='"(file_path|notebook_path)"'$sp:$sp$re_str
    if [[ $ti =~ $re ]] && ((${#BASH_REMATCH[2]} <= 1024)); then
      file=${BASH_REMATCH[2]}
    fi
    ;;
  Agent | Task)
    if [[ $ti =~ \"subagent_type\"$sp:$sp\"([A-Za-z0-9_:-]+)\" ]] && ((${#BASH_REMATCH[1]} <= 64)); then summary="agent ${BASH_REMATCH[1]}"; fi
    ;;
  Skill)
    if [[ $ti =~ \"(skill|command)\"$sp:$sp\"([A-Za-z0-9_:-]+)\" ]] && ((${#BASH_REMATCH[2]} <= 64)); then summary="skill ${BASH_REMATCH[2]}"; fi
    ;;
esac

exit_code=
if [[ $event == PostToolUseFailure ]]; then
  if [[ $tail =~ \"error\"$sp:$sp\"Exit\ code\ ([0-9]+) ]] && ((${#BASH_REMATCH[1]} <= 3)); then exit_code=${BASH_REMATCH[1]}; fi
  if [[ $tail =~ \"is_interrupt\"$sp:$sp(true) ]]; then summary+="${summary:+ }[interrupted]"; fi
elif [[ $tool == Bash ]]; then
  exit_code=0
  if [[ $tail =~ \"(exit_code|exitCode|returnCode)\"$sp:$sp([0-9]+) ]] && ((${#BASH_REMATCH[2]} <= 3)); then exit_code=${BASH_REMATCH[2]}; fi
  if [[ $tail =~ \"interrupted\"$sp:$sp(true) ]]; then outcome=error; fi
  [[ $exit_code == 0 ]] || outcome=error
fi

duration=
if [[ $tail =~ \"duration_ms\"$sp:$sp([0-9]+) ]] && ((${#BASH_REMATCH[1]} <= 10)); then duration=${BASH_REMATCH[1]}; fi
use_id=
re='"tool_use_id"'$sp:$sp'"([A-Za-z0-9_-]+)"'
if [[ $top =~ $re ]]; then
  use_id=${BASH_REMATCH[1]}
else
  # its last occurrence: % (shortest suffix) scans from the end, linear (a leading-* # is quadratic)
  rest=${last%\"tool_use_id\"*}
  rest=${last:${#rest}}
  if [[ $rest =~ ^$re ]]; then use_id=${BASH_REMATCH[1]}; fi
fi
((${#use_id} <= 100)) || use_id=

now=$EPOCHREALTIME
TZ=UTC0 printf -v ts '%(%Y-%m-%dT%H:%M:%S)T' "${now%.*}"
ts+=".${now:${#now}-6:3}Z"

dir=$SOPHIA_HOME/buffers
[[ -d $dir ]] || mkdir -p "$dir" 2>/dev/null || exit 0

line="{\"ts\":\"$ts\",\"session\":\"$sid\",\"tool\":\"$tool\",\"event\":\"$event\",\"outcome\":\"$outcome\""
[[ -z $use_id ]] || line+=",\"id\":\"$use_id\""
[[ -z $exit_code ]] || line+=",\"exit\":$exit_code"
[[ -z $duration ]] || line+=",\"duration_ms\":$duration"
[[ -z $summary ]] || line+=",\"summary\":\"$summary\""
[[ -z $file ]] || line+=",\"file\":\"$file\""
printf '%s}\n' "$line" >>"$dir/$sid.jsonl" 2>/dev/null || true
exit 0
