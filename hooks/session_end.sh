#!/usr/bin/env bash
# Sophia System 3 — session_end.sh.
# Stop (after every assistant turn): upsert this session's episode. SessionEnd: finalise it,
# rotate old buffers, launch the opted-in reflection detached (SessionEnd has a 1.5 s budget).
# The work is done by the standard-library module lib/sophia/hooks/session_end.py, started through
# lib/sophia/hooks/launch.py (python -I -S) so that it loads from cached bytecode, or by the resident hook runner
# when one answers (sophia_hook in hooks/lib/common.sh: no Python started).
# Never fails the session: any error exits 0 with at most one line on stderr.
set -euo pipefail
_here=${BASH_SOURCE[0]}
[[ $_here == */* ]] || _here=./$_here
_here=${_here%/*}
# shellcheck source=hooks/lib/common.sh
. "$_here/lib/common.sh" 2>/dev/null || { echo "sophia ${BASH_SOURCE[0]##*/}: hooks/lib/common.sh is missing; reinstall the kit" >&2; exit 0; }
sophia_hook session_end
