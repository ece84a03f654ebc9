# shellcheck shell=bash
# Shared helpers for every Sophia System 3 hook. Source it first thing:
#
#   #!/usr/bin/env bash
#   set -euo pipefail
#   # shellcheck source=hooks/lib/common.sh
#   . "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
#
# What sourcing does (bash builtins only, no subprocess on the common path):
#   - umask 077 (everything a hook writes is private);
#   - the recursion guard: SOPHIA_HOOK_GUARD=1 makes the hook exit 0 at once, unless the hook set
#     SOPHIA_GUARDIAN_HOOK=1 (not exported) before sourcing (the guardian still guards);
#   - fail-open ERR and EXIT traps: a hook's own failure (any exit status but 0 and 2) exits 0 with one
#     line on stderr, never a traceback. A hook that must fail closed (the guardian) replaces them:
#     `trap 'my_handler' ERR EXIT`.
#   - sources env.sh (SOPHIA_HOME, SOPHIA_HOOK_DIR, SOPHIA_LIB and sophia_python: see there) and sets
#     SOPHIA_HOOK_NAME (file name without .sh).
#
# Functions: note MSG (one line to stderr), sophia_python (from env.sh: sets PY to a real interpreter,
# never a pyenv shim, cached in $SOPHIA_HOME/run/python), sophia_py MODULE ARGS... (runs a stdlib-only module of
# ours as "$PY" -I -S with SOPHIA_LIB on sys.path), sophia_py_file FILE ARGS... (runs "$PY" -I -S
# "$SOPHIA_LIB/FILE"), sophia_read_stdin (reads the whole hook payload into SOPHIA_INPUT), sophia_hook NAME
# (runs the Python hook lib/sophia/hooks/NAME.py: by the resident hook runner, else one-shot),
# sophia_resident_alive KIND (whether a resident of this home and kit runs: no fork).

umask 077
set -E

