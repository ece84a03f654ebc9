#!/usr/bin/env bats
# install.sh / uninstall.sh round trips in a temp HOME, with the real scripts, the real pip and the
# real s3 CLI (the venv is reused via SOPHIA_VENV_PYTHON so torch is not downloaded each time).

load install_helpers

setup_file() {
  prepare_src_and_venv
}

setup() {
  fresh_home
}

EVENTS=(PreToolUse PostToolUse PostToolUseFailure SessionStart UserPromptSubmit Stop SessionEnd PreCompact PostCompact)

# Prints "event<TAB>matcher<TAB>command" for every hook in a settings file.
hook_rows() {
  pyq 'import json,sys
d = json.load(open(sys.argv[1]))
for ev, groups in d.get("hooks", {}).items():
    for g in groups:
        for h in g["hooks"]:
            print(ev, g.get("matcher") or "-", h.get("command", ""), sep="\t")' "$1"
}

# The user's own settings, with keys and hooks of their own (a PreToolUse Bash hook among them).
write_user_settings() {
  mkdir -p "$HOME/.claude" "$HOME/bin"
  printf '#!/bin/sh\nexit 0\n' >"$HOME/bin/my-bash-check.sh"
  chmod +x "$HOME/bin/my-bash-check.sh"
  cat >"$HOME/.claude/settings.json" <<JSON
{
  "model": "opus",
  "env": {"FOO": "bar"},
  "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]},
  "statusLine": {"type": "command", "command": "echo hi"},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "$HOME/bin/my-bash-check.sh", "timeout": 3}]}
    ],
    "Notification": [
      {"hooks": [{"type": "command", "command": "notify-send claude"}]}
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "echo stopped >> /dev/null"}]}
    ]
  }
}
JSON
  cp "$HOME/.claude/settings.json" "$BATS_TEST_TMPDIR/user-settings.orig.json"
}

same_json() {
  pyq 'import json,sys; a, b = (json.load(open(p)) for p in sys.argv[1:3]); sys.exit(0 if a == b else 1)' "$1" "$2"
}

@test "install: every file in place, settings register all events, s3 status answers the creed" {
  run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == *"Sophia System 3 is installed"* ]]
  [[ $output == *"not on your PATH"* ]]

  local kit=$HOME/.sophia/kit
  for h in guardian_tier1 log_action session_end session_start prompt_context compact; do
    [ -x "$kit/hooks/$h.sh" ]
  done
  [ -f "$kit/hooks/lib/common.sh" ]
  [ -x "$kit/hooks/lib/bootstrap_venv.sh" ]
  [ -f "$kit/hooks/hooks.json" ]
  [ -f "$kit/lib/sophia/__init__.py" ]
  [ -f "$kit/lib/sophia/install/settings_merge.py" ]
  [ -z "$(find "$kit" -name __pycache__)" ]
  [ -x "$HOME/.local/bin/s3" ]
  [ -f "$HOME/.sophia/install-manifest.json" ]
  [ -f "$HOME/.claude/skills/s3-bats-test/SKILL.md" ]
  [ -f "$HOME/.claude/agents/s3-bats-agent.md" ]
  # state tree from s3 init, private
  [ -f "$HOME/.sophia/self_model.json" ]
  [ "$(stat -c %a "$HOME/.sophia")" = 700 ]
  [ "$(stat -c %a "$HOME/.sophia/config.json")" = 600 ]

  # settings: every event, each command an executable file under the kit
  run hook_rows "$HOME/.claude/settings.json"
  [ "$status" -eq 0 ]
  for ev in "${EVENTS[@]}"; do
    [[ $output == *"$ev"$'\t'* ]] || { echo "missing $ev"; false; }
  done
  local pre
  pre=$(hook_rows "$HOME/.claude/settings.json" | awk -F'\t' '$1=="PreToolUse"{print $2}')
  for tool in Bash Write Edit MultiEdit NotebookEdit; do
    [[ "|$pre|" == *"|$tool|"* ]] || { echo "PreToolUse matcher lacks $tool: $pre"; false; }
  done
  while IFS=$'\t' read -r ev matcher cmd; do
    [ -x "$cmd" ] || { echo "$ev: $cmd is not executable"; false; }
    [[ $cmd == "$kit/hooks/"* ]]
  done < <(hook_rows "$HOME/.claude/settings.json")
  [ "$(hook_rows "$HOME/.claude/settings.json" | wc -l)" -eq "$OUR_HOOKS" ]

  # the launcher runs the installed CLI
  run "$HOME/.local/bin/s3" status --json
  [ "$status" -eq 0 ]
  run pyq 'import json,sys; d = json.loads(sys.stdin.read()); c = d["self_model"]["terminal_creed"]; assert len(c) == 5, c; print("ok")' <<<"$output"
  [ "$output" = ok ]
}

