# shellcheck shell=bash
# Shared helpers for every Sophia System 3 hook. Source it first thing:
#
#   #!/usr/bin/env bash
#   set -euo pipefail
#   # shellcheck source=hooks/lib/common.sh
#   . "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
#
# What sourcing does (bash builtins only, no subprocess on the common path):
#   - umask 077 (everything a hook writes is private);
#   - the recursion guard: SOPHIA_HOOK_GUARD=1 makes the hook exit 0 at once, unless the hook set
#     SOPHIA_GUARDIAN_HOOK=1 (not exported) before sourcing (the guardian still guards);
#   - fail-open ERR and EXIT traps: a hook's own failure (any exit status but 0 and 2) exits 0 with one
#     line on stderr, never a traceback. A hook that must fail closed (the guardian) replaces them:
#     `trap 'my_handler' ERR EXIT`.
#   - sources env.sh (SOPHIA_HOME, SOPHIA_HOOK_DIR, SOPHIA_LIB and sophia_python: see there) and sets
#     SOPHIA_HOOK_NAME (file name without .sh).
#
# Functions: note MSG (one line to stderr), sophia_python (from env.sh: sets PY to a real interpreter,
# never a pyenv shim, cached in $SOPHIA_HOME/run/python), sophia_py MODULE ARGS... (runs a stdlib-only module of
# ours as "$PY" -I -S with SOPHIA_LIB on sys.path), sophia_py_file FILE ARGS... (runs "$PY" -I -S
# "$SOPHIA_LIB/FILE"), sophia_read_stdin (reads the whole hook payload into SOPHIA_INPUT).

umask 077
set -E

SOPHIA_HOOK_NAME=${0##*/}
SOPHIA_HOOK_NAME=${SOPHIA_HOOK_NAME%.sh}

# One line on stderr, prefixed with the hook's name. Never more than one line.
note() {
  local msg=$*
  msg=${msg//$'\n'/ }
  printf 'sophia %s: %s\n' "$SOPHIA_HOOK_NAME" "${msg:0:400}" >&2
}

# Recursion guard: a headless `claude -p` started by one of our hooks loads the same hooks.
if [[ ${SOPHIA_HOOK_GUARD:-} == 1 && ${SOPHIA_GUARDIAN_HOOK:-} != 1 ]]; then
  exit 0
fi

_sophia_on_err() {
  local rc=$1 line=$2
  trap - ERR
  note "internal error (exit $rc at line $line); skipped"
  exit 0
}
# Catches what ERR cannot (an unset variable under set -u, a failed `exit 1`). Exit 2 (a deliberate
# block) passes through.
_sophia_on_exit() {
  local rc=$1
  if [[ $rc != 0 && $rc != 2 ]]; then
    note "internal error (exit $rc); skipped"
    exit 0
  fi
}
trap '_sophia_on_err $? $LINENO' ERR
trap '_sophia_on_exit $?' EXIT

# SOPHIA_HOOK_DIR, SOPHIA_LIB, SOPHIA_HOME and sophia_python: the environment every hook shares.
# shellcheck source=hooks/lib/env.sh
. "${BASH_SOURCE[0]%/*}/env.sh" 2>/dev/null || { note "hooks/lib/env.sh is missing; reinstall the kit"; exit 0; }

# The bootstrap passed to `python -c`: puts SOPHIA_LIB first on sys.path and runs a module as __main__.
# -I drops PYTHONPATH, the user site and the script dir; -S drops site-packages: stdlib only.
# shellcheck disable=SC2016
SOPHIA_PY_BOOT='import sys, runpy; sys.path.insert(0, sys.argv[1]); m = sys.argv[2]; del sys.argv[1:3]; sys.argv[0] = m; runpy.run_module(m, run_name="__main__", alter_sys=True)'

# sophia_py MODULE [ARGS...]: run a stdlib-only module of ours (e.g. sophia.hooks.log_action).
sophia_py() {
  [[ -n ${PY:-} ]] || sophia_python || { note "no Python >= 3.11 found; skipped"; return 1; }
  "$PY" -I -S -c "$SOPHIA_PY_BOOT" "$SOPHIA_LIB" "$@"
}

# sophia_py_file FILE [ARGS...]: run "$PY" -I -S "$SOPHIA_LIB/FILE" (FILE relative to lib/).
sophia_py_file() {
  [[ -n ${PY:-} ]] || sophia_python || { note "no Python >= 3.11 found; skipped"; return 1; }
  local file=$1
  shift
  "$PY" -I -S "$SOPHIA_LIB/$file" "$@"
}

# Reads the whole payload (one JSON object) from stdin into SOPHIA_INPUT, with builtins only.
# shellcheck disable=SC2034  # SOPHIA_INPUT is read by the sourcing hook
sophia_read_stdin() {
  SOPHIA_INPUT=
  IFS= read -r -d '' SOPHIA_INPUT || true
}
