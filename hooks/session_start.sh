#!/usr/bin/env bash
# Sophia System 3 — session_start.sh.
# SessionStart: print additionalContext JSON (identity and creed, heuristics for this project, this
# project's foresight valid today, recent episodes and open knowledge gaps; nothing of another project),
# capped, and start the session's record of the memories its context holds.
# In a plugin install without a venv yet, also kicks off hooks/lib/bootstrap_venv.sh detached; starts the
# guardian's resident analyzer detached unless one of this kit runs.
# The work is done by the standard-library module lib/sophia/hooks/session_start.py, started through
# lib/sophia/hooks/launch.py (python -I -S) so that it loads from cached bytecode, or by the resident hook runner
# when one answers (sophia_hook in hooks/lib/common.sh: no Python started).
# Never fails the session: any error exits 0 with at most one line on stderr.
set -euo pipefail
_here=${BASH_SOURCE[0]}
[[ $_here == */* ]] || _here=./$_here
_here=${_here%/*}
# shellcheck source=hooks/lib/common.sh
. "$_here/lib/common.sh" 2>/dev/null || { echo "sophia ${BASH_SOURCE[0]##*/}: hooks/lib/common.sh is missing; reinstall the kit" >&2; exit 0; }
# Plugin install, no venv yet: start the one-time bootstrap detached (it returns at once).
if [[ -n ${CLAUDE_PLUGIN_ROOT:-} && ! -x $SOPHIA_HOME/venv/bin/python && -x $_here/lib/bootstrap_venv.sh ]]; then
  "$_here/lib/bootstrap_venv.sh" --detach </dev/null >/dev/null 2>&1 || true
fi
# The guardian's resident analyzer (lib/sophia/guardian/resident.py), detached: the guardian hook then
# answers without starting Python. Not when one of this kit runs already (its key file names a live pid:
# no fork): a second would only find the lock taken and exit, but its interpreter's start would compete
# for the CPU with this hook's own work. A stale key (a dead pid, another kit's lib) still starts one.
if [[ -d $SOPHIA_HOME && ${SOPHIA_GUARDIAN_RESIDENT:-1} != 0 ]] && ! sophia_resident_alive guardian && sophia_python; then
  "$PY" -I -S "$SOPHIA_LIB/sophia/guardian/resident.py" --home "$SOPHIA_HOME" --lib "$SOPHIA_LIB" </dev/null >/dev/null 2>&1 &
fi
sophia_hook session_start
