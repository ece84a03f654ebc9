#!/usr/bin/env bash
# Sophia System 3 — hooks/lib/mcp_server.sh: starts `s3 mcp` (the memory's MCP server, stdio) for an agent.
# Claude Code runs it from the plugin's .mcp.json (${CLAUDE_PLUGIN_ROOT}/hooks/lib/mcp_server.sh), a settings
# install from ~/.claude.json and Codex from ~/.codex/config.toml (both name the kit's copy). Not a hook:
# it execs the kit venv's `s3 mcp` with the state home every hook uses (hooks/lib/env.sh), and says in one
# line on stderr why it cannot (no venv yet: a plugin install builds it at the first session start).
set -euo pipefail
_here=${BASH_SOURCE[0]}
[[ $_here == */* ]] || _here=./$_here
_here=${_here%/*}
# shellcheck source=hooks/lib/env.sh
. "$_here/env.sh" || { echo "s3 mcp: hooks/lib/env.sh is missing; reinstall the kit" >&2; exit 1; }
# the kit's venv; else the s3 the install or the plugin's bootstrap recorded (a reused venv); else PATH's
done_s3=''
if [[ -r $SOPHIA_HOME/run/bootstrap.done ]]; then
  IFS=$'\t' read -r _ done_s3 <"$SOPHIA_HOME/run/bootstrap.done" || true
fi
for s3 in "$SOPHIA_HOME/venv/bin/s3" "$done_s3" "$(type -P s3 || true)"; do
  [[ -n $s3 && -x $s3 ]] && exec "$s3" mcp
done
echo "s3 mcp: no s3 in $SOPHIA_HOME/venv yet (a plugin install builds it at the first session start; or run ./install.sh)" >&2
exit 1
