#!/usr/bin/env bash
# Sophia guardian, tier 1: the PreToolUse hook for Bash, PowerShell, Write, Edit, MultiEdit, NotebookEdit,
# Read, Grep, Glob, WebFetch, WebSearch and MCP tools (mcp__*).
#
# Two stages, so ordinary commands cost no more than starting bash:
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
# Designed failure mode: calls that stage 1 passes never reach Python, so an analyzer failure
# cannot touch them. A call stage 1 flags but the analyzer cannot judge (python3 missing,
# analyzer crash or time-out, garbage output) gets "ask": the user decides; never a silent allow,
# never a traceback. The recursion guard SOPHIA_HOOK_GUARD does NOT disable the guardian.
set -euo pipefail
umask 077

payload=""
IFS= read -r -d '' payload || true

ask() {
  # $1: why the analyzer could not judge (fixed text only: no user input is interpolated)
  printf '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "Sophia guardian: %s, so this call was not checked; review it yourself."}}\n' "$1"
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

shopt -s nocasematch
L='(^|[^A-Za-z0-9_.-]|\\[nrt])'
R='([^A-Za-z0-9_-]|$)'
# programs a rule judges (generated from the rule table: lib/sophia/guardian/prefilter.py); the
# command-only ones count after a separator, a wrapper, a number or an assignment only
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
risky="$L($guardian_words)$R|$C($guardian_cmd_words)$R2|$places|$hidden"

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
  WebFetch | WebSearch | mcp__*)
    # rare and slow tools (a fetch, a remote call): always judged (a secret in the URL, an outward verb)
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
[[ -n $out ]] && printf '%s\n' "$out"
exit 0
