#!/usr/bin/env bash
# Remove Sophia System 3: exactly what install.sh recorded in $SOPHIA_HOME/install-manifest.json:
# our hook entries in settings.json (backed up first; your own keys and hooks stay), the System 3
# block of CLAUDE.md (your text and its mode put back), the s3-* skills and agents, the kit, the venv
# and launcher it created, and the folders it created once they are empty.
# The memory in $SOPHIA_HOME stays unless --purge. `s3 uninstall` does the same.
#
# Usage: ./uninstall.sh [--yes] [--purge] [--project DIR] [--dry-run] [--json] [-h]
#   --project DIR  remove the install made with `install.sh --project DIR` (default: the user install)
#   --purge        also delete $SOPHIA_HOME (all memory), after removing every install it lists;
#                  asks first unless --yes; refused without --yes when stdin is not a terminal
#   --yes          no questions
#   --dry-run      print what would be removed, change nothing
#   --json         print what was done as one JSON object

set -euo pipefail
umask 077

SOPHIA_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

PROG=uninstall.sh SCRIPT=${BASH_SOURCE[0]}
# shellcheck source=scripts/common.sh
. "$SOPHIA_SRC/scripts/common.sh"

# The work is done by lib/sophia/install/uninstall.py (shared with `s3 uninstall`), taken from this
# checkout, else from the installed kit.
main() {
  local a dir py
  for a in "$@"; do
    case $a in -h | --help) usage && return 0 ;; esac
  done
  [[ -n ${HOME:-} ]] || _exiterr "HOME is not set"
  local home=${SOPHIA_HOME:-$HOME/.sophia}
  py=$(find_python "$home/venv/bin/python") || _exiterr "Python 3.11 or newer is needed to edit settings.json"
  for dir in "$SOPHIA_SRC/lib/sophia/install" "$home/kit/lib/sophia/install"; do
    if [[ -f $dir/uninstall.py ]]; then
      exec "$py" -I -S "$dir/uninstall.py" "$@"
    fi
  done
  _exiterr "cannot find uninstall.py (neither in $SOPHIA_SRC nor in $home/kit)"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  main "$@"
fi
