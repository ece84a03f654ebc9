#!/usr/bin/env bats
# Lifecycle hooks fed the real payloads recorded from claude 2.1.197 (tests/fixtures/lifecycle).

load processes

teardown() {
  stop_test_processes
  [[ -z ${LIVE_PID:-} ]] || kill "$LIVE_PID" 2>/dev/null || true
}

setup() {
  ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
  HOOKS=$ROOT/hooks
  FIX=$ROOT/tests/fixtures/lifecycle
  export HOME=$BATS_TEST_TMPDIR/home
  export SOPHIA_HOME=$HOME/.sophia
  unset SOPHIA_HOOK_GUARD CLAUDE_PLUGIN_ROOT
  mkdir -p "$HOME"
  if [[ -z ${SOPHIA_PYTHON:-} ]]; then
    if [[ -x ${SOPHIA_TEST_VENV:-/nonexistent}/bin/python ]]; then
      SOPHIA_PYTHON=$SOPHIA_TEST_VENV/bin/python
    else
      SOPHIA_PYTHON=$(python3 -c 'import sys; print(sys.executable)')
    fi
  fi
  export SOPHIA_PYTHON
  PROJECT=$BATS_TEST_TMPDIR/proj
  mkdir -p "$PROJECT"
  TRANSCRIPT=$BATS_TEST_TMPDIR/transcript.jsonl
  sed "s#@PROJECT@#$PROJECT#g" "$FIX/transcript_basic.jsonl" >"$TRANSCRIPT"
  PAYLOADS=$BATS_TEST_TMPDIR/payloads.jsonl
  sed -e "s#@PROJECT@#$PROJECT#g" -e "s#@TRANSCRIPT@#$TRANSCRIPT#g" "$FIX/payloads.jsonl" >"$PAYLOADS"
  SID=b60c9b2f-790f-4a53-81eb-ca4204d1f601
  BUF=$SOPHIA_HOME/buffers/$SID.jsonl
}

init_home() {
  PYTHONPATH=$ROOT/lib "$SOPHIA_PYTHON" -c 'from sophia.state import init_tree; init_tree()'
}

payload() { # payload EVENT [N]: the Nth (1-based) recorded payload of EVENT
  grep "\"hook_event_name\":\"$1\"" "$PAYLOADS" | sed -n "${2:-1}p"
}

feed_tools() {
  local line
  while IFS= read -r line; do
    printf '%s' "$line" | "$HOOKS/log_action.sh"
  done < <(grep -E '"hook_event_name":"PostToolUse(Failure)?"' "$PAYLOADS")
}

ms() { echo $(($(date +%s%N) / 1000000)); }

@test "log_action: one line per real PostToolUse/PostToolUseFailure payload, private files" {
  feed_tools
  [ "$(wc -l <"$BUF")" -eq 4 ]
  [ "$(stat -c %a "$BUF")" = 600 ]
  [ "$(stat -c %a "$SOPHIA_HOME/buffers")" = 700 ]
  run jq -r '[.tool, .event, .outcome, (.exit // "-"), (.duration_ms|tostring), (.summary // .file), .id] | join("|")' "$BUF"
  [ "$status" -eq 0 ]
  [ "${lines[0]}" = "Bash|PostToolUse|ok|0|67|echo hello|toolu_0000" ]
  [ "${lines[1]}" = "Bash|PostToolUseFailure|error|1|17|false|toolu_0001" ]
  [ "${lines[2]}" = "Write|PostToolUse|ok|-|10|$PROJECT/notes.txt|toolu_0002" ]
  [ "${lines[3]}" = "Read|PostToolUseFailure|error|-|2|$PROJECT/missing.txt|toolu_0003" ]
  run jq -r '.ts + " " + .session + " " + (has("args_hash") | tostring)' "$BUF"
  # no args_hash: hashing the input took a process; the episode takes it from the transcript's copy
  [[ ${lines[0]} =~ ^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z\ $SID\ false$ ]]
}