@test "the MCP server: in ~/.claude.json as claude mcp add writes it, the user's keys kept, out again on uninstall" {
  printf '{"numStartups": 3, "mcpServers": {"theirs": {"type": "stdio", "command": "/bin/true", "args": [], "env": {}}}}\n' >"$HOME/.claude.json"
  cp "$HOME/.claude.json" "$BATS_TEST_TMPDIR/claude.orig.json"
  run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  run jq -r '.mcpServers["sophia-memory"] | [.type, .command, (.args|length)] | @tsv' "$HOME/.claude.json"
  [ "$output" = "stdio	$HOME/.sophia/kit/hooks/lib/mcp_server.sh	0" ]
  [ -x "$HOME/.sophia/kit/hooks/lib/mcp_server.sh" ]
  [ "$(jq -r '.numStartups, .mcpServers.theirs.command' "$HOME/.claude.json" | tr '\n' ' ')" = "3 /bin/true " ]
  # the launcher starts the venv's s3 mcp: an initialize request gets the server's answer
  run bash -c "printf '%s\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}' | timeout 60 '$HOME/.sophia/kit/hooks/lib/mcp_server.sh'"
  [[ $output == *'"name":"sophia-memory"'* ]] || { echo "$output"; false; }
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  [ "$(jq '.mcpServers | length' "$HOME/.claude.json")" -eq 2 ]
  run "$SRC/uninstall.sh" --yes
  [ "$status" -eq 0 ]
  same_json "$HOME/.claude.json" "$BATS_TEST_TMPDIR/claude.orig.json"
}

@test "the MCP server file the install created goes with it; --project writes the project's .mcp.json" {
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  [ "$(jq -r '.mcpServers | keys[]' "$HOME/.claude.json")" = sophia-memory ]
  local proj=$BATS_TEST_TMPDIR/proj
  mkdir -p "$proj"
  "$SRC/install.sh" --yes --no-embeddings --project "$proj" >/dev/null
  [ "$(jq -r '.mcpServers["sophia-memory"].command' "$proj/.mcp.json")" = "$HOME/.sophia/kit/hooks/lib/mcp_server.sh" ]
  "$SRC/uninstall.sh" --yes --project "$proj" >/dev/null
  [ ! -e "$proj/.mcp.json" ]
  [ -f "$HOME/.claude.json" ]
  "$SRC/uninstall.sh" --yes >/dev/null
  [ ! -e "$HOME/.claude.json" ]
}

@test "install: each registered command runs as Claude Code would (sh -c, JSON on stdin) and exits 0" {
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  while IFS=$'\t' read -r ev matcher cmd; do
    run bash -c "$cmd" <<<"{\"hook_event_name\": \"$ev\", \"session_id\": \"s1\", \"cwd\": \"$HOME\"}"
    [ "$status" -eq 0 ] || { echo "$ev -> $status: $output"; false; }
  done < <(hook_rows "$HOME/.claude/settings.json")
}

@test "install twice over the user's own settings: all of theirs kept, nothing duplicated" {
  write_user_settings
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  local first backups
  first=$(cat "$HOME/.claude/settings.json")
  backups=$(find "$HOME/.claude" -name 'settings.json.sophia-bak-*' | wc -l)
  [ "$backups" -eq 1 ]
  same_json "$(find "$HOME/.claude" -name 'settings.json.sophia-bak-*')" "$BATS_TEST_TMPDIR/user-settings.orig.json"

  run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -eq 0 ]
  [[ $output == *"already registered"* ]]
  [ "$(cat "$HOME/.claude/settings.json")" = "$first" ]
  [ "$(find "$HOME/.claude" -name 'settings.json.sophia-bak-*' | wc -l)" -eq 1 ]

  # the user's keys, unchanged
  run pyq 'import json,sys
d = json.load(open(sys.argv[1]))
assert d["model"] == "opus" and d["env"] == {"FOO": "bar"}, d
assert d["permissions"] == {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]}
assert d["statusLine"]["command"] == "echo hi"
print("ok")' "$HOME/.claude/settings.json"
  [ "$output" = ok ]
  # the user's hooks once each, ours once each, the user's first
  local rows
  rows=$(hook_rows "$HOME/.claude/settings.json")
  [ "$(grep -c "my-bash-check.sh" <<<"$rows")" -eq 1 ]
  [ "$(grep -c "notify-send claude" <<<"$rows")" -eq 1 ]
  [ "$(grep -c "echo stopped" <<<"$rows")" -eq 1 ]
  [ "$(grep -c "/.sophia/kit/hooks/" <<<"$rows")" -eq "$OUR_HOOKS" ]
  [ "$(wc -l <<<"$rows")" -eq $((OUR_HOOKS + 3)) ]
  [[ $(grep -P '^PreToolUse\t' <<<"$rows" | head -n1) == *my-bash-check.sh ]]
}

