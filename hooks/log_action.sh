#!/usr/bin/env bash
# PLACEHOLDER for log_action.sh (owned by another engineer; replaced at merge). Reads the payload, exits 0.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
case ${BASH_SOURCE[0]} in */*) _here=${BASH_SOURCE[0]%/*} ;; *) _here=. ;; esac
# shellcheck source=lib/common.sh
. "$_here/lib/common.sh"
sophia_read_stdin
exit 0