@test "log_action: the command summary keeps whitelisted words only (no secrets)" {
  local secret=ghp_abcdefghijklmnopqrstuvwxyz0123456789
  jq -c --arg c "GITHUB_TOKEN=$secret git push https://user:pw@example.com" '.tool_input.command = $c' \
    <<<"$(payload PostToolUse 1)" | "$HOOKS/log_action.sh"
  jq -c --arg c "curl -H 'Authorization: Bearer $secret' https://x.io" '.tool_input.command = $c' \
    <<<"$(payload PostToolUse 1)" | "$HOOKS/log_action.sh"
  jq -c --arg c "git commit -m 'password hunter2'" '.tool_input.command = $c' \
    <<<"$(payload PostToolUse 1)" | "$HOOKS/log_action.sh"
  jq -c --arg c "/usr/bin/python3 manage.py migrate" '.tool_input.command = $c' \
    <<<"$(payload PostToolUse 1)" | "$HOOKS/log_action.sh"
  ! grep -q -e ghp_ -e hunter2 -e 'pw@' -e Bearer "$BUF"
  run jq -r '.summary // "-"' "$BUF"
  [ "${lines[0]}" = "-" ]
  [ "${lines[1]}" = "curl" ]
  [ "${lines[2]}" = "git commit" ]
  [ "${lines[3]}" = "python3" ]
}

@test "log_action: a compound command is summarised by what ran, not by its leading cd" {
  for c in "cd $PROJECT && pytest -q" "cd a; cd b && make test" "cd $PROJECT && TOKEN=abc make" "cd $PROJECT"; do
    jq -c --arg c "$c" '.tool_input.command = $c' <<<"$(payload PostToolUse 1)" | "$HOOKS/log_action.sh"
  done
  run jq -r '.summary // "-"' "$BUF"
  [ "${lines[0]}" = "pytest" ]
  [ "${lines[1]}" = "make test" ]
  [ "${lines[2]}" = "-" ]
  [ "${lines[3]}" = "cd" ]
}

@test "log_action: malformed, empty and 10 MB payloads exit 0 fast and never print" {
  run bash -c "printf 'not json {' | '$HOOKS/log_action.sh'"
  [ "$status" -eq 0 ] && [ -z "$output" ]
  run bash -c "'$HOOKS/log_action.sh' </dev/null"
  [ "$status" -eq 0 ] && [ -z "$output" ]
  [ ! -e "$SOPHIA_HOME/buffers/unknown.jsonl" ]
  local big=$BATS_TEST_TMPDIR/big.json
  payload PostToolUse 1 | jq -c '.tool_response.stdout = ("x" * 10000000)' >"$big"
  local t0 t1
  t0=$(ms)
  run bash -c "'$HOOKS/log_action.sh' <'$big'"
  t1=$(ms)
  [ "$status" -eq 0 ] && [ -z "$output" ]
  [ $((t1 - t0)) -lt 2000 ]
  run jq -r '[.tool, (.duration_ms|tostring), .id] | join("|")' "$BUF"
  [ "$output" = "Bash|67|toolu_0000" ]
}

@test "log_action: tool_use_id is found in any key order, and one nested in the output is not taken" {
  local big
  big=$(printf 'x%.0s' {1..6000})
  # tool_use_id first, a tool output bigger than 4 KiB after it
  payload PostToolUse 1 | jq -c --arg s "$big" '.tool_response.stdout = $s | {tool_use_id} + del(.tool_use_id)' |
    "$HOOKS/log_action.sh"
  # the usual order, with a structured tool output holding a tool_use_id key of its own
  payload PostToolUse 1 | jq -c --arg s "$big" '.tool_response.stdout = $s | .tool_response.meta = {tool_use_id: "toolu_nested"}' |
    "$HOOKS/log_action.sh"
  # a drained (over 64 KiB) payload with the id first
  payload PostToolUse 1 | jq -c '.tool_response.stdout = ("y" * 100000) | {tool_use_id} + del(.tool_use_id)' |
    "$HOOKS/log_action.sh"
  run jq -r '.id // "-"' "$BUF"
  [ "${lines[*]}" = "toolu_0000 toolu_0000 toolu_0000" ] || { echo "$output"; false; }
}

