#!/usr/bin/env bash
# Sophia guardian, tier 1: the PreToolUse hook for Bash, PowerShell, Write, Edit, MultiEdit, NotebookEdit,
# Read, Grep, Glob, WebFetch, WebSearch and MCP tools (mcp__*), and Codex's apply_patch.
#
# First, when the resident analyzer runs (lib/sophia/guardian/resident.py, started by SessionStart or by
# this hook), it answers over loopback TCP (bash builtins only): the analyzer of stage 2, already loaded,
# so the stages below are skipped (see resident_answer). Else, or when it fails in any way, two stages,
# so ordinary commands cost no more than starting bash:
#  1. This script (bash builtins only, no subprocess) reads the payload and looks for risky tokens
#     in the Bash command (rm, dd, git push, curl, psql, sudo, a `$`, a quote inside a word, a
#     sensitive path ...) or, for Write/Edit, in the file path only (the content is data). None
#     found: allow at once (exit 0, no output).
#  2. Otherwise the analyzer decides: "$PY" -I -S lib/sophia/guardian/run.py (standard library
#     only). It parses the shell command and answers with JSON on stdout:
#     {"hookSpecificOutput": {"permissionDecision": "deny"|"ask", "permissionDecisionReason": ...}}
#     or nothing (allow). Deny and ask are always that JSON with exit 0; this hook never exits 1
#     (exit 1 would NOT block in Claude Code).
#
# Codex (its hooks.json runs this as `S3_AGENT=codex .../guardian_tier1.sh`): the same payload shape, plus
# `apply_patch` (always judged: every file its patch names) and an answer in Codex's protocol, where an
# "ask" lets the call run: every ask becomes a deny there (emit_answer), the reason saying so.
#
# Designed failure mode: calls that stage 1 passes never reach Python, so an analyzer failure
# cannot touch them. A call stage 1 flags but the analyzer cannot judge (python3 missing,
# analyzer crash or time-out, garbage output) gets "ask": the user decides; never a silent allow,
# never a traceback. The recursion guard SOPHIA_HOOK_GUARD does NOT disable the guardian.
set -euo pipefail
umask 077

# the payload, in blocks (`read -d ''` reads a pipe one byte per system call: 0.3 s for a 100 KB Write)
read_payload() {
  local LC_ALL=C
  IFS= read -r -N 33554432 payload || true
}
payload=""
read_payload

# Prints the answer in the client's protocol: for Codex (S3_AGENT=codex), which has no "ask" (an ask lets
# the call run there), an ask is a deny that says so. Claude Code's answer is printed as it is.
emit_answer() {
  local a=$1
  if [[ ${S3_AGENT:-} == codex && $a == *'"permissionDecision": "ask"'* ]]; then
    a=${a/'"permissionDecision": "ask"'/'"permissionDecision": "deny"'}
    a=${a/'"permissionDecisionReason": "Sophia guardian: '/'"permissionDecisionReason": "Sophia guardian (this would be a question for the user, and Codex cannot ask one, so it is denied; the user may run it): '}
  fi
  printf '%s\n' "$a"
}

ask() {
  # $1: why the analyzer could not judge (fixed text only: no user input is interpolated)
  local a
  printf -v a '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "Sophia guardian: %s, so this call was not checked; review it yourself."}}' "$1"
  emit_answer "$a"
  local logs=${SOPHIA_HOME:-}/logs
  if [[ -n ${SOPHIA_HOME:-} && -d $logs ]]; then
    { TZ=UTC printf '{"ts": "%(%Y-%m-%dT%H:%M:%SZ)T", "decision": "ask", "rule": "analyzer_failure", "reason": "%s"}\n' -1 "$1" >>"$logs/guardian_blocks.jsonl"; } 2>/dev/null || true
  fi
  exit 0
}