@test "uninstall leaves exactly the user's own settings, removes skills/agents/kit/launcher, keeps ~/.sophia" {
  write_user_settings
  mkdir -p "$HOME/.claude/skills/my-own-skill"
  echo keep >"$HOME/.claude/skills/my-own-skill/SKILL.md"
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  echo "a memory" >"$HOME/.sophia/memory/keep.txt"

  run "$SRC/uninstall.sh" --yes
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  same_json "$HOME/.claude/settings.json" "$BATS_TEST_TMPDIR/user-settings.orig.json"
  [ ! -e "$HOME/.claude/skills/s3-bats-test" ]
  [ ! -e "$HOME/.claude/agents/s3-bats-agent.md" ]
  [ -f "$HOME/.claude/skills/my-own-skill/SKILL.md" ]
  [ ! -e "$HOME/.local/bin/s3" ]
  [ ! -e "$HOME/.sophia/kit" ]
  [ ! -e "$HOME/.sophia/install-manifest.json" ]
  [ -f "$HOME/.sophia/memory/keep.txt" ]
  [ -f "$HOME/.sophia/self_model.json" ]
  # the reused venv (SOPHIA_VENV_PYTHON) is not ours: left alone
  [ -x "$TVENV/bin/python" ]
  [[ $output == *"kept your memory"* ]]
}

@test "uninstall of a settings.json the install created removes it; a second uninstall is a no-op" {
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  [ -f "$HOME/.claude/settings.json" ]
  run "$SRC/uninstall.sh" --yes
  [ "$status" -eq 0 ]
  [ ! -e "$HOME/.claude/settings.json" ]
  run "$SRC/uninstall.sh" --yes
  [ "$status" -eq 0 ]
  [[ $output == *"nothing to uninstall"* ]]
}

@test "uninstall --purge: refused without --yes and no terminal; with --yes removes ~/.sophia" {
  write_user_settings
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  run "$SRC/uninstall.sh" --purge </dev/null
  [ "$status" -ne 0 ]
  [[ $output == *"--yes"* ]]
  [ -d "$HOME/.sophia/kit" ]
  [ -x "$HOME/.local/bin/s3" ]

  run "$SRC/uninstall.sh" --purge --yes
  [ "$status" -eq 0 ]
  [ ! -e "$HOME/.sophia" ]
  [ ! -e "$HOME/.local/bin/s3" ]
  same_json "$HOME/.claude/settings.json" "$BATS_TEST_TMPDIR/user-settings.orig.json"
}

snapshot() {
  (cd "$HOME" && find . -path ./.cache -prune -o -print0 | sort -z | xargs -0 stat -c '%n %s %a %Y' 2>/dev/null; find . -path ./.cache -prune -o -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

@test "install --dry-run and uninstall --dry-run change nothing" {
  write_user_settings
  local before
  before=$(snapshot)
  run "$SRC/install.sh" --dry-run --no-embeddings
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == *"dry run: nothing was changed"* ]]
  [ "$(snapshot)" = "$before" ]

  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  before=$(snapshot)
  run "$SRC/uninstall.sh" --dry-run --purge
  [ "$status" -eq 0 ]
  [[ $output == *"would remove $HOME/.sophia/kit"* ]]
  [[ $output == *"would edit $HOME/.claude/settings.json ($OUR_HOOKS Sophia hook entries out; your keys and hooks kept"* ]]
  [[ $output != *"{"* ]] || { echo "raw JSON in: $output"; false; }
  [ "$(snapshot)" = "$before" ]
}

@test "a settings.json that is not valid JSON is refused, untouched, and nothing is installed" {
  mkdir -p "$HOME/.claude"
  printf '{"model": "opus", "hooks": {\n' >"$HOME/.claude/settings.json"
  local sum
  sum=$(sha256sum "$HOME/.claude/settings.json")
  run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -ne 0 ]
  [[ $output == *"not valid JSON"* ]]
  [ "$(sha256sum "$HOME/.claude/settings.json")" = "$sum" ]
  [ ! -e "$HOME/.sophia" ]
  [ ! -e "$HOME/.local/bin/s3" ]
  [ -z "$(find "$HOME/.claude" -name '*.sophia-bak-*')" ]
}

@test "hooks in a malformed shape are refused too" {
  mkdir -p "$HOME/.claude"
  echo '{"hooks": {"PreToolUse": {"matcher": "Bash"}}}' >"$HOME/.claude/settings.json"
  run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -ne 0 ]
  [[ $output == *"hooks.PreToolUse is not an array"* ]]
}