@test "log_action: the buffer goes to the home named in kit/.sophia_home when SOPHIA_HOME is unset" {
  local kit=$BATS_TEST_TMPDIR/kit custom=$BATS_TEST_TMPDIR/custom
  mkdir -p "$kit"
  cp -R "$HOOKS" "$kit/hooks"
  echo "$custom" >"$kit/.sophia_home"
  payload PostToolUse 1 | env -u SOPHIA_HOME "$kit/hooks/log_action.sh"
  [ "$(wc -l <"$custom/buffers/$SID.jsonl")" -eq 1 ]
  [ ! -e "$SOPHIA_HOME" ]
  # an explicit SOPHIA_HOME still wins
  payload PostToolUse 1 | "$kit/hooks/log_action.sh"
  [ "$(wc -l <"$BUF")" -eq 1 ]
}

@test "log_action: session ids are sanitised into the buffer name" {
  payload PostToolUse 1 | jq -c '.session_id = "../../etc/x y"' | "$HOOKS/log_action.sh"
  [ -f "$SOPHIA_HOME/buffers/etcxy.jsonl" ]
  [ "$(find "$SOPHIA_HOME" -name '*.jsonl' | wc -l)" -eq 1 ]
}

@test "every lifecycle hook does nothing under the recursion guard" {
  init_home
  export SOPHIA_HOOK_GUARD=1
  feed_tools
  [ ! -e "$BUF" ]
  run bash -c "printf '%s' '$(payload SessionStart)' | '$HOOKS/session_start.sh'"
  [ "$status" -eq 0 ] && [ -z "$output" ]
  run bash -c "printf '%s' '$(payload Stop)' | '$HOOKS/session_end.sh'"
  [ "$status" -eq 0 ] && [ -z "$(ls "$SOPHIA_HOME/episodes" | grep '^ep_' || true)" ]
}

@test "session_end Stop: upserts one episode, idempotent, validated fields" {
  init_home
  feed_tools
  payload Stop | "$HOOKS/session_end.sh"
  payload Stop | "$HOOKS/session_end.sh"
  payload Stop | "$HOOKS/session_end.sh"
  run find "$SOPHIA_HOME/episodes" -name 'ep_*.json'
  [ "${#lines[@]}" -eq 1 ]
  local ep=${lines[0]}
  [ "$(stat -c %a "$ep")" = 600 ]
  run jq -r '[.goal, .outcome, (.tool_call_count|tostring), .end_trigger, (.errors|length|tostring), .project] | join("|")' "$ep"
  # SUCCESS: the notes were written and reported done; the last call was a failed Read of a missing file
  # (an inspection, not the work: sophia.hooks.outcome)
  [ "$output" = "Please write my notes file about fishing|SUCCESS|4|stop_hook|2|$PROJECT" ]
  # every buffered call carries the hash of its input, from the transcript's copy of the call
  [ "$(jq '[.actions[] | select(.args_hash | test("^[0-9]+$"))] | length' "$ep")" -eq 4 ]
  [ "$(jq '.entries | length' "$SOPHIA_HOME/episodes/index.json")" -eq 1 ]
  [ "$(jq '.total_sessions' "$SOPHIA_HOME/self_model.json")" -eq 1 ]
  [ "$(jq '.total_episodes' "$SOPHIA_HOME/self_model.json")" -eq 1 ]
  [ "$(jq '.interaction_count' "$SOPHIA_HOME/user_models/default.json")" -eq 1 ]
}

@test "session_end Stop: skipped when stop_hook_active" {
  init_home
  feed_tools
  payload Stop | jq -c '.stop_hook_active = true' | "$HOOKS/session_end.sh"
  [ -z "$(find "$SOPHIA_HOME/episodes" -name 'ep_*.json')" ]
  [ "$(jq '.total_sessions' "$SOPHIA_HOME/self_model.json")" -eq 0 ]
}

