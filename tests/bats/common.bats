#!/usr/bin/env bats
# hooks/lib/common.sh (and the env.sh it sources), sourced by real hook scripts fed real JSON on stdin.

REPO_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup() {
  export HOME=$BATS_TEST_TMPDIR/home
  mkdir -p "$HOME"
  unset SOPHIA_HOOK_GUARD SOPHIA_PYTHON CLAUDE_PLUGIN_ROOT
  export SOPHIA_HOME=$HOME/.sophia
  KIT=$BATS_TEST_TMPDIR/kit
  mkdir -p "$KIT/hooks/lib" "$KIT/lib/sophia/hooks"
  cp "$REPO_ROOT/hooks/lib/common.sh" "$REPO_ROOT/hooks/lib/env.sh" "$KIT/hooks/lib/"
  touch "$KIT/lib/sophia/__init__.py" "$KIT/lib/sophia/hooks/__init__.py"
  cat >"$KIT/lib/sophia/hooks/probe.py" <<'PY'
import json, sys
print(json.dumps({"argv": sys.argv[1:], "isolated": sys.flags.isolated, "no_site": sys.flags.no_site,
                  "site_loaded": "site" in sys.modules, "stdin": sys.stdin.read(), "name": __name__}))
PY
  # a real python for the tests that do not test resolution
  REAL_PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
}

# make_hook NAME BODY: a hook script in the kit that sources common.sh, then runs BODY.
make_hook() {
  {
    printf '#!/usr/bin/env bash\nset -euo pipefail\n'
    [[ ${GUARDIAN:-} == 1 ]] && printf 'SOPHIA_GUARDIAN_HOOK=1\n'
    printf '. "${BASH_SOURCE[0]%%/*}/lib/common.sh"\n%s\n' "$2"
  } >"$KIT/hooks/$1.sh"
  chmod +x "$KIT/hooks/$1.sh"
}

@test "recursion guard: SOPHIA_HOOK_GUARD=1 exits 0 before the hook body; the guardian still runs" {
  make_hook h 'touch "$HOME/ran"; exit 3'
  SOPHIA_HOOK_GUARD=1 run "$KIT/hooks/h.sh" <<<'{}'
  [ "$status" -eq 0 ]
  [ ! -e "$HOME/ran" ]
  GUARDIAN=1 make_hook g 'echo blocked >&2; exit 2'
  SOPHIA_HOOK_GUARD=1 run "$KIT/hooks/g.sh" <<<'{}'
  [ "$status" -eq 2 ]
  [[ $output == *blocked* ]]
}

@test "fail open: a failing command, an unset variable or exit 1 end in exit 0 with one line" {
  make_hook h 'false; echo not-reached'
  run "$KIT/hooks/h.sh" <<<'{}'
  [ "$status" -eq 0 ]
  [ "$output" = "sophia h: internal error (exit 1 at line 4); skipped" ]
  make_hook h 'f() { ls /no/such/dir 2>/dev/null; echo nope; }; f'
  run "$KIT/hooks/h.sh" <<<'{}'
  [ "$status" -eq 0 ]
  [[ $output != *nope* ]]
  make_hook h 'exit 1'
  run "$KIT/hooks/h.sh" <<<'{}'
  [ "$status" -eq 0 ]
  [ "$output" = "sophia h: internal error (exit 1); skipped" ]
  make_hook h 'echo "$NOT_SET_ANYWHERE"'
  run "$KIT/hooks/h.sh" <<<'{}'
  [ "$status" -eq 0 ]
  make_hook h 'exit 2'
  run "$KIT/hooks/h.sh" <<<'{}'
  [ "$status" -eq 2 ]
}

@test "umask 077, note is one line, SOPHIA_HOME default and stdin read whole" {
  make_hook h 'sophia_read_stdin; printf "%s" "$SOPHIA_INPUT" >"$HOME/payload"; note "$(printf "two\nlines")"; echo "$SOPHIA_HOME"'
  local payload='{"a": "x y", "b": "line1\nline2"}'
  unset SOPHIA_HOME
  run "$KIT/hooks/h.sh" <<<"$payload"
  [ "$status" -eq 0 ]
  [ "$(stat -c %a "$HOME/payload")" = 600 ]
  [ "$(cat "$HOME/payload")" = "$payload" ]
  [[ $output == *"sophia h: two lines"* ]]
  [[ $output == *"$HOME/.sophia"* ]]
  # an install with a custom home leaves it in kit/.sophia_home
  echo "/custom/home" >"$KIT/.sophia_home"
  run "$KIT/hooks/h.sh" <<<'{}'
  [[ $output == *"/custom/home"* ]]
  SOPHIA_HOME=/env/wins run "$KIT/hooks/h.sh" <<<'{}'
  [[ $output == *"/env/wins"* ]]
}

