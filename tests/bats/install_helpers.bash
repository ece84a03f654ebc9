# shellcheck shell=bash
# Shared set-up for the install/uninstall/bootstrap bats tests.
#
# prepare_src_and_venv (call from setup_file) makes, once per file:
#   $SRC   a copy of the checkout (what git tracks plus the working tree), with a test skill and agent,
#          so builds never litter the real checkout;
#   $TVENV a venv without pip whose site-packages see the dev venv's packages (a .pth line), so
#          install.sh can reuse it via SOPHIA_VENV_PYTHON and pip-install the package in seconds
#          instead of downloading torch.
# The dev venv is $SOPHIA_TEST_VENV (set by test.sh), else /tmp/devvenv.

REPO_ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# how many hook entries hooks/hooks.json registers (counted there, not written down again)
# shellcheck disable=SC2034 # used by the .bats files that load this
OUR_HOOKS=$(jq '[.hooks[][] | .hooks[]] | length' "$REPO_ROOT/hooks/hooks.json")

dev_python() {
  local v
  for v in "${SOPHIA_TEST_VENV:-}" /tmp/devvenv; do
    [[ -n $v && -x $v/bin/python ]] && { echo "$v/bin/python"; return 0; }
  done
  return 1
}

prepare_src_and_venv() {
  export SRC=$BATS_FILE_TMPDIR/src TVENV=$BATS_FILE_TMPDIR/venv
  local dev base purelib
  dev=$(dev_python) || skip "no dev venv (set SOPHIA_TEST_VENV)"
  mkdir -p "$SRC"
  (cd "$REPO_ROOT" && git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
    [[ -e $f ]] || continue
    mkdir -p "$SRC/$(dirname "$f")"
    cp -P "$f" "$SRC/$f"
  done)
  mkdir -p "$SRC/skills/s3-bats-test" "$SRC/agents"
  printf -- '---\nname: s3-bats-test\ndescription: test skill\n---\nHello\n' >"$SRC/skills/s3-bats-test/SKILL.md"
  printf -- '---\nname: s3-bats-agent\ndescription: test agent\ntools: Read\n---\nHi\n' >"$SRC/agents/s3-bats-agent.md"
  base=$("$dev" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')
  purelib=$("$dev" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$base" -m venv --without-pip "$TVENV"
  local tpure
  tpure=$("$TVENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$purelib" >"$tpure/_sophia_dev_packages.pth"
  # Building the package without isolation (fast, offline) needs setuptools >= 70.1 (bdist_wheel
  # built in); a venv made by `python -m venv` may carry an older one: add a newer one to ours.
  if ! "$TVENV/bin/python" -c 'import setuptools, sys; v = tuple(int(x) for x in setuptools.__version__.split(".")[:2]); sys.exit(v < (70, 1))' 2>/dev/null; then
    "$TVENV/bin/python" -m pip install -q --disable-pip-version-check "setuptools>=70.1" >&2
  fi
}

# A fresh HOME (and SOPHIA_HOME inside it) for one test; PATH keeps the system tools only.
fresh_home() {
  export HOME=$BATS_TEST_TMPDIR/home
  mkdir -p "$HOME"
  unset SOPHIA_HOME SOPHIA_HOOK_GUARD SOPHIA_BIN_DIR CLAUDE_PLUGIN_ROOT
  export SOPHIA_VENV_PYTHON=$TVENV/bin/python
  export SOPHIA_PIP_ARGS="--no-build-isolation --no-deps"
  export PIP_NO_INDEX=1 # everything the build needs is in the test venv already
}

# Python for assertions (stdlib only).
pyq() {
  "$TVENV/bin/python" -I -S -c "$@"
}
