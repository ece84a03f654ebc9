#!/usr/bin/env bats
# An install with a non-default SOPHIA_HOME, driven by the real claude client against the scripted
# model (tests/e2e/model_server.py): Claude Code runs the hooks without SOPHIA_HOME in their
# environment, so every hook must find the home through kit/.sophia_home. The action buffer, the
# episode's actions, a user guardian.deny pattern and the guardian log all live in that home, and
# nothing appears under ~/.sophia.

load install_helpers
load processes

setup_file() {
  prepare_src_and_venv
}

setup() {
  fresh_home
  [[ -n ${SOPHIA_TEST_CLAUDE:-} && -x $SOPHIA_TEST_CLAUDE ]] || skip "no claude client (set SOPHIA_TEST_CLAUDE)"
  unset SOPHIA_PYTHON
}

teardown() {
  stop_test_processes
}

# drive_session PROJECT SCRIPT_JSON: one `claude -p` session (no SOPHIA_HOME in its environment)
# against the scripted model; prints the client's JSON result.
drive_session() {
  "$TVENV/bin/python" - "$REPO_ROOT" "$1" "$2" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from tests.e2e.harness import ClaudeRun

class NoHomeEnv(ClaudeRun):
    def env(self, base_url):
        env = super().env(base_url)
        for key in ("SOPHIA_HOME", "SOPHIA_PYTHON", "SOPHIA_VENV_PYTHON"):
            env.pop(key, None)
        return env

import os
run = NoHomeEnv(Path(os.environ["HOME"]), Path(sys.argv[2]))
res = run.run("Write the walrus notes", json.loads(sys.argv[3]), timeout=150)
print(json.dumps({"rc": res.returncode, "stderr": res.stderr[-2000:], "result": res.result}))
PY
}

@test "custom SOPHIA_HOME: buffer, episode actions, a user deny pattern and the guardian log stay in that home" {
  local custom=$HOME/custom-state project=$BATS_TEST_TMPDIR/project
  mkdir -p "$project"
  SOPHIA_HOME=$custom run "$SRC/install.sh" --yes --no-embeddings
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  [ ! -e "$HOME/.sophia" ]
  # the user's deny pattern, in the config of the home they installed into
  pyq 'import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["guardian"]["deny"] = ["walrus-forbidden"]
open(p, "w").write(json.dumps(d))' "$custom/config.json"

  local script='[
    {"tool_use": [{"name": "Bash", "input": {"command": "mkdir -p notes && ls", "description": "prepare"}}]},
    {"tool_use": [{"name": "Bash", "input": {"command": "echo walrus-forbidden > denied.txt", "description": "x"}}]},
    {"text": "Done."}]'
  run drive_session "$project" "$script"
  [ "$status" -eq 0 ] || { echo "$output"; false; }
  local out=$output
  pyq 'import json, sys; r = json.loads(sys.argv[1]); assert r["rc"] == 0, r' "$out"

  # the deny pattern was applied: the call was denied and did not run
  pyq 'import json, sys
r = json.loads(sys.argv[1])
cmds = [d.get("tool_input", {}).get("command") for d in r["result"].get("permission_denials") or []]
assert "echo walrus-forbidden > denied.txt" in cmds, r' "$out" || { echo "$out"; false; }
  [ ! -e "$project/denied.txt" ]
  [ -d "$project/notes" ]

  # the action buffer
  local bufs=("$custom"/buffers/*.jsonl)
  [ "${#bufs[@]}" -eq 1 ] && [ -f "${bufs[0]}" ] || { ls -laR "$custom" "$HOME"; false; }
  grep -q '"summary":"mkdir"' "${bufs[0]}"

  # the episode carries the session's actions
  local eps=("$custom"/episodes/ep_*.json)
  [ "${#eps[@]}" -eq 1 ] && [ -f "${eps[0]}" ]
  run pyq 'import json, sys; ep = json.load(open(sys.argv[1])); print(" ".join(a["tool"] + ":" + (a.get("summary") or "") for a in ep["actions"]))' "${eps[0]}"
  [ "$output" = "Bash:mkdir" ] || { echo "actions: $output"; false; }

  # the guardian log (written by a detached child just after the answer)
  local log=$custom/logs/guardian_blocks.jsonl i
  for ((i = 0; i < 50; i++)); do
    [[ -s $log ]] && break
    sleep 0.1
  done
  grep -q '"rule": *"config_deny"' "$log" || { cat "$log"; false; }

  # nothing under the default home
  [ ! -e "$HOME/.sophia" ] || { find "$HOME/.sophia"; false; }
}