@test "sophia_py runs our module with -I -S: no site, no PYTHONPATH, lib on sys.path, stdin passed" {
  [ -n "$REAL_PY" ] || skip "no python3"
  export SOPHIA_PYTHON=$REAL_PY
  make_hook h 'sophia_read_stdin; printf "%s" "$SOPHIA_INPUT" | sophia_py sophia.hooks.probe a "b c"'
  PYTHONPATH=/nonexistent run "$KIT/hooks/h.sh" <<<'{"k": 1}'
  [ "$status" -eq 0 ]
  run "$REAL_PY" -c 'import json,sys; d = json.loads(sys.argv[1]); assert d["argv"] == ["a", "b c"], d; assert d["isolated"] == 1 and d["no_site"] == 1 and not d["site_loaded"], d; assert d["stdin"] == "{\"k\": 1}\n" and d["name"] == "__main__", d; print("ok")' "$output"
  [ "$output" = ok ] || { echo "$output"; false; }
  make_hook h 'sophia_py_file sophia/hooks/probe.py z </dev/null'
  run "$KIT/hooks/h.sh" <<<'{}'
  [[ $output == *'"argv": ["z"]'* ]]
}

@test "sophia_python: venv python first, else resolves python3 once (a shim) and caches the real path" {
  [ -n "$REAL_PY" ] || skip "no python3"
  local bin=$BATS_TEST_TMPDIR/bin
  mkdir -p "$bin"
  # a shim like pyenv's: logs each call, then runs the real interpreter
  printf '#!/bin/sh\necho called >>"%s"\nexec %s "$@"\n' "$BATS_TEST_TMPDIR/shim.log" "$REAL_PY" >"$bin/python3"
  chmod +x "$bin/python3"
  make_hook h 'sophia_python; echo "PY=$PY"'
  PATH="$bin:/usr/bin:/bin" run "$KIT/hooks/h.sh" <<<'{}'
  [ "$status" -eq 0 ]
  [ "$output" = "PY=$REAL_PY" ]
  [ "$(cat "$SOPHIA_HOME/run/python")" = "$REAL_PY" ]
  [ "$(stat -c %a "$SOPHIA_HOME/run/python")" = 600 ]
  [ "$(wc -l <"$BATS_TEST_TMPDIR/shim.log")" -eq 1 ]
  PATH="$bin:/usr/bin:/bin" run "$KIT/hooks/h.sh" <<<'{}'
  [ "$output" = "PY=$REAL_PY" ]
  [ "$(wc -l <"$BATS_TEST_TMPDIR/shim.log")" -eq 1 ] # cached: the shim was not run again
  # a stale cache is replaced
  echo /no/such/python >"$SOPHIA_HOME/run/python"
  PATH="$bin:/usr/bin:/bin" run "$KIT/hooks/h.sh" <<<'{}'
  [ "$output" = "PY=$REAL_PY" ]
  # the kit's venv wins when present
  mkdir -p "$SOPHIA_HOME/venv/bin"
  ln -s "$REAL_PY" "$SOPHIA_HOME/venv/bin/python"
  run "$KIT/hooks/h.sh" <<<'{}'
  [ "$output" = "PY=$SOPHIA_HOME/venv/bin/python" ]
}

@test "no python at all: sophia_py notes it and the hook still exits 0" {
  make_hook h 'sophia_py sophia.hooks.probe; echo after'
  PATH=/nonexistent run /bin/bash "$KIT/hooks/h.sh" <<<'{}'
  [ "$status" -eq 0 ]
  [[ $output == *"no Python >= 3.11 found"* ]]
  [[ $output != *after* ]]
}

@test "the placeholder hooks of the repo source common.sh and exit 0 on a real payload" {
  local h
  for h in guardian_tier1 log_action session_end session_start prompt_context; do
    run "$REPO_ROOT/hooks/$h.sh" <<<'{"session_id": "s", "hook_event_name": "X", "cwd": "/tmp"}'
    [ "$status" -eq 0 ] || { echo "$h: $output"; false; }
  done
}

@test "a kit without env.sh: the hook notes it in one line and exits 0" {
  rm "$KIT/hooks/lib/env.sh"
  make_hook h 'echo body-ran'
  run "$KIT/hooks/h.sh" <<<'{}'
  [ "$status" -eq 0 ]
  [ "$output" = "sophia h: hooks/lib/env.sh is missing; reinstall the kit" ]
}
