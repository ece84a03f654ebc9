#!/usr/bin/env bash
# Run every test of the kit. Installs what a fresh machine lacks, then runs the lint gates
# (ruff, mypy, shellcheck), pytest (unit, integration, end-to-end with the real claude and codex clients)
# and bats (hooks, install/uninstall); mypy and bats run beside pytest. Usage: ./test.sh [pytest args...]
#   SOPHIA_TEST_SKIP_INSTALL=1  use what is installed, install nothing
set -euo pipefail
umask 022
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$ROOT"
VENV=${SOPHIA_TEST_VENV:-$ROOT/.venv}
CACHE=$ROOT/.cache
CLAUDE_VERSION=2.1.197
CODEX_VERSION=0.171.0
TORCH_SPEC=${SOPHIA_TORCH_SPEC:-torch==2.13.0}

# The interpreter chooser install.sh and uninstall.sh use (find_python); our own say and die below.
PROG=test.sh SCRIPT=${BASH_SOURCE[0]}
# shellcheck source=scripts/common.sh
. "$ROOT/scripts/common.sh"

say() { printf '\n==> %s\n' "$*"; }
die() { printf 'test.sh: %s\n' "$*" >&2; exit 1; }

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }

install_system() {
  local missing=()
  for tool in bats jq shellcheck; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
  [[ -x /usr/bin/chromium ]] || missing+=(chromium)  # tests/ui/test_browser.py drives Debian's build
  ((${#missing[@]})) || return 0
  say "installing ${missing[*]} (apt)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# The real clients of the end-to-end tests, pinned: claude and codex, in one npm call (a second
# `npm install --no-save` into the same folder would prune the first package).
install_clients() {
  local bin=$CACHE/node/node_modules/.bin
  if [[ -x $bin/claude && $("$bin/claude" --version 2>/dev/null) == "$CLAUDE_VERSION"* &&
    -x $bin/codex && $("$bin/codex" --version 2>/dev/null) == "codex-cli $CODEX_VERSION" ]]; then
    return 0
  fi
  command -v npm >/dev/null 2>&1 || die "npm is needed for the end-to-end tests (apt-get install nodejs npm)"
  say "installing @anthropic-ai/claude-code@$CLAUDE_VERSION and @openai/codex@$CODEX_VERSION (npm, into .cache/node)"
  mkdir -p "$CACHE/node"
  (cd "$CACHE/node" && npm install --silent --no-audit --no-fund --no-save \
    "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" >/dev/null)
}

install_python() {
  local stamp=$VENV/.sophia-test-stamp want
  want=$(sha256sum < pyproject.toml | cut -c1-16)
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
    "$VENV/bin/pip" install -q --no-deps -e . >/dev/null 2>&1 || true
    return 0
  fi
  say "preparing the test venv ($VENV)"
  if [[ ! -x $VENV/bin/python ]]; then
    local base
    # shellcheck disable=SC2119  # no extra candidates
    base=$(find_python) || die "Python 3.11 or newer is needed (set SOPHIA_PYTHON=/path/to/python3.11)"
    "$base" -m venv "$VENV"
  fi
  "$VENV/bin/pip" install -q --upgrade pip >/dev/null 2>&1 || true
  "$VENV/bin/pip" install -q "$TORCH_SPEC" 2>&1 | grep -v '^WARNING: Location' || true
  "$VENV/bin/pip" install -q -e ".[dev,embeddings,team]" 2>&1 | grep -v '^WARNING: Location' || true
  "$VENV/bin/python" -c 'import pydantic, typer, pytest, jsonschema, hypothesis, Stemmer, mcp' || die "python dependencies failed to install"
  echo "$want" > "$stamp"
}

if [[ -z ${SOPHIA_TEST_SKIP_INSTALL:-} ]]; then
  install_system
  install_clients
  install_python
fi
export PATH="$VENV/bin:$CACHE/node/node_modules/.bin:$PATH"
export SOPHIA_TEST_CLAUDE=$CACHE/node/node_modules/.bin/claude
export SOPHIA_TEST_CODEX=$CACHE/node/node_modules/.bin/codex
export SOPHIA_TEST_VENV=$VENV

# mypy (a minute from a fresh clone) and bats (six minutes) run beside pytest, whose processes leave a core
# idle most of the time: each in a process group of its own, its output kept in a file and printed after
# pytest's. Each has its own temp homes and processes (none that pytest's orphan guard or bats' cleanup sees).
declare -A beside_pid=() beside_log=()
beside() {
  local name=$1
  shift
  beside_log[$name]=$(mktemp "${TMPDIR:-/tmp}/sophia-test-$name.XXXXXX")
  setsid "$@" >"${beside_log[$name]}" 2>&1 </dev/null &
  beside_pid[$name]=$!
}
# Waits for one started by beside, prints its output under the title $2; returns its exit status.
report() {
  local rc=0
  say "$2"
  wait "${beside_pid[$1]}" || rc=$?
  cat "${beside_log[$1]}"
  rm -f "${beside_log[$1]}"
  unset "beside_pid[$1]" "beside_log[$1]"
  return "$rc"
}
stop_beside() { # on an early exit (Ctrl-C, a failed lint): nothing started here outlives test.sh
  local name
  for name in "${!beside_pid[@]}"; do
    kill -TERM -- "-${beside_pid[$name]}" 2>/dev/null || true
    rm -f "${beside_log[$name]}"
  done
}
trap stop_beside EXIT
trap 'exit 130' INT  # Ctrl-C: pytest exits 2 on it, then this stops here (not waiting for bats)
trap 'exit 143' TERM

say "lint: ruff"
ruff check lib tests bench
say "lint: shellcheck"
mapfile -t shells < <(git ls-files '*.sh' '*.bash' 'hooks/*' '.ci/*' | grep -vE '\.(json|md|py)$' || true)
((${#shells[@]})) && shellcheck -x "${shells[@]}"

# Every s3 process the tests start imports the kit from lib/: compiled here once, so that none compiles it
# again where PYTHONDONTWRITEBYTECODE is set (many containers; 18% of test_cli_core.py's CPU). Python still
# checks each .pyc against its source.
python -m compileall -q lib >/dev/null || true
beside mypy mypy
if compgen -G "tests/bats/*.bats" >/dev/null; then beside bats bats tests/bats; fi
say "pytest (mypy and bats run beside it: their output follows pytest's)"
failed=()
python -m pytest "$@" || failed+=(pytest)
report mypy "lint: mypy" || failed+=(mypy)
if [[ -n ${beside_pid[bats]:-} ]]; then report bats bats || failed+=(bats); fi
((${#failed[@]} == 0)) || die "failed: ${failed[*]}"
say "all tests passed"
