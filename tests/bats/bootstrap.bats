#!/usr/bin/env bats
# hooks/lib/bootstrap_venv.sh: the plugin-mode venv bootstrap. Real detached processes, real pip.

load install_helpers

setup_file() {
  prepare_src_and_venv
}

setup() {
  fresh_home
  export SOPHIA_BOOTSTRAP_EMBEDDINGS=0
  BOOT=$SRC/hooks/lib/bootstrap_venv.sh
}

# Waits until --status prints one of the given words (max ~120 s); prints the last status.
wait_status() {
  local want=$1 st i
  for ((i = 0; i < 240; i++)); do
    st=$("$BOOT" --status)
    if [[ " $want " == *" $st "* ]]; then
      echo "$st"
      return 0
    fi
    sleep 0.5
  done
  echo "$st"
  return 1
}

now_ms() { date +%s%3N; }

@test "bootstrap: --detach returns at once, the detached run builds the CLI, a second --detach does nothing" {
  [ "$("$BOOT" --status)" = missing ]
  local t0 t1
  t0=$(now_ms)
  run "$BOOT" --detach
  t1=$(now_ms)
  [ "$status" -eq 0 ]
  [ -z "$output" ] # nothing on stdout: SessionStart stdout would land in Claude's context
  ((t1 - t0 < 2000)) || { echo "detach took $((t1 - t0)) ms"; false; }

  run wait_status ready
  [ "$status" -eq 0 ] || { echo "status: $output"; cat "$HOME/.sophia/logs/bootstrap.log"; false; }
  grep -q 'bootstrap: done' "$HOME/.sophia/logs/bootstrap.log"
  [ "$(stat -c %a "$HOME/.sophia/logs/bootstrap.log")" = 600 ]
  run "$HOME/.local/bin/s3" status --json
  [ "$status" -eq 0 ]
  [[ $output == *terminal_creed* ]]

  local nlines
  nlines=$(wc -l <"$HOME/.sophia/logs/bootstrap.log")
  run "$BOOT" --detach
  [ "$status" -eq 0 ]
  sleep 1
  [ "$(wc -l <"$HOME/.sophia/logs/bootstrap.log")" -eq "$nlines" ]
}

@test "bootstrap: a venv already made by install.sh counts as ready (no run)" {
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  [ "$("$BOOT" --status)" = ready ]
  run "$BOOT" --detach
  [ "$status" -eq 0 ]
  sleep 0.5
  [ ! -e "$HOME/.sophia/logs/bootstrap.log" ]
}

@test "bootstrap: a new plugin version is bootstrapped again" {
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  printf '0.0.0-old\t%s\n' "$TVENV/bin/s3" >"$HOME/.sophia/run/bootstrap.done"
  [ "$("$BOOT" --status)" = missing ]
  "$BOOT" --detach
  run wait_status ready
  [ "$status" -eq 0 ] || { cat "$HOME/.sophia/logs/bootstrap.log"; false; }
}

@test "bootstrap: a failure is recorded and not retried at every session" {
  export SOPHIA_VENV_PYTHON=$BATS_TEST_TMPDIR/no/such/python
  "$BOOT" --detach
  run wait_status failed
  [ "$status" -eq 0 ] || { echo "$output"; cat "$HOME/.sophia/logs/bootstrap.log"; false; }
  [ -f "$HOME/.sophia/run/bootstrap.failed" ]
  grep -q 'bootstrap: failed' "$HOME/.sophia/logs/bootstrap.log"
  local nlines
  nlines=$(wc -l <"$HOME/.sophia/logs/bootstrap.log")
  "$BOOT" --detach
  sleep 1
  [ "$(wc -l <"$HOME/.sophia/logs/bootstrap.log")" -eq "$nlines" ]
  # with the retry window over, it tries again (and succeeds with a good venv)
  export SOPHIA_VENV_PYTHON=$TVENV/bin/python SOPHIA_BOOTSTRAP_RETRY=0
  "$BOOT" --detach
  run wait_status ready
  [ "$status" -eq 0 ] || { cat "$HOME/.sophia/logs/bootstrap.log"; false; }
  [ ! -e "$HOME/.sophia/run/bootstrap.failed" ]
}

@test "bootstrap: only one run at a time (lock held elsewhere)" {
  mkdir -p "$HOME/.sophia/run"
  exec 8>>"$HOME/.sophia/run/bootstrap.lock"
  flock -n 8
  [ "$("$BOOT" --status)" = running ]
  run "$BOOT" --run
  [ "$status" -eq 0 ]
  [[ $output == *"another bootstrap is running"* ]]
  [ ! -e "$HOME/.sophia/run/bootstrap.done" ]
  exec 8>&-
  [ "$("$BOOT" --status)" = missing ]
}

@test "plugin mode: hooks run from the plugin folder without a venv; session_start starts the bootstrap" {
  export CLAUDE_PLUGIN_ROOT=$SRC
  local h
  for h in guardian_tier1 log_action session_end prompt_context session_start; do
    run "$SRC/hooks/$h.sh" <<<'{"hook_event_name": "X", "session_id": "s", "source": "startup"}'
    [ "$status" -eq 0 ] || { echo "$h: $output"; false; }
    [ -z "$output" ] || { echo "$h printed: $output"; false; }
  done
  [ ! -e "$HOME/.sophia/venv" ]
  run wait_status ready
  [ "$status" -eq 0 ] || { echo "$output"; cat "$HOME/.sophia/logs/bootstrap.log"; false; }
  [ -x "$HOME/.local/bin/s3" ]
}

@test "not in plugin mode: session_start does not bootstrap" {
  run "$SRC/hooks/session_start.sh" <<<'{"hook_event_name": "SessionStart", "source": "startup"}'
  [ "$status" -eq 0 ]
  sleep 1
  [ ! -e "$HOME/.sophia/logs/bootstrap.log" ]
}