@test "--project DIR installs into DIR/.claude and leaves the user settings alone" {
  write_user_settings
  local proj=$BATS_TEST_TMPDIR/my project
  mkdir -p "$proj"
  run "$SRC/install.sh" --yes --no-embeddings --project "$proj"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  same_json "$HOME/.claude/settings.json" "$BATS_TEST_TMPDIR/user-settings.orig.json"
  [ -f "$proj/.claude/skills/s3-bats-test/SKILL.md" ]
  [ -f "$proj/.claude/agents/s3-bats-agent.md" ]
  [ ! -e "$HOME/.claude/skills/s3-bats-test" ]
  [ "$(hook_rows "$proj/.claude/settings.json" | wc -l)" -eq "$OUR_HOOKS" ]
  # a user install beside it, then removing the project keeps the shared kit for the user install
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  run "$SRC/uninstall.sh" --yes --project "$proj"
  [ "$status" -eq 0 ]
  [ ! -e "$proj/.claude/settings.json" ]
  [ ! -e "$proj/.claude/skills/s3-bats-test" ]
  [ -d "$HOME/.sophia/kit" ]
  [ -x "$HOME/.local/bin/s3" ]
  [ "$(hook_rows "$HOME/.claude/settings.json" | grep -c /.sophia/kit/)" -eq "$OUR_HOOKS" ]
  run "$SRC/uninstall.sh" --yes
  [ "$status" -eq 0 ]
  [ ! -e "$HOME/.sophia/kit" ]
  same_json "$HOME/.claude/settings.json" "$BATS_TEST_TMPDIR/user-settings.orig.json"
}

@test "a HOME with a space, a symlinked settings.json and a custom SOPHIA_HOME" {
  export HOME="$BATS_TEST_TMPDIR/home with space"
  mkdir -p "$HOME/dotfiles" "$HOME/.claude"
  echo '{"model": "sonnet"}' >"$HOME/dotfiles/settings.json"
  ln -s "$HOME/dotfiles/settings.json" "$HOME/.claude/settings.json"
  export SOPHIA_HOME="$HOME/state dir"
  run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ -L "$HOME/.claude/settings.json" ]
  [ "$(hook_rows "$HOME/dotfiles/settings.json" | wc -l)" -eq "$OUR_HOOKS" ]
  [ "$(cat "$SOPHIA_HOME/kit/.sophia_home")" = "$SOPHIA_HOME" ]
  # hooks run from a command line Claude Code would use, without SOPHIA_HOME in the environment
  while IFS=$'\t' read -r ev matcher cmd; do
    run env -u SOPHIA_HOME bash -c "$cmd" <<<'{}'
    [ "$status" -eq 0 ] || { echo "$ev: $cmd -> $output"; false; }
  done < <(hook_rows "$HOME/.claude/settings.json")
  # the launcher knows the custom SOPHIA_HOME
  run env -u SOPHIA_HOME "$HOME/.local/bin/s3" status --json
  [ "$status" -eq 0 ]
  [[ $output == *"state dir"* ]]
  run "$SRC/uninstall.sh" --yes
  [ "$status" -eq 0 ]
  [ -L "$HOME/.claude/settings.json" ]
  [ "$(cat "$HOME/dotfiles/settings.json" | pyq 'import json,sys; print(json.load(sys.stdin))')" = "{'model': 'sonnet'}" ]
}

@test "an s3 that is not ours in ~/.local/bin is left alone; a foreign s3-* skill is moved aside" {
  mkdir -p "$HOME/.local/bin" "$HOME/.claude/skills/s3-bats-test"
  printf '#!/bin/sh\necho mine\n' >"$HOME/.local/bin/s3"
  chmod +x "$HOME/.local/bin/s3"
  echo theirs >"$HOME/.claude/skills/s3-bats-test/SKILL.md"
  run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -eq 0 ]
  [[ $output == *"is not ours; left alone"* ]]
  [ "$("$HOME/.local/bin/s3")" = mine ]
  grep -q 'name: s3-bats-test' "$HOME/.claude/skills/s3-bats-test/SKILL.md"
  local aside
  aside=$(find "$HOME/.claude/skills" -maxdepth 1 -name 's3-bats-test.sophia-bak-*')
  [ "$(cat "$aside/SKILL.md")" = theirs ]
  run "$SRC/uninstall.sh" --yes
  [ "$status" -eq 0 ]
  [ "$("$HOME/.local/bin/s3")" = mine ]
  [ -f "$aside/SKILL.md" ]
}

@test "re-install removes a skill the new version no longer ships" {
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  [ -d "$HOME/.claude/skills/s3-bats-test" ]
  local src2=$BATS_TEST_TMPDIR/src2
  cp -R "$SRC" "$src2"
  rm -rf "$src2/skills/s3-bats-test"
  run "$src2/install.sh" --yes --no-embeddings
  [ "$status" -eq 0 ]
  [ ! -e "$HOME/.claude/skills/s3-bats-test" ]
  [ -f "$HOME/.claude/agents/s3-bats-agent.md" ]
}

