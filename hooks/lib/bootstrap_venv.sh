#!/usr/bin/env bash
# One-time venv bootstrap for a plugin install (`/plugin install sophia-system3`).
#
# The hooks are standard-library Python and run from the plugin folder with the system python3; the
# `s3` CLI (pydantic, typer, optional embeddings) needs a venv. session_start.sh calls
#
#   "$SOPHIA_HOOK_DIR/lib/bootstrap_venv.sh" --detach
#
# when CLAUDE_PLUGIN_ROOT is set. That returns at once (well under 50 ms): if the venv is ready for
# this plugin version it does nothing; otherwise it starts `--run` detached (setsid nohup, every
# descriptor redirected, so the session never waits on it) and returns. `--run` takes a lock (only
# one bootstrap at a time), sources the plugin's install.sh and runs its venv steps: the venv in
# $SOPHIA_HOME/venv, torch + the package (embeddings unless SOPHIA_BOOTSTRAP_EMBEDDINGS=0), the
# ~/.local/bin/s3 launcher, `s3 init`. Output goes to $SOPHIA_HOME/logs/bootstrap.log. Success is
# stamped in $SOPHIA_HOME/run/bootstrap.done ("version<TAB>s3 path"); a failure in
# $SOPHIA_HOME/run/bootstrap.failed, and no new attempt starts for SOPHIA_BOOTSTRAP_RETRY seconds
# (default 86400) unless that file is deleted.
#
# Usage: bootstrap_venv.sh [--detach | --run | --status]
#   --status prints ready | running | failed | missing, exit 0.

# shellcheck source-path=SCRIPTDIR
set -euo pipefail
umask 077

BOOT_SELF=${BASH_SOURCE[0]}
[[ $BOOT_SELF == /* ]] || BOOT_SELF=$PWD/$BOOT_SELF
BOOT_ROOT=${BOOT_SELF%/hooks/lib/*} # the plugin (or checkout) root
# SOPHIA_HOME as every hook finds it.
# shellcheck source=hooks/lib/env.sh
. "${BOOT_SELF%/*}/env.sh"
BOOT_RUN=$SOPHIA_HOME/run
BOOT_DONE=$BOOT_RUN/bootstrap.done
BOOT_FAILED=$BOOT_RUN/bootstrap.failed
BOOT_LOCK=$BOOT_RUN/bootstrap.lock
BOOT_LOG=$SOPHIA_HOME/logs/bootstrap.log
BOOT_RETRY=${SOPHIA_BOOTSTRAP_RETRY:-86400}

# The package version, read from pyproject.toml with builtins only.
boot_version() {
  local line
  BOOT_VERSION=
  [[ -r $BOOT_ROOT/pyproject.toml ]] || return 0
  while IFS= read -r line; do
    if [[ $line =~ ^version[[:space:]]*=[[:space:]]*\"([^\"]+)\" ]]; then
      BOOT_VERSION=${BASH_REMATCH[1]}
      return 0
    fi
  done <"$BOOT_ROOT/pyproject.toml"
}

# ready: the stamp names this version and its s3 still exists.
boot_ready() {
  local version s3
  [[ -r $BOOT_DONE ]] || return 1
  IFS=$'\t' read -r version s3 <"$BOOT_DONE" || true
  [[ $version == "$BOOT_VERSION" && -n $s3 && -x $s3 ]]
}

boot_running() {
  [[ -e $BOOT_LOCK ]] || return 1
  # flock -n succeeds only when nobody holds it.
  if flock -n "$BOOT_LOCK" true 2>/dev/null; then return 1; fi
  return 0
}

boot_failed_recently() {
  local when now
  [[ -r $BOOT_FAILED ]] || return 1
  IFS= read -r when <"$BOOT_FAILED" || true
  [[ $when =~ ^[0-9]+$ ]] || return 1
  printf -v now '%(%s)T' -1
  ((now - when < BOOT_RETRY))
}

cmd_status() {
  boot_version
  if boot_ready; then
    echo ready
  elif boot_running; then
    echo running
  elif boot_failed_recently; then
    echo failed
  else
    echo missing
  fi
}

cmd_detach() {
  boot_version
  boot_ready && return 0
  boot_failed_recently && return 0
  command -v setsid >/dev/null 2>&1 && command -v flock >/dev/null 2>&1 || return 0
  boot_running && return 0
  mkdir -p "$BOOT_RUN" "${BOOT_LOG%/*}"
  # Detached: own session, no terminal, every descriptor away from the hook's pipes.
  SOPHIA_HOOK_GUARD=1 setsid nohup bash "$BOOT_SELF" --run </dev/null >>"$BOOT_LOG" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  return 0
}

cmd_run() {
  boot_version
  mkdir -p "$BOOT_RUN" "${BOOT_LOG%/*}"
  exec 9>>"$BOOT_LOCK"
  # -w: a --status probe holds the lock for a moment; a real run holds it for minutes.
  if ! flock -w 3 9; then
    echo "bootstrap: another bootstrap is running; nothing to do"
    return 0
  fi
  printf '\n==> bootstrap %s (version %s) from %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "${BOOT_VERSION:-?}" "$BOOT_ROOT"
  if boot_ready; then
    echo "bootstrap: already done"
    return 0
  fi
  if [[ ! -f $BOOT_ROOT/install.sh ]]; then
    echo "bootstrap: $BOOT_ROOT/install.sh not found; cannot build the venv"
    boot_fail
    return 0
  fi
  local rc=0
  # A subshell: install.sh's _exiterr exits it, not us.
  (
    # shellcheck source=../../install.sh
    . "$BOOT_ROOT/install.sh"
    ASSUME_YES=1 PROJECT_DIR='' DRY_RUN=0 TEAM=0 EMBEDDINGS=${SOPHIA_BOOTSTRAP_EMBEDDINGS:-1}
    resolve_paths
    install_venv_only
    printf '%s\t%s\n' "$BOOT_VERSION" "$S3_BIN" >"$BOOT_DONE.tmp"
    mv -f "$BOOT_DONE.tmp" "$BOOT_DONE"
  ) || rc=$?
  if ((rc != 0)); then
    echo "bootstrap: failed (exit $rc); next attempt in ${BOOT_RETRY}s, or delete $BOOT_FAILED and start a session"
    boot_fail
    return 0
  fi
  rm -f "$BOOT_FAILED"
  echo "bootstrap: done"
}

boot_fail() {
  local now
  printf -v now '%(%s)T' -1
  printf '%s\n' "$now" >"$BOOT_FAILED"
}

case ${1:---detach} in
  --detach) cmd_detach ;;
  --run) cmd_run ;;
  --status) cmd_status ;;
  -h | --help) sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$BOOT_SELF" ;;
  *)
    echo "usage: bootstrap_venv.sh [--detach | --run | --status]" >&2
    exit 0
    ;;
esac
exit 0
