# shellcheck shell=bash
# The environment every Sophia System 3 hook shares: where the state lives and which Python runs
# our modules. Sourced first thing by every hook (directly, or through common.sh):
#
#   . "${BASH_SOURCE[0]%/*}/lib/env.sh"
#
# Bash builtins only (no subprocess on sourcing), no traps, no `exit`: the guardian sources it and
# keeps its own fail-closed behaviour; common.sh sources it and adds the fail-open traps.
#
# Sets (and exports SOPHIA_HOME):
#   SOPHIA_HOOK_DIR  the hooks/ folder (absolute)
#   SOPHIA_LIB       the folder holding the `sophia` package (hooks/../lib)
#   SOPHIA_HOME      $SOPHIA_HOME if set, else the path in kit/.sophia_home (an install with a
#                    non-default home leaves it there: Claude Code runs hooks without our
#                    environment), else ~/.sophia. lib/sophia/paths.py resolves it the same way.
# Defines sophia_python: sets PY to a real Python >= 3.11 (never a pyenv shim), in this order:
#   $SOPHIA_PYTHON, the kit's venv ($SOPHIA_HOME/venv), the interpreter cached in
#   $SOPHIA_HOME/run/python, else python3 (resolved once, then cached). Returns 1 with PY empty
#   when there is none.

# Where this file lives, resolved without forking (dirname/readlink/cd would fork).
SOPHIA_HOOK_DIR=${BASH_SOURCE[0]}
[[ $SOPHIA_HOOK_DIR == */* ]] || SOPHIA_HOOK_DIR=./$SOPHIA_HOOK_DIR
SOPHIA_HOOK_DIR=${SOPHIA_HOOK_DIR%/*}    # .../hooks/lib
SOPHIA_HOOK_DIR=${SOPHIA_HOOK_DIR%/lib}  # .../hooks
[[ $SOPHIA_HOOK_DIR == /* ]] || SOPHIA_HOOK_DIR=$PWD/$SOPHIA_HOOK_DIR
# shellcheck disable=SC2034  # read by the sourcing hook
SOPHIA_LIB=$SOPHIA_HOOK_DIR/../lib

if [[ -z ${SOPHIA_HOME:-} && -r $SOPHIA_HOOK_DIR/../.sophia_home ]]; then
  IFS= read -r SOPHIA_HOME <"$SOPHIA_HOOK_DIR/../.sophia_home" || true
fi
SOPHIA_HOME=${SOPHIA_HOME:-${HOME:-/nonexistent}/.sophia}
export SOPHIA_HOME

sophia_python() {
  PY=${SOPHIA_PYTHON:-}
  [[ -n $PY && -x $PY ]] && return 0
  PY=$SOPHIA_HOME/venv/bin/python
  [[ -x $PY ]] && return 0
  PY=
  local cache=$SOPHIA_HOME/run/python cand found=
  if [[ -r $cache ]]; then
    IFS= read -r PY <"$cache" || true
    [[ -n $PY && -x $PY ]] && return 0
    PY=
  fi
  for cand in python3 python3.13 python3.12 python3.11; do
    type -P "$cand" >/dev/null || continue
    found=$("$cand" -I -S -c 'import sys; sys.version_info >= (3, 11) and print(sys.executable)' 2>/dev/null) || found=
    [[ -n $found && -x $found ]] && break
    found=
  done
  [[ -n $found ]] || return 1
  PY=$found
  if [[ -d $SOPHIA_HOME/run ]] || mkdir -p "$SOPHIA_HOME/run" 2>/dev/null; then
    { printf '%s\n' "$PY" >"$cache.$$" && mv -f "$cache.$$" "$cache"; } 2>/dev/null || rm -f "$cache.$$" 2>/dev/null || true
  fi
  return 0
}