@test "session_end SessionEnd: finalises well inside the 1.5 s budget" {
  init_home
  feed_tools
  payload Stop | "$HOOKS/session_end.sh"
  local t0 t1
  t0=$(ms)
  run bash -c "printf '%s' '$(payload SessionEnd)' | '$HOOKS/session_end.sh'"
  t1=$(ms)
  [ "$status" -eq 0 ] && [ -z "$output" ]
  [ $((t1 - t0)) -lt 1000 ]
  run jq -r '.end_trigger + "|" + .end_reason' "$SOPHIA_HOME"/episodes/ep_*.json
  [ "$output" = "session_end|other" ]
  [ "$(jq '.total_sessions' "$SOPHIA_HOME/self_model.json")" -eq 1 ]
}

@test "python hooks: malformed input exits 0 without a traceback" {
  init_home
  local hook input
  for hook in session_end session_start prompt_context; do
    for input in 'garbage{' '' '[]' '{"hook_event_name":"Stop","session_id":42}' \
      '{"hook_event_name":"SessionEnd","session_id":"x","transcript_path":"/nonexistent/t.jsonl"}' \
      '{"prompt":{"not":"a string"}}'; do
      run bash -c "printf '%s' '$input' | '$HOOKS/$hook.sh' 2>&1"
      [ "$status" -eq 0 ]
      [[ $output != *Traceback* ]]
    done
  done
}

@test "python hooks: a broken state tree still exits 0 with one line, no traceback" {
  init_home
  feed_tools
  rm -rf "$SOPHIA_HOME/episodes" && printf 'x' >"$SOPHIA_HOME/episodes" # a file where a dir should be
  run bash -c "printf '%s' '$(payload Stop)' | '$HOOKS/session_end.sh'"
  [ "$status" -eq 0 ]
  [[ $output != *Traceback* ]]
  [ "${#lines[@]}" -le 1 ]
}

@test "session_start: additionalContext JSON with identity and this project's episodes" {
  init_home
  feed_tools
  payload Stop | "$HOOKS/session_end.sh"
  run bash -c "printf '%s' '$(payload SessionStart)' | '$HOOKS/session_start.sh'"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.hookSpecificOutput.hookEventName' <<<"$output")" = SessionStart ]
  local ctx
  ctx=$(jq -r '.hookSpecificOutput.additionalContext' <<<"$output")
  [[ $ctx == *"Terminal creed"* ]]
  [[ $ctx == *"ep_"*"Please write my notes file about fishing"* ]]
  # Another project never sees it.
  mkdir -p "$BATS_TEST_TMPDIR/elsewhere"
  run bash -c "printf '%s' '$(payload SessionStart | jq -c --arg d "$BATS_TEST_TMPDIR/elsewhere" '.cwd = $d')' | '$HOOKS/session_start.sh'"
  [[ $output != *fishing* ]]
}

@test "session_start: capped by context.session_start_max_tokens" {
  init_home
  jq '.context.session_start_max_tokens = 200' "$SOPHIA_HOME/config.json" >"$BATS_TEST_TMPDIR/c" && mv "$BATS_TEST_TMPDIR/c" "$SOPHIA_HOME/config.json"
  jq -n '[range(300) | {id: "rule_\(.)", trigger_concept: "topic \(.)", rule_content: ("Always do thing number \(.) carefully " * 4), confidence: 0.8}]' >"$SOPHIA_HOME/semantic_rules.json"
  run bash -c "printf '%s' '$(payload SessionStart)' | '$HOOKS/session_start.sh'"
  [ "$status" -eq 0 ]
  local n
  n=$(jq -r '.hookSpecificOutput.additionalContext | length' <<<"$output")
  [ "$n" -le 800 ] && [ "$n" -gt 100 ]
  [[ $(jq -r '.hookSpecificOutput.additionalContext' <<<"$output") == *rule_* ]]
}

# guardian_key PID LIB: a key file of the guardian's resident analyzer naming PID and LIB (port and secrets
# well formed; nothing listens: the test is about what SessionStart starts, not about answers).
guardian_key() {
  mkdir -p "$SOPHIA_HOME/run/guardian"
  chmod 700 "$SOPHIA_HOME/run/guardian"
  printf '%s\n' 1 "$(printf 'q%.0s' {1..64})" "$(printf 'a%.0s' {1..64})" "$2" "$1" >"$SOPHIA_HOME/run/guardian/resident"
  chmod 600 "$SOPHIA_HOME/run/guardian/resident"
}

