# shellcheck shell=bash
# What install.sh and uninstall.sh share: messages, --dry-run, --help, finding Python 3.11+,
# and where the state and the Claude Code folder are. Sourced, never run; the sourcing script
# sets PROG (its name, for messages) and SCRIPT (its path, whose header comment is its --help).
# find_python is the one interpreter chooser of install.sh, uninstall.sh, test.sh and scripts/
# (the hooks choose theirs in hooks/lib/env.sh: the kit's venv, then a cached real interpreter).

_exiterr() {
  printf '%s: error: %s\n' "$PROG" "$1" >&2
  exit "${2:-1}"
}
say() { printf '==> %s\n' "$*"; }
info() { printf '    %s\n' "$*"; }
warn() { printf '%s: warning: %s\n' "$PROG" "$*" >&2; }

# Runs "$@", or only prints it under --dry-run.
run() {
  if [[ ${DRY_RUN:-0} == 1 ]]; then
    printf '    would run: %s\n' "$*"
  else
    "$@"
  fi
}

# --help: the script's header comment (from line 2 to the first blank line).
usage() {
  sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$SCRIPT"
}

# Prints the real interpreter (never a shim) of the first Python >= 3.11 among $SOPHIA_PYTHON,
# python3.13 .. python3.11, python3, then any extra candidates given as arguments.
find_python() {
  local cand exe
  local -a cands=()
  [[ -n ${SOPHIA_PYTHON:-} ]] && cands+=("$SOPHIA_PYTHON")
  cands+=(python3.13 python3.12 python3.11 python3 "$@")
  for cand in "${cands[@]}"; do
    command -v "$cand" >/dev/null 2>&1 || continue
    exe=$("$cand" -c 'import sys; print(sys.executable if sys.version_info >= (3, 11) else "")' 2>/dev/null) || continue
    if [[ -n $exe && -x $exe ]]; then
      printf '%s\n' "$exe"
      return 0
    fi
  done
  return 1
}

# Sets SOPHIA_HOME (absolute), MANIFEST, and CLAUDE_DIR: PROJECT_DIR/.claude under --project, else
# ~/.claude.
# shellcheck disable=SC2034  # the variables are the sourcing script's
resolve_home_and_claude_dir() {
  [[ -n ${HOME:-} ]] || _exiterr "HOME is not set"
  SOPHIA_HOME=${SOPHIA_HOME:-$HOME/.sophia}
  [[ $SOPHIA_HOME == /* ]] || SOPHIA_HOME=$PWD/$SOPHIA_HOME
  MANIFEST=$SOPHIA_HOME/install-manifest.json
  if [[ -n $PROJECT_DIR ]]; then
    [[ -d $PROJECT_DIR ]] || _exiterr "--project: $PROJECT_DIR is not a directory"
    PROJECT_DIR=$(cd "$PROJECT_DIR" && pwd)
    CLAUDE_DIR=$PROJECT_DIR/.claude
  else
    CLAUDE_DIR=$HOME/.claude
  fi
}