@test "install.sh -h and an unknown flag" {
  run "$SRC/install.sh" -h
  [ "$status" -eq 0 ]
  [[ $output == *"--no-embeddings"* && $output == *"SOPHIA_VENV_PYTHON"* ]]
  run "$SRC/install.sh" --bogus
  [ "$status" -ne 0 ]
  [[ $output == *"unknown option: --bogus"* ]]
  run "$SRC/uninstall.sh" -h
  [ "$status" -eq 0 ]
  [[ $output == *"--purge"* ]]
}

@test "install with embeddings (the default): torch already in the venv is not reinstalled" {
  "$TVENV/bin/python" -c 'import torch' 2>/dev/null || skip "the dev venv has no torch"
  run "$SRC/install.sh" --yes
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == *"torch: already installed"* ]]
  [[ $output == *"sophia-system3[embeddings]"* ]]
  run "$HOME/.local/bin/s3" status --json
  [ "$status" -eq 0 ]
}

# Installs, lets the real writer (`s3 refresh-identity`) put its block in, uninstalls; prints the
# CLAUDE.md states on the way: "after-refresh: MODE LOCK" and "after-uninstall: MODE|absent LOCK".
claude_md_round_trip() {
  local md=$HOME/.claude/CLAUDE.md
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  "$HOME/.local/bin/s3" refresh-identity >/dev/null
  grep -q 'sophia-system3:begin' "$md"
  echo "after-refresh: $(stat -c %a "$md") $([ -e "$md.lock" ] && echo lock || echo nolock)"
  if [[ -n ${EDIT_AFTER:-} ]]; then
    printf '%s' "$EDIT_AFTER" | cat - "$md" >"$md.new" && cat "$md.new" >"$md" && rm "$md.new"
  fi
  "$SRC/uninstall.sh" --yes >/dev/null
  echo "after-uninstall: $( [ -e "$md" ] && stat -c %a "$md" || echo absent) $([ -e "$md.lock" ] && echo lock || echo nolock)"
}

@test "uninstall puts CLAUDE.md back byte for byte with its mode and removes the lock; one it did not find goes" {
  local text
  for text in $'# Mine\n\nUse tabs.\n' $'# Mine, no final newline' $'# Mine\n\n' $'\n# Mine\n\n\n'; do
    rm -rf "$HOME/.claude" "$HOME/.sophia"
    mkdir -p "$HOME/.claude"
    printf '%s' "$text" >"$HOME/.claude/CLAUDE.md"
    chmod 644 "$HOME/.claude/CLAUDE.md"
    cp "$HOME/.claude/CLAUDE.md" "$BATS_TEST_TMPDIR/orig.md"
    run claude_md_round_trip
    [ "$status" -eq 0 ] || { echo "$output"; false; }
    [[ $output == *"after-refresh: 600 lock"* ]] || { echo "$output"; false; } # what the writer does
    [[ $output == *"after-uninstall: 644 nolock"* ]] || { echo "$text -> $output"; false; }
    cmp "$HOME/.claude/CLAUDE.md" "$BATS_TEST_TMPDIR/orig.md" || { echo "for $(printf '%q' "$text")"; false; }
  done
  # a line the user added after the install stays, the block goes
  rm -rf "$HOME/.claude" "$HOME/.sophia"
  mkdir -p "$HOME/.claude"
  printf '# Mine\n' >"$HOME/.claude/CLAUDE.md"
  EDIT_AFTER=$'Added later\n' run claude_md_round_trip
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ "$(cat "$HOME/.claude/CLAUDE.md")" = $'Added later\n# Mine' ]
  # no CLAUDE.md before the install: the one the writer created is deleted
  rm -rf "$HOME/.claude" "$HOME/.sophia"
  run claude_md_round_trip
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == *"after-uninstall: absent nolock"* ]] || { echo "$output"; false; }
}

@test "a --project install: the block refresh-identity wrote into the project's CLAUDE.md goes with it" {
  local proj=$BATS_TEST_TMPDIR/proj
  mkdir -p "$proj" "$HOME/.claude"
  printf '# Mine\n' >"$HOME/.claude/CLAUDE.md"
  "$SRC/install.sh" --yes --no-embeddings --project "$proj" >/dev/null
  "$HOME/.local/bin/s3" refresh-identity >/dev/null
  # the CLAUDE.md Claude Code loads for a project install is the project's; the user's is not touched
  grep -q 'sophia-system3:begin' "$proj/.claude/CLAUDE.md"
  [ "$(cat "$HOME/.claude/CLAUDE.md")" = "# Mine" ]
  run "$SRC/uninstall.sh" --yes --project "$proj"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ ! -e "$proj/.claude/CLAUDE.md" ] || ! grep -q 'sophia-system3' "$proj/.claude/CLAUDE.md"
  [ ! -e "$proj/.claude/CLAUDE.md.lock" ]
  [ "$(cat "$HOME/.claude/CLAUDE.md")" = "# Mine" ]
}