# started_guardian WITHIN: whether the python SessionStart ran (a wrapper that logs its arguments) was
# asked to start the guardian's resident analyzer within WITHIN tenths of a second (the start is detached).
started_guardian() {
  local i
  for ((i = 0; i < $1; i++)); do
    grep -q 'guardian/resident.py' "$BATS_TEST_TMPDIR/py.log" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

@test "session_start: no second guardian resident when one of this kit is alive; a stale key starts one" {
  init_home
  local real=$SOPHIA_PYTHON lib=$HOOKS/../lib dead
  printf '#!/usr/bin/env bash\nprintf "%%s\\n" "$*" >>"%s"\nexec "%s" "$@"\n' "$BATS_TEST_TMPDIR/py.log" "$real" >"$BATS_TEST_TMPDIR/py"
  chmod +x "$BATS_TEST_TMPDIR/py"
  export SOPHIA_PYTHON=$BATS_TEST_TMPDIR/py SOPHIA_HOOK_RESIDENT=0
  sleep 300 3>&- &
  LIVE_PID=$!
  sleep 0 3>&- &
  dead=$!
  wait "$dead" || true
  # alive, this kit's lib: nothing started (the hook itself still ran one-shot through the wrapper)
  guardian_key "$LIVE_PID" "$lib"
  payload SessionStart | "$HOOKS/session_start.sh" >/dev/null
  run started_guardian 15
  [ "$status" -eq 1 ]
  grep -q 'launch.py session_start' "$BATS_TEST_TMPDIR/py.log"
  # the pid is dead: one is started
  guardian_key "$dead" "$lib"
  payload SessionStart | "$HOOKS/session_start.sh" >/dev/null
  started_guardian 100
  # alive but another kit's: one is started (it finds the lock free or taken, as before)
  : >"$BATS_TEST_TMPDIR/py.log"
  guardian_key "$LIVE_PID" "/elsewhere/lib"
  payload SessionStart | "$HOOKS/session_start.sh" >/dev/null
  started_guardian 100
  # switched off: none, whatever the key says
  : >"$BATS_TEST_TMPDIR/py.log"
  rm -f "$SOPHIA_HOME/run/guardian/resident"
  payload SessionStart | SOPHIA_GUARDIAN_RESIDENT=0 "$HOOKS/session_start.sh" >/dev/null
  run started_guardian 15
  [ "$status" -eq 1 ]
}

@test "prompt_context: silent when nothing is relevant, cites ids when something is" {
  init_home
  feed_tools
  payload Stop | "$HOOKS/session_end.sh"
  local other='{"session_id":"other-session","cwd":"'$PROJECT'","hook_event_name":"UserPromptSubmit"'
  run bash -c "printf '%s' '$other,\"prompt\":\"compile the kernel module for arm64 boards\"}' | '$HOOKS/prompt_context.sh'"
  [ "$status" -eq 0 ] && [ -z "$output" ]
  run bash -c "printf '%s' '$other,\"prompt\":\"what was in my fishing notes again?\"}' | '$HOOKS/prompt_context.sh'"
  [ "$status" -eq 0 ]
  [ "$(jq -r '.hookSpecificOutput.hookEventName' <<<"$output")" = UserPromptSubmit ]
  [[ $(jq -r '.hookSpecificOutput.additionalContext' <<<"$output") == *"[ep_"*fishing* ]]
  # Another project: never shown.
  run bash -c "printf '%s' '{\"session_id\":\"o2\",\"cwd\":\"/\",\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"what was in my fishing notes again?\"}' | '$HOOKS/prompt_context.sh'"
  [ "$status" -eq 0 ] && [ -z "$output" ]
  # Switched off in config: silent.
  jq '.context.prompt_context_enabled = false' "$SOPHIA_HOME/config.json" >"$BATS_TEST_TMPDIR/c" && mv "$BATS_TEST_TMPDIR/c" "$SOPHIA_HOME/config.json"
  run bash -c "printf '%s' '$other,\"prompt\":\"what was in my fishing notes again?\"}' | '$HOOKS/prompt_context.sh'"
  [ "$status" -eq 0 ] && [ -z "$output" ]
}
