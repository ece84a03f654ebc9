#!/usr/bin/env bash
# Sophia System 3 — session_end.sh.
# Stop (after every assistant turn): upsert this session's episode. SessionEnd: finalise it,
# rotate old buffers, launch the opted-in reflection detached (SessionEnd has a 1.5 s budget).
# The work is done by the standard-library module lib/sophia/hooks/session_end.py, started through
# lib/sophia/hooks/launch.py (python -I -S) so that it loads from cached bytecode.
# Never fails the session: any error exits 0 with at most one line on stderr.
set -euo pipefail
_here=${BASH_SOURCE[0]}
[[ $_here == */* ]] || _here=./$_here
_here=${_here%/*}
if [[ -r $_here/lib/common.sh ]]; then
  # shellcheck source=/dev/null
  . "$_here/lib/common.sh"
else # minimal fallback while hooks/lib/common.sh is not installed
  umask 077
  [[ ${SOPHIA_HOOK_GUARD:-} == 1 ]] && exit 0
  trap 'exit 0' EXIT
  SOPHIA_HOME=${SOPHIA_HOME:-$HOME/.sophia}
  SOPHIA_LIB=$_here/../lib
  sophia_py_file() {
    local py=${SOPHIA_PYTHON:-$SOPHIA_HOME/venv/bin/python} f=$1
    [[ -x $py ]] || py=python3
    shift
    "$py" -I -S "$SOPHIA_LIB/$f" "$@"
  }
fi
sophia_py_file sophia/hooks/launch.py session_end