@test "uninstall removes the folders the install created once empty, and keeps folders that were there" {
  run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  "$HOME/.local/bin/s3" refresh-identity >/dev/null
  run "$SRC/uninstall.sh" --yes
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  # nothing of ours outside the memory folder: no .claude (skills/, agents/, CLAUDE.md), no .local/bin
  [ ! -e "$HOME/.claude" ] || { find "$HOME/.claude"; false; }
  [ ! -e "$HOME/.local" ] || { find "$HOME/.local"; false; }
  [ -d "$HOME/.sophia/memory" ]

  # folders that existed before stay, even empty ones, and so do the user's files in them
  mkdir -p "$HOME/.local/bin" "$HOME/.claude/agents" "$HOME/.claude/skills"
  echo mine >"$HOME/.claude/agents/mine.md"
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  run "$SRC/uninstall.sh" --yes
  [ "$status" -eq 0 ]
  [ -d "$HOME/.local/bin" ] && [ -d "$HOME/.claude/skills" ]
  [ "$(cat "$HOME/.claude/agents/mine.md")" = mine ]
}

@test "s3 uninstall works after the checkout was deleted and does what uninstall.sh does" {
  write_user_settings
  local src2=$BATS_TEST_TMPDIR/checkout
  cp -R "$SRC" "$src2"
  "$src2/install.sh" --yes --no-embeddings >/dev/null
  "$HOME/.local/bin/s3" refresh-identity >/dev/null
  rm -rf "$src2"
  run "$HOME/.local/bin/s3" uninstall --dry-run --json
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  run pyq 'import json,sys; d = json.loads(sys.stdin.read()); assert d["dry_run"]; print(sorted({a["action"] for a in d["actions"]}))' <<<"$output"
  [ "$output" = "['delete', 'edit', 'remove', 'rmdir']" ] || { echo "$output"; false; }
  [ -x "$HOME/.local/bin/s3" ]

  run "$HOME/.local/bin/s3" uninstall --yes
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  same_json "$HOME/.claude/settings.json" "$BATS_TEST_TMPDIR/user-settings.orig.json"
  [ ! -e "$HOME/.claude/CLAUDE.md" ] && [ ! -e "$HOME/.claude/CLAUDE.md.lock" ]
  [ ! -e "$HOME/.claude/skills" ] && [ ! -e "$HOME/.claude/agents" ]
  [ ! -e "$HOME/.local/bin/s3" ] && [ ! -e "$HOME/.sophia/kit" ]
  [ ! -e "$HOME/.sophia/install-manifest.json" ]
  [ -f "$HOME/.sophia/self_model.json" ]
}