# The state home and the interpreter, found as every hook finds them (env.sh has no traps: this hook
# keeps its own fail-closed answers). Without it the user's deny patterns cannot be read: ask.
here=${BASH_SOURCE[0]%/*}
[[ $here == "${BASH_SOURCE[0]}" ]] && here=.
# shellcheck source=hooks/lib/env.sh
. "$here/lib/env.sh" 2>/dev/null || ask "its environment file hooks/lib/env.sh is missing"

# The resident analyzer (lib/sophia/guardian/resident.py): the analyzer of stage 2 kept loaded, reached
# over loopback TCP with bash builtins only (no fork). Its key file (0600, in a 0700 folder) names its
# port, pid and two secrets: the payload goes only to a live pid of ours, and an answer counts only if it
# starts with the answer secret (no other user's process can forge it). When it answers, its answer is the hook's:
# it is the analyzer itself, so stage 1 (a way to spare starting Python, ~1.8 ms of regex compiling
# here) is skipped. Anything else (no key file, a dead port, a wrong secret, a time-out, an answer cut
# short, garbage) falls through to stage 1 and the one-shot analyzer, exactly as without it.
# SOPHIA_GUARDIAN_RESIDENT=0 skips it; a test fault (SOPHIA_GUARDIAN_FAULT) is for the one-shot analyzer.
start_resident=0
resident_answer() {
  local dir=$SOPHIA_HOME/run/guardian port="" rq="" ra="" lib="" pid="" k ok=0
  local key=$dir/resident
  [[ ${SOPHIA_GUARDIAN_RESIDENT:-1} != 0 && -z ${SOPHIA_GUARDIAN_FAULT:-} ]] || return 1
  out=""
  if [[ ! -e $key ]]; then
    start_resident=1
    return 1
  fi
  # ours (-O: owned by this user; the folder is 0700, so no one else can have put it there)
  [[ -O $dir && -O $key && ${#payload} -le 4000000 ]] || return 1
  { IFS= read -r port && IFS= read -r rq && IFS= read -r ra && IFS= read -r lib && IFS= read -r pid; } <"$key" 2>/dev/null || return 1
  [[ $port =~ ^[0-9]+$ && $pid =~ ^[0-9]+$ && ${#rq} -ge 32 && ${#ra} -ge 32 && $lib == "$SOPHIA_LIB" ]] || return 1
  # alive and ours (kill -0 is a builtin): else the port may be anyone's now; no payload goes there
  if ! kill -0 "$pid" 2>/dev/null || ! { exec 7<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
    start_resident=1
    return 1
  fi
  local -a fields=("S3G1 $rq")
  for k in HOME TMPDIR PWD CLAUDE_PROJECT_DIR CLAUDE_PLUGIN_ROOT SOPHIA_HOME SOPHIA_GUARDIAN_TESTING \
    SOPHIA_GUARDIAN_SYNC_LOG SOPHIA_GUARDIAN_TIMEOUT; do
    if [[ -n ${!k+set} ]]; then fields+=("=${!k}"); else fields+=(""); fi
  done
  trap '' PIPE # a peer that closes early makes printf fail, not kill this hook
  # one printf, so one write (small writes one after another would wait on TCP's delayed ACK, 40 ms);
  # the answer counts only from the resident (its head: the answer secret, then the answer's byte count)
  # and whole (that many bytes); both read in blocks (`read -N`: a line or `-d ''` is read a byte per
  # system call), bytes counted as bytes (LC_ALL=C)
  local LC_ALL=C head="" len
  if printf '%s\0' "${fields[@]}" "$payload" >&7 2>/dev/null &&
    IFS= read -r -N $((${#ra} + 10)) -t 2 -u 7 head 2>/dev/null && [[ $head == "$ra "[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]$'\n' ]]; then
    len=$((10#${head:${#ra}+1:8}))
    if ((len == 0)) || { IFS= read -r -N "$len" -t 2 -u 7 out 2>/dev/null && ((${#out} == len)); }; then
      [[ -z $out || $out == "{"* ]] && ok=1
    fi
  fi
  exec 7>&-
  trap - PIPE
  ((ok))
}

shopt -s nocasematch

needs_analysis() {
  # $1: the text to scan (JSON-escaped as it arrives)
  local text=$1
  text=${text//\/dev\/null/}
  text=${text//\/dev\/stderr/}
  text=${text//\/dev\/stdout/}
  [[ $text =~ $risky ]]
}

re_tool='"tool_name"[[:space:]]*:[[:space:]]*"([A-Za-z0-9_.-]*)"'
tool=""
if [[ $payload =~ $re_tool ]]; then tool=${BASH_REMATCH[1]}; fi
case $tool in
  Bash | PowerShell | Write | Edit | MultiEdit | NotebookEdit | Read | Grep | Glob | WebFetch | WebSearch | mcp__* | apply_patch)
    shopt -u nocasematch
    if resident_answer; then
      [[ -n $out ]] && emit_answer "$out"
      exit 0
    fi
    shopt -s nocasematch
    ;;
esac

# Stage 1 (the resident did not answer): the patterns.
L='(^|[^A-Za-z0-9_.-]|\\[nrt])'
R='([^A-Za-z0-9_-]|$)'
# programs a rule judges (generated from the rule table: lib/sophia/guardian/prefilter.py); the
# command-only ones count after a separator, a wrapper, a number or an assignment only; the stems of the
# remote table's destructive calls (delete, destroy, purge...) count anywhere
# shellcheck source=hooks/lib/guardian_words.sh
. "$here/lib/guardian_words.sh" 2>/dev/null || ask "its word list hooks/lib/guardian_words.sh is missing"
C='(^|[;&|({!`]|\\n|(^|[[:space:]])(do|then|else|env|nice|nohup|time|timeout|ionice|stdbuf|flock|command|builtin|[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*|[0-9]+[a-z]*))[[:space:]]*'
R2='([[:space:];&|)\\]|$)'
# places whose change or disclosure hurts
places='\.ssh|\.aws|\.gnupg|\.gpg|\.kube|\.docker|\.azure|gcloud|\.config/|\.password-store|keyring|\.netrc|\.npmrc|\.pypirc|credential|\.gitconfig|rc([^A-Za-z0-9_]|$)|\.z?profile|\.zsh|\.bash|\.inputrc|history|\.claude|\.sophia|\.vault|\.terraform|\.cargo|\.m2/|\.gem/|\.mozilla|\.thunderbird|\.local|Launch(Agents|Daemons)|\.pam_env|\.x(profile|initrc|sessionrc)'
places+='|/(etc|usr|bin|sbin|lib[0-9x]*|boot|root|var|opt|proc|sys|srv|mnt|media|private|System|Library|home|Users|snap|nix|dev)([^A-Za-z0-9_.-]|$)|id_(rsa|dsa|ecdsa|ed25519)|\.(pem|key|p12|pfx|jks|kdbx|ovpn)|\.env|secret|token|passw|hooks|guardian|authorized_keys|shadow|sudoers|/dev/tcp'
# spellings that can hide a word from the list: expansions, escapes, quotes inside a word, globs/braces next to letters, functions
# shellcheck disable=SC1003 # backslashes are regex text here, not quote escapes
hidden='\$|`|\\\\|\\u|[[:alnum:]_](\\"|'"'"')[[:alnum:]_\\'"'"']|\{|\(\)|[[:alnum:]][*?[]|[*?][[:alnum:]]|<\(|>\(|:\(|&[[:space:]]*\}'
risky="$L($guardian_words)$R|$C($guardian_cmd_words)$R2|$places|$hidden|$guardian_secret_words${guardian_stems:+|$guardian_stems}"

flag=0
case $tool in
  Bash | PowerShell)
    re_cmd='"command"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)"'
    rest=${payload#*\"command\"}
    if ((${#payload} > 65536)) || [[ $rest == *'"command"'* ]]; then
      flag=1
    elif [[ $payload =~ $re_cmd ]]; then
      needs_analysis "${BASH_REMATCH[1]}" && flag=1
    else
      needs_analysis "$payload" && flag=1
    fi
    ;;
  Write | Edit | MultiEdit | NotebookEdit)
    re_path='"(file_path|notebook_path)"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)"'
    if [[ $payload =~ $re_path ]]; then
      path=${BASH_REMATCH[2]}
      rest=${payload#*\""${BASH_REMATCH[1]}"\"}
      if [[ $rest == *'"file_path"'* || $rest == *'"notebook_path"'* ]] || needs_analysis "$path" ||
        [[ $path == *..* || $path == *\\* || $path == "~"* ]]; then
        flag=1
      elif [[ $path == /* && $path != "${HOME:-/nonexistent}/"* && $path != /tmp/* && $path != /var/tmp/* ]]; then
        flag=1
      fi
    else
      flag=1
    fi
    ;;
  Read | Grep | Glob)
    # only a path that may reach a credential store or a key file goes to the analyzer
    re_path='"(file_path|path|pattern|glob)"[[:space:]]*:[[:space:]]*"(([^"\\]|\\.)*)"'
    rest=$payload
    while [[ $rest =~ $re_path ]]; do
      whole=${BASH_REMATCH[0]} value=${BASH_REMATCH[2]}
      if [[ $value =~ ($guardian_read_words) ]]; then
        flag=1
        break
      fi
      rest=${rest#*"$whole"}
    done
    ;;
  WebFetch | WebSearch | mcp__* | apply_patch)
    # rare and slow tools (a fetch, a remote call): always judged (a secret in the URL, an outward verb);
    # Codex's patches: every file named in one, as a Write, Edit or rm of it
    flag=1
    ;;
  "")
    needs_analysis "$payload" && flag=1
    ;;
  *)
    exit 0
    ;;
esac

# A user deny pattern can match anything: then every call goes to the analyzer.
if ((flag == 0)); then
  cfg=$SOPHIA_HOME/config.json
  if [[ -f $cfg ]]; then
    conf=""
    IFS= read -r -d '' conf <"$cfg" || true
    re_deny='"deny"[[:space:]]*:[[:space:]]*\[[[:space:]]*[^][:space:]]'
    [[ $conf =~ $re_deny ]] && flag=1
  fi
fi
((flag)) || exit 0
shopt -u nocasematch

run=$SOPHIA_LIB/sophia/guardian/run.py
[[ -f $run ]] || ask "its analyzer is missing ($run)"

sophia_python || ask "python3 was not found, so the safety analyzer could not run"
if ((start_resident)) && [[ -d $SOPHIA_HOME && -f $SOPHIA_LIB/sophia/guardian/resident.py ]]; then
  # none is running: start one for the next calls, detached (it takes its lock or exits); not waited for
  "$PY" -I -S "$SOPHIA_LIB/sophia/guardian/resident.py" --home "$SOPHIA_HOME" --lib "$SOPHIA_LIB" </dev/null >/dev/null 2>&1 &
fi

set +e
out=$("$PY" -I -S "$run" 2>/dev/null <<<"$payload")
rc=$?
set -e
if ((rc != 0)); then
  ask "the safety analyzer failed (exit $rc)"
fi
if [[ -n $out && $out != "{"* ]]; then
  ask "the safety analyzer gave an unreadable answer"
fi
[[ -n $out ]] && emit_answer "$out"
exit 0
