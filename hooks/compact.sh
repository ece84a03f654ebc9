#!/usr/bin/env bash
# Sophia System 3 — compact.sh.
# PreCompact / PostCompact (a long session is being compacted): when automatic learning is on, queue or
# update this session's digest job, with the compact summary, held until the session ends. Never starts
# a worker and never waits. The work is done by the standard-library module lib/sophia/hooks/compact.py,
# started through lib/sophia/hooks/launch.py (python -I -S) so that it loads from cached bytecode, or by the resident hook runner
# when one answers (sophia_hook in hooks/lib/common.sh: no Python started).
# Never fails the session: any error exits 0 with at most one line on stderr.
set -euo pipefail
_here=${BASH_SOURCE[0]}
[[ $_here == */* ]] || _here=./$_here
_here=${_here%/*}
# shellcheck source=hooks/lib/common.sh
. "$_here/lib/common.sh" 2>/dev/null || { echo "sophia ${BASH_SOURCE[0]##*/}: hooks/lib/common.sh is missing; reinstall the kit" >&2; exit 0; }
sophia_hook compact
