#!/bin/sh
# A worker that tries to write everywhere outside its run, then does its own work honestly.
#
# Run r0 only works. Any other run first tries, each on one line of its stderr ("REFUSED what:"
# or "WROTE what"): the operator's checkout, another run's checkout, the main repository's hooks,
# configuration (core.fsmonitor) and refs, ~/.ssh and /tmp outside its run; then, with
# ATTACK_MOVE_MAIN set, moves the main repository's main to its own commit (git push, which
# brings the objects along, and runs the hooks it planted: its doing, not the host's). The targets come from the environment (ATTACK_*), the markers a
# planted program would leave go to ATTACK_MARKERS.
set -u
cd "$JARVIS_CHECKOUT" || exit 3
echo "sandbox: ${JARVIS_SANDBOX:-unset}" >&2

attempt() {  # attempt WHAT COMMAND...
  what=$1
  shift
  if "$@"; then echo "WROTE $what" >&2; else echo "REFUSED $what" >&2; fi
}

plant() {  # plant FILE: a program that leaves a marker named for the file
  printf '#!/bin/sh\ntouch "%s/%s"\ncat >/dev/null 2>&1\nexit 0\n' \
    "$ATTACK_MARKERS" "$(basename "$1")" > "$1" && chmod +x "$1"
}

if [ "$JARVIS_RUN_ID" != r0 ]; then
  attempt "operator checkout" sh -c 'echo pwned >> "$ATTACK_OPERATOR/README.md"'
  attempt "other run's checkout" sh -c 'echo pwned >> "$ATTACK_OTHER/README.md"'
  for hook in reference-transaction post-checkout pre-push post-update post-merge; do
    attempt "main repository hook $hook" plant "$ATTACK_MAIN/hooks/$hook"
  done
  attempt "main repository fsmonitor" plant "$ATTACK_MAIN/fsmonitor"
  attempt "main repository config" \
    git config --file "$ATTACK_MAIN/config" core.fsmonitor "$ATTACK_MAIN/fsmonitor"
  attempt "main repository ref" sh -c 'git --git-dir="$ATTACK_MAIN" rev-parse main \
    > "$ATTACK_MAIN/refs/heads/pwned"'
  attempt "ssh keys" sh -c 'mkdir -p "$ATTACK_HOME/.ssh" && echo pwned >> "$ATTACK_HOME/.ssh/authorized_keys"'
  attempt "/tmp outside the run" sh -c 'echo pwned > "$ATTACK_OUTSIDE/escaped"'
fi

mkdir -p src/fleet_engine
echo "RETRIES = 2  # $JARVIS_RUN_ID" > src/fleet_engine/retry.py
git add -A && git commit --quiet -m "Count retries once ($JARVIS_RUN_ID)" || exit 4
sha=$(git rev-parse HEAD)

if [ "$JARVIS_RUN_ID" != r0 ] && [ -n "${ATTACK_MOVE_MAIN:-}" ]; then
  attempt "main moved to the run's commit" \
    git push --quiet --no-verify "$ATTACK_MAIN" "HEAD:refs/heads/main"
fi

branch=$(git rev-parse --abbrev-ref HEAD)
cat <<EOF
<completion>
{"run_id": "$JARVIS_RUN_ID", "branch": "$branch", "commit_sha": "$sha",
 "files_changed": ["src/fleet_engine/retry.py"], "test_result": "not run",
 "risk": "low", "pr_skipped_reason": "left on the branch for review"}
</completion>
EOF