SOPHIA_HOOK_NAME=${0##*/}
SOPHIA_HOOK_NAME=${SOPHIA_HOOK_NAME%.sh}

# One line on stderr, prefixed with the hook's name. Never more than one line.
note() {
  local msg=$*
  msg=${msg//$'\n'/ }
  printf 'sophia %s: %s\n' "$SOPHIA_HOOK_NAME" "${msg:0:400}" >&2
}

# Recursion guard: a headless `claude -p` started by one of our hooks loads the same hooks.
if [[ ${SOPHIA_HOOK_GUARD:-} == 1 && ${SOPHIA_GUARDIAN_HOOK:-} != 1 ]]; then
  exit 0
fi

_sophia_on_err() {
  local rc=$1 line=$2
  trap - ERR
  note "internal error (exit $rc at line $line); skipped"
  exit 0
}
# Catches what ERR cannot (an unset variable under set -u, a failed `exit 1`). Exit 2 (a deliberate
# block) passes through.
_sophia_on_exit() {
  local rc=$1
  if [[ $rc != 0 && $rc != 2 ]]; then
    note "internal error (exit $rc); skipped"
    exit 0
  fi
}
trap '_sophia_on_err $? $LINENO' ERR
trap '_sophia_on_exit $?' EXIT

# SOPHIA_HOOK_DIR, SOPHIA_LIB, SOPHIA_HOME and sophia_python: the environment every hook shares.
# shellcheck source=hooks/lib/env.sh
. "${BASH_SOURCE[0]%/*}/env.sh" 2>/dev/null || { note "hooks/lib/env.sh is missing; reinstall the kit"; exit 0; }

# The bootstrap passed to `python -c`: puts SOPHIA_LIB first on sys.path and runs a module as __main__.
# -I drops PYTHONPATH, the user site and the script dir; -S drops site-packages: stdlib only.
# shellcheck disable=SC2016
SOPHIA_PY_BOOT='import sys, runpy; sys.path.insert(0, sys.argv[1]); m = sys.argv[2]; del sys.argv[1:3]; sys.argv[0] = m; runpy.run_module(m, run_name="__main__", alter_sys=True)'

# sophia_py MODULE [ARGS...]: run a stdlib-only module of ours (e.g. sophia.hooks.log_action).
sophia_py() {
  [[ -n ${PY:-} ]] || sophia_python || { note "no Python >= 3.11 found; skipped"; return 1; }
  "$PY" -I -S -c "$SOPHIA_PY_BOOT" "$SOPHIA_LIB" "$@"
}

# sophia_py_file FILE [ARGS...]: run "$PY" -I -S "$SOPHIA_LIB/FILE" (FILE relative to lib/).
sophia_py_file() {
  [[ -n ${PY:-} ]] || sophia_python || { note "no Python >= 3.11 found; skipped"; return 1; }
  local file=$1
  shift
  "$PY" -I -S "$SOPHIA_LIB/$file" "$@"
}

# Reads the whole payload (one JSON object) from stdin into SOPHIA_INPUT, with builtins only. `read -N`
# reads a pipe in blocks (`read -d ''` reads it one byte per system call: 0.3 s for 100 KB); LC_ALL=C
# makes N a byte count.
# shellcheck disable=SC2034  # SOPHIA_INPUT is read by the sourcing hook
sophia_read_stdin() {
  local LC_ALL=C
  SOPHIA_INPUT=
  IFS= read -r -N 33554432 SOPHIA_INPUT || true
}

# sophia_hook NAME: do hook NAME's work (lib/sophia/hooks/NAME.py) on this hook's payload (stdin) and
# return its exit code. By the resident hook runner of this kit and state home when one answers
# (lib/sophia/hooks/resident.py: the modules already loaded, no Python started); else one-shot
# (python -I -S launch.py NAME), which then stays on as that resident. SOPHIA_HOOK_RESIDENT=0: one-shot
# only, and none is started.
sophia_hook() {
  local name=$1 rc=0
  if [[ ${SOPHIA_HOOK_RESIDENT:-1} == 0 ]]; then
    sophia_py_file sophia/hooks/launch.py "$name"
    return
  fi
  if ! _sophia_resident_open; then
    sophia_py_file sophia/hooks/launch.py "$name" --serve "$SOPHIA_LIB"
    return
  fi
  sophia_read_stdin
  _sophia_resident_ask "$name" || rc=$?
  exec 8>&-
  case $rc in
    0) return "$_s3_code" ;;
    3) note "the resident hook runner did not answer in time; skipped"; return 0 ;;
    # it declined, or is gone: one-shot, staying on if this home has no resident of its own (a key file
    # copied with the home names another home's)
    *) sophia_py_file sophia/hooks/launch.py "$name" --serve "$SOPHIA_LIB" <<<"$SOPHIA_INPUT" ;;
  esac
}

