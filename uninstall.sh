#!/usr/bin/env bash
# Remove Sophia System 3: exactly what install.sh recorded in $SOPHIA_HOME/install-manifest.json,
# and only our hook entries in settings.json (backed up first; your own keys and hooks stay).
# The memory in $SOPHIA_HOME stays unless --purge.
#
# Usage: ./uninstall.sh [--yes] [--purge] [--project DIR] [--dry-run] [-h]
#   --project DIR  remove the install made with `install.sh --project DIR` (default: the user install)
#   --purge        also delete $SOPHIA_HOME (all memory), after removing every install it lists;
#                  asks first unless --yes; refused without --yes when stdin is not a terminal
#   --yes          no questions
#   --dry-run      print what would be removed, change nothing

set -euo pipefail
umask 077

SOPHIA_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

PROG=uninstall.sh SCRIPT=${BASH_SOURCE[0]}
# shellcheck source=scripts/common.sh
. "$SOPHIA_SRC/scripts/common.sh"

parse_args() {
  ASSUME_YES=0 PURGE=0 PROJECT_DIR='' DRY_RUN=0
  while (($#)); do
    case $1 in
      -y | --yes) ASSUME_YES=1 ;;
      --purge) PURGE=1 ;;
      --project)
        (($# >= 2)) || _exiterr "--project needs a directory"
        PROJECT_DIR=$2
        shift
        ;;
      --project=*) PROJECT_DIR=${1#*=} ;;
      --dry-run | -n) DRY_RUN=1 ;;
      -h | --help)
        usage
        exit 0
        ;;
      *) _exiterr "unknown option: $1 (see --help)" ;;
    esac
    shift
  done
}

resolve_paths() {
  resolve_home_and_claude_dir
}

# The helpers come from the installed kit when the checkout is gone, else from the checkout.
helper() {
  local name=$1 dir
  shift
  for dir in "$SOPHIA_SRC/lib/sophia/install" "$SOPHIA_HOME/kit/lib/sophia/install"; do
    if [[ -f $dir/$name.py ]]; then
      "$PY" -I -S "$dir/$name.py" "$@"
      return
    fi
  done
  _exiterr "cannot find $name.py (neither in $SOPHIA_SRC nor in $SOPHIA_HOME/kit)"
}

# Reads the manifest's plan for the chosen target(s) into arrays.
read_plan() {
  TARGETS=() SETTINGS_FILES=() CREATED_SETTINGS=() COMMANDS=() FILES=() DIRS=() SHARED_KIT='' SHARED_VENV='' SHARED_LAUNCHER=''
  local -a sel
  if [[ $PURGE == 1 ]]; then sel=(--all); else sel=(--claude-dir "$CLAUDE_DIR"); fi
  local kind value plan
  plan=$(helper manifest get --manifest "$MANIFEST" "${sel[@]}") || _exiterr "cannot read $MANIFEST"
  while IFS=$'\t' read -r kind value; do
    case $kind in
      target) TARGETS+=("$value") ;;
      settings) SETTINGS_FILES+=("$value") ;;
      settings_created) CREATED_SETTINGS+=("$value") ;;
      command) COMMANDS+=("$value") ;;
      file) FILES+=("$value") ;;
      dir) DIRS+=("$value") ;;
      kit) SHARED_KIT=$value ;;
      venv) SHARED_VENV=$value ;;
      launcher) SHARED_LAUNCHER=$value ;;
    esac
  done <<<"$plan"
}

# Deletes a path only if it is where the manifest says and looks like ours.
remove_path() {
  local p=$1
  [[ -n $p && $p == /* && $p != / ]] || return 0
  if [[ -e $p || -L $p ]]; then
    run rm -rf -- "$p"
    [[ $DRY_RUN == 1 ]] || info "removed $p"
  fi
}

step_settings() {
  local s c out rc
  local -a args
  for s in "${SETTINGS_FILES[@]}"; do
    [[ -f $s ]] || continue
    args=(remove --settings "$s" --kit "${SHARED_KIT:-$SOPHIA_HOME/kit}")
    for c in "${COMMANDS[@]}"; do args+=(--forget "$c"); done
    [[ $DRY_RUN == 1 ]] && args+=(--dry-run)
    # A settings.json the install created goes again when nothing but ours was in it.
    for c in "${CREATED_SETTINGS[@]}"; do [[ $c == "$s" ]] && args+=(--delete-if-empty); done
    rc=0
    out=$(helper settings_merge "${args[@]}") || rc=$?
    if ((rc != 0)); then
      warn "left $s as it is (see above); remove the Sophia hook entries by hand"
      continue
    fi
    info "settings: $s: $out"
  done
}

confirm_purge() {
  [[ $PURGE == 1 ]] || return 0
  [[ -d $SOPHIA_HOME ]] || return 0
  [[ $ASSUME_YES == 1 || $DRY_RUN == 1 ]] && return 0
  if [[ ! -t 0 ]]; then
    _exiterr "--purge deletes all memory in $SOPHIA_HOME; run with --yes to confirm (no terminal to ask on)"
  fi
  local answer
  read -r -p "Delete ALL Sophia memory in $SOPHIA_HOME (episodes, rules, models)? This cannot be undone. [y/N] " answer
  [[ $answer == [yY]* ]] || _exiterr "cancelled; nothing was removed"
}

main() {
  parse_args "$@"
  resolve_paths
  confirm_purge
  PY=$(find_python "$SOPHIA_HOME/venv/bin/python") || _exiterr "Python 3.11 or newer is needed to edit settings.json"
  if [[ ! -f $MANIFEST ]]; then
    if [[ $PURGE == 1 && -d $SOPHIA_HOME ]]; then
      say "no install manifest; purging $SOPHIA_HOME"
      remove_path "$SOPHIA_HOME"
      return 0
    fi
    say "nothing to uninstall: $MANIFEST not found"
    return 0
  fi
  read_plan
  if ((${#TARGETS[@]} == 0)); then
    say "no install recorded for $CLAUDE_DIR in $MANIFEST (installed with --project DIR?)"
    return 0
  fi
  say "removing Sophia System 3 from ${TARGETS[*]}"
  step_settings
  local p
  for p in "${DIRS[@]}" "${FILES[@]}"; do remove_path "$p"; done
  # Forget the target(s) while the helpers still exist, then remove the shared parts.
  if [[ $DRY_RUN == 0 ]]; then
    if [[ $PURGE == 1 ]]; then
      helper manifest forget --manifest "$MANIFEST" --all
    else
      helper manifest forget --manifest "$MANIFEST" --claude-dir "$CLAUDE_DIR"
    fi
  fi
  if [[ -n $SHARED_LAUNCHER ]]; then
    if [[ -f $SHARED_LAUNCHER ]] && ! grep -q '^# sophia-system3 launcher' "$SHARED_LAUNCHER"; then
      warn "$SHARED_LAUNCHER is no longer ours; left alone"
    else
      remove_path "$SHARED_LAUNCHER"
    fi
  fi
  remove_path "$SHARED_KIT"
  remove_path "$SHARED_VENV"
  if [[ $PURGE == 1 ]]; then
    remove_path "$SOPHIA_HOME"
    say "purged $SOPHIA_HOME"
  elif [[ -d $SOPHIA_HOME ]]; then
    say "kept your memory in $SOPHIA_HOME (delete it with ./uninstall.sh --purge)"
  fi
  [[ $DRY_RUN == 1 ]] && say "dry run: nothing was changed"
  say "done"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  main "$@"
fi
