#!/usr/bin/env bash
# PLACEHOLDER for session_start.sh (owned by another engineer; replaced at merge). Reads the payload, exits 0.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
case ${BASH_SOURCE[0]} in */*) _here=${BASH_SOURCE[0]%/*} ;; *) _here=. ;; esac
# shellcheck source=lib/common.sh
. "$_here/lib/common.sh"
sophia_read_stdin
# Plugin mode: make sure the s3 venv exists, without ever blocking the session (returns at once).
if [[ -n ${CLAUDE_PLUGIN_ROOT:-} ]]; then
  "$SOPHIA_HOOK_DIR/lib/bootstrap_venv.sh" --detach || true
fi
exit 0