# sophia_resident_alive KIND: whether this state home's resident of KIND (hooks: the hook runner, guardian:
# the guardian's analyzer) runs this kit. Its key file, run/KIND/resident (0600 in a 0700 folder, -O: ours;
# the layout is lib/sophia/resident.py's), names its port, two secrets, the lib folder it runs and its pid:
# true only for a live pid of ours (kill -0) running this kit's lib. Sets _s3_port, _s3_rq, _s3_ra.
sophia_resident_alive() {
  local dir=$SOPHIA_HOME/run/$1 lib="" pid=""
  local key=$dir/resident
  _s3_port="" _s3_rq="" _s3_ra=""
  [[ -e $key && -O $dir && -O $key ]] || return 1
  { IFS= read -r _s3_port && IFS= read -r _s3_rq && IFS= read -r _s3_ra && IFS= read -r lib && IFS= read -r pid; } <"$key" 2>/dev/null || return 1
  [[ $_s3_port =~ ^[0-9]+$ && $pid =~ ^[0-9]+$ && ${#_s3_rq} -ge 32 && ${#_s3_ra} -ge 32 && $lib == "$SOPHIA_LIB" ]] || return 1
  kill -0 "$pid" 2>/dev/null
}

# The resident hook runner of this home and kit (sophia_resident_alive hooks): the payload goes only to it.
# Opens fd 8 to it; returns 1 (nothing opened) when there is none.
_sophia_resident_open() {
  sophia_resident_alive hooks || return 1
  { exec 8<>"/dev/tcp/127.0.0.1/$_s3_port"; } 2>/dev/null || return 1
}

# Sends the request on fd 8: the secret, the hook's name, folder, exported environment and payload, in one
# write; reads the answer: a head of fixed width (answer secret, exit code in 3 digits or "---", stdout
# and stderr byte counts in 8 digits each, a newline: one `read -N`, where a line is read a byte per system
# call), then both. 0: answered (printed; its code in _s3_code); 3: no answer within 4 s (the work may
# still be done there: not run twice); 4: declined; 1: no whole answer (the resident is gone).
_sophia_resident_ask() {
  local k head code olen elen out="" err=""
  local d8='[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]' n=${#_s3_ra}
  local -a req=("S3H1 $_s3_rq" "$1" "$PWD") env=()
  for k in ${!A*} ${!B*} ${!C*} ${!D*} ${!E*} ${!F*} ${!G*} ${!H*} ${!I*} ${!J*} ${!K*} ${!L*} ${!M*} ${!N*} \
    ${!O*} ${!P*} ${!Q*} ${!R*} ${!S*} ${!T*} ${!U*} ${!V*} ${!W*} ${!X*} ${!Y*} ${!Z*} ${!a*} ${!b*} ${!c*} \
    ${!d*} ${!e*} ${!f*} ${!g*} ${!h*} ${!i*} ${!j*} ${!k*} ${!l*} ${!m*} ${!n*} ${!o*} ${!p*} ${!q*} ${!r*} \
    ${!s*} ${!t*} ${!u*} ${!v*} ${!w*} ${!x*} ${!y*} ${!z*} ${!_*}; do
    [[ -n ${!k+x} && ${!k@a} == *x* ]] && env+=("$k=${!k}")
  done
  trap '' PIPE # a peer that closes early makes printf fail, not kill this hook
  printf '%s\0' "${req[@]}" "${#env[@]}" "${env[@]}" "$SOPHIA_INPUT" >&8 2>/dev/null || return 1
  local LC_ALL=C # byte counts (set after the environment is taken: the hook's own LC_ALL goes as it is)
  IFS= read -r -N $((n + 23)) -t 4 -u 8 head 2>/dev/null || { (($? > 128)) && return 3; return 1; }
  # shellcheck disable=SC2053  # $d8 is a pattern
  [[ ${head:0:n+5} == "$_s3_ra "[-0-9][-0-9][-0-9]" " && ${head:n+5:8} == $d8 && ${head:n+14:8} == $d8 && \
    ${head:n+13:1}${head:n+22} == " "$'\n' ]] || return 1
  code=${head:n+1:3} olen=$((10#${head:n+5:8})) elen=$((10#${head:n+14:8}))
  [[ $code == --- ]] && return 4
  [[ $code == [0-9][0-9][0-9] ]] || return 1
  code=$((10#$code))
  _sophia_read_n "$olen" out || return 1
  _sophia_read_n "$elen" err || return 1
  [[ -z $out ]] || printf '%s' "$out"
  [[ -z $err ]] || printf '%s' "$err" >&2
  _s3_code=$code
}

# _sophia_read_n N VAR: N bytes from fd 8 into VAR (in blocks: `read -N`; LC_ALL=C counts bytes).
_sophia_read_n() {
  local LC_ALL=C
  (($1)) || return 0
  IFS= read -r -N "$1" -t 4 -u 8 "$2" 2>/dev/null
}
