# shellcheck shell=bash
# Background helpers a test's hooks woke (the embedding service a recall starts, a detached
# reflection) must not outlive the test: stop every process whose command line names this test's
# temp dir (TERM, then KILL after 5 s). Uses /proc only, no procps.

stop_test_processes() {
  local dir=${1:-$BATS_TEST_TMPDIR} pid cmd i
  local -a pids=()
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || continue
    [[ $cmd == *sophia.* && $cmd == *"$dir/"* ]] && pids+=("$pid")
  done
  ((${#pids[@]})) || return 0
  kill -TERM "${pids[@]}" 2>/dev/null || true
  local -a alive
  for ((i = 0; i < 50; i++)); do
    alive=()
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null && alive+=("$pid")
    done
    ((${#alive[@]})) || return 0
    pids=("${alive[@]}")
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}