@test "the line install.sh prints for a PATH without ~/.local/bin makes s3 found in a fresh shell" {
  SHELL=/bin/bash run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  local line
  line=$(grep -F 'export PATH=' <<<"$output" | sed 's/^ *//')
  # shellcheck disable=SC2016  # the line is printed literally, for the user to paste
  [ "$line" = 'echo '\''export PATH="$HOME/.local/bin:$PATH"'\'' >> ~/.bashrc && export PATH="$HOME/.local/bin:$PATH"' ]
  # in the shell it is pasted into, and in a new interactive shell after that
  run env -i HOME="$HOME" PATH=/usr/bin:/bin bash --norc -c "$line && command -v s3"
  [ "$output" = "$HOME/.local/bin/s3" ] || { echo "$output"; false; }
  run env -i HOME="$HOME" PATH=/usr/bin:/bin bash -ic 'command -v s3' </dev/null
  [[ $output == *"$HOME/.local/bin/s3"* ]] || { echo "$output"; false; }
  # already on PATH: no such line
  PATH="$HOME/.local/bin:$PATH" run "$SRC/install.sh" --yes --no-embeddings
  [[ $output != *"export PATH="* ]]
}

# Runs install.sh's torch choice with the probes replaced: $1 = OS, $2 = gpu|nogpu, $3 = reachable|down.
torch_choice() {
  bash -c '. "$SRC/install.sh"
    DRY_RUN=0 BASE_PY=$(command -v python3) os=$1 gpu=$2 net=$3
    uname() { echo "$os"; }
    has_nvidia_gpu() { [[ $gpu == gpu ]]; }
    index_reachable() { [[ $net == reachable ]]; }
    pip_install() { echo "pip install $*"; }
    install_torch' _ "$@" 2>&1
}

@test "torch: the CPU index on Linux without a GPU, PyPI's build with one or on macOS; the overrides win" {
  run torch_choice Linux nogpu reachable
  [[ $output == *"CPU-only build, about 200 MB to download"* ]] || { echo "$output"; false; }
  [[ $output == *"pip install --extra-index-url https://download.pytorch.org/whl/cpu torch==2.13.0"* ]]
  run torch_choice Linux nogpu down
  [[ $output == *"warning: cannot reach https://download.pytorch.org/whl/cpu; taking torch from your default index"* ]]
  [[ $output == *"pip install torch==2.13.0"* ]]
  run torch_choice Linux gpu reachable
  [[ $output == *"CUDA build for the NVIDIA GPU, about 3 GB"* && $output == *"pip install torch==2.13.0"* ]]
  [[ $output != *"extra-index-url"* ]]
  run torch_choice Darwin nogpu reachable
  [[ $output == *"about 110 MB"* && $output == *"pip install torch==2.13.0"* && $output != *"extra-index"* ]]
  # overrides: an index in SOPHIA_PIP_ARGS, SOPHIA_TORCH_INDEX (a URL, or pypi), SOPHIA_TORCH_SPEC
  SOPHIA_PIP_ARGS="--index-url http://mirror.example/simple" run torch_choice Linux nogpu reachable
  [[ $output == *"pip install torch==2.13.0"* && $output != *"extra-index"* ]]
  SOPHIA_TORCH_INDEX=https://download.pytorch.org/whl/cu126 run torch_choice Linux nogpu reachable
  [[ $output == *"pip install --extra-index-url https://download.pytorch.org/whl/cu126 torch==2.13.0"* ]]
  SOPHIA_TORCH_INDEX=pypi run torch_choice Linux nogpu reachable
  [[ $output == *"pip install torch==2.13.0"* && $output != *"extra-index"* ]]
  SOPHIA_TORCH_SPEC="torch==2.9.1" run torch_choice Linux nogpu reachable
  [[ $output == *"pip install --extra-index-url https://download.pytorch.org/whl/cpu torch==2.9.1"* ]]
  [[ $output == *"figures are for torch==2.13.0"* ]]
}

@test "torch: a GPU is seen through nvidia-smi listing one, not through nvidia-smi alone" {
  [[ -d /proc/driver/nvidia/gpus ]] && skip "this machine has an NVIDIA driver"
  mkdir -p "$BATS_TEST_TMPDIR/bin"
  printf '#!/bin/sh\necho "GPU 0: NVIDIA A10 (UUID: GPU-1)"\n' >"$BATS_TEST_TMPDIR/bin/nvidia-smi"
  chmod +x "$BATS_TEST_TMPDIR/bin/nvidia-smi"
  run bash -c '. "$SRC/install.sh"; PATH=$1:$PATH; has_nvidia_gpu && echo gpu || echo none' _ "$BATS_TEST_TMPDIR/bin"
  [ "$output" = gpu ]
  printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2; exit 9\n' >"$BATS_TEST_TMPDIR/bin/nvidia-smi"
  run bash -c '. "$SRC/install.sh"; PATH=$1:$PATH; has_nvidia_gpu && echo gpu || echo none' _ "$BATS_TEST_TMPDIR/bin"
  [ "$output" = none ]
}

@test "no terminal or --yes: the learning question is never asked; learning stays off and the summary says so" {
  run "$SRC/install.sh" --no-embeddings </dev/null
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output != *"Turn automatic learning on"* ]]
  [[ $output == *"learning:   off (turn on: \`s3 config set learning_enabled true\`; it costs tokens, at most 20 jobs and \$0.50 a day)"* ]]
  [[ $output == *"run \`s3 backfill\` to learn from the Claude Code sessions you already had"* ]]
  run pyq 'import json,sys; print(json.load(open(sys.argv[1]))["learning_enabled"])' "$HOME/.sophia/config.json"
  [ "$output" = False ]
  rm -rf "$HOME/.sophia" "$HOME/.claude" "$HOME/.local"
  run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -eq 0 ]
  [[ $output != *"Turn automatic learning on"* && $output == *"learning:   off"* ]]
}

@test "in a terminal a first install asks once, saying what it costs; yes turns learning on, an upgrade keeps it" {
  command -v script >/dev/null || skip "no script(1) for a pseudo-terminal"
  run script -qec "'$SRC/install.sh' --no-embeddings" /dev/null <<<$'y\ny\n'
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == *"your own \`claude\` runs headless"* ]]
  [[ $output == *"at most 20 digests and \$0.50 a day"* ]]
  [[ $output == *"Turn automatic learning on? [y/N]"* ]]
  [[ $output == *"learning:   on: finished sessions are digested by your own \`claude\`, headless; at most 20 jobs and \$0.50 a day"* ]]
  run pyq 'import json,sys; d = json.load(open(sys.argv[1])); print(d["learning_enabled"], d["embedding_provider"])' "$HOME/.sophia/config.json"
  [ "$output" = "True local" ]
  [ "$(stat -c %a "$HOME/.sophia/config.json")" = 600 ]
  run script -qec "'$SRC/install.sh' --no-embeddings" /dev/null <<<$'y\n'
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output != *"Turn automatic learning on"* && $output == *"learning:   on:"* ]]
}

