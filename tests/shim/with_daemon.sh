#!/usr/bin/env bash
# with_daemon.sh NPU_DAEMON [DAEMON_ARGS... --] COMMAND [ARGS...]
# Starts npu-daemon on a fresh socket, runs COMMAND with every "@SOCKET@" in its arguments
# replaced by the socket path (also exported as NPU_TEST_SOCKET), stops the daemon and exits
# with COMMAND's status. The daemon's log goes to stderr when the command fails.
set -uo pipefail
daemon="$1"; shift
daemon_args=()
if printf '%s\n' "$@" | grep -qx -- '--daemon-args'; then
  shift  # --daemon-args
  while [ "$1" != "--" ]; do daemon_args+=("$1"); shift; done
  shift
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/npu-test-daemon.XXXXXX")
sock="$dir/npu.sock"
log="$dir/daemon.log"
"$daemon" --socket "$sock" "${daemon_args[@]}" 2> "$log" &
pid=$!
for _ in $(seq 1 200); do
  [ -S "$sock" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.05
done
args=()
for a in "$@"; do args+=("${a//@SOCKET@/$sock}"); done
NPU_TEST_SOCKET="$sock" "${args[@]}"
status=$?
kill -TERM "$pid" 2>/dev/null
wait "$pid"
dstatus=$?
if [ "$status" -ne 0 ] || [ "$dstatus" -ne 0 ]; then
  echo "--- npu-daemon log (exit $dstatus) ---" >&2
  cat "$log" >&2
fi
rm -rf "$dir"
[ "$status" -ne 0 ] && exit "$status"
exit "$dstatus"