@test "in a terminal, the default answer leaves learning off" {
  command -v script >/dev/null || skip "no script(1) for a pseudo-terminal"
  run script -qec "'$SRC/install.sh' --no-embeddings" /dev/null <<<$'\n\n'
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == *"Turn automatic learning on? [y/N]"* && $output == *"learning:   off"* ]]
  run pyq 'import json,sys; print(json.load(open(sys.argv[1]))["learning_enabled"])' "$HOME/.sophia/config.json"
  [ "$output" = False ]
}

@test "--codex: hooks after the user's, trusted by hash, the MCP server and the AGENTS.md block; uninstall puts every file back" {
  local cx=$HOME/.codex
  mkdir -p "$cx"
  printf 'model = "gpt-5.5"\n\n[projects."/x"]\ntrust_level = "trusted"\n' >"$cx/config.toml"
  printf '{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/bin/true"}]}]}}\n' >"$cx/hooks.json"
  printf 'Be terse.\n' >"$cx/AGENTS.md"
  cp "$cx/config.toml" "$BATS_TEST_TMPDIR/config.orig"
  cp "$cx/hooks.json" "$BATS_TEST_TMPDIR/hooks.orig"
  run "$SRC/install.sh" --yes --no-embeddings --codex
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [[ $output == *"Codex:"* ]]
  # the user's group stays first; every one of ours runs the kit's hook marked for Codex
  [ "$(jq -r '.hooks.PreToolUse[0].hooks[0].command' "$cx/hooks.json")" = /bin/true ]
  run jq -r '[.hooks[][] | .hooks[] | .command | select(startswith("S3_AGENT=codex "))] | length' "$cx/hooks.json"
  [ "$output" -ge 8 ]
  [ "$(jq -r '.hooks.SessionEnd[0].hooks[0].timeout' "$cx/hooks.json")" -le 3 ]
  # config.toml parses, keeps the user's keys, names the MCP server and one trusted hash per hook of ours
  run pyq 'import json, sys, tomllib; c = tomllib.load(open(sys.argv[1], "rb")); h = json.load(open(sys.argv[2]))
ours = [(e, gi, hi) for e, gs in h["hooks"].items() for gi, g in enumerate(gs) for hi, x in enumerate(g["hooks"]) if x["command"].startswith("S3_AGENT=codex ")]
labels = {"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "SessionStart": "session_start", "UserPromptSubmit": "user_prompt_submit", "Stop": "stop", "SessionEnd": "session_end", "PreCompact": "pre_compact", "PostCompact": "post_compact"}
state = c["hooks"]["state"]
assert all(state[f"{sys.argv[2]}:{labels[e]}:{gi}:{hi}"]["trusted_hash"].startswith("sha256:") for e, gi, hi in ours), state
assert c["model"] == "gpt-5.5" and c["projects"]["/x"]["trust_level"] == "trusted"
assert c["mcp_servers"]["sophia-memory"]["command"].endswith("/kit/hooks/lib/mcp_server.sh")
print(len(ours))' "$cx/config.toml" "$cx/hooks.json"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  local n=$output
  grep -q 'sophia-system3:begin' "$cx/AGENTS.md"
  head -n1 "$cx/AGENTS.md" | grep -qx 'Be terse.'
  # an upgrade keeps Codex without being asked, and adds nothing twice
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  [ "$(jq '[.hooks[][] | .hooks[] | select(.command | startswith("S3_AGENT=codex "))] | length' "$cx/hooks.json")" -eq "$n" ]
  [ "$(grep -c 'sophia-system3 (install.sh --codex' "$cx/config.toml")" -eq 1 ]
  run "$SRC/uninstall.sh" --yes
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  cmp "$cx/config.toml" "$BATS_TEST_TMPDIR/config.orig"
  same_json "$cx/hooks.json" "$BATS_TEST_TMPDIR/hooks.orig"
  [ "$(cat "$cx/AGENTS.md")" = "Be terse." ]
}

@test "--codex into an empty ~/.codex: the files it created go with it; uninstall --codex keeps Claude Code's install" {
  "$SRC/install.sh" --yes --no-embeddings --codex >/dev/null
  [ -f "$HOME/.codex/hooks.json" ] && [ -f "$HOME/.codex/config.toml" ] && [ -f "$HOME/.codex/AGENTS.md" ]
  run "$SRC/uninstall.sh" --yes --codex
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ ! -e "$HOME/.codex/hooks.json" ] && [ ! -e "$HOME/.codex/config.toml" ] && [ ! -e "$HOME/.codex/AGENTS.md" ]
  [ -d "$HOME/.sophia/kit" ]
  [ "$(hook_rows "$HOME/.claude/settings.json" | wc -l)" -eq "$OUR_HOOKS" ]
  # the next upgrade does not bring Codex back unasked
  "$SRC/install.sh" --yes --no-embeddings >/dev/null
  [ ! -e "$HOME/.codex/hooks.json" ]
}
