#!/usr/bin/env bash
# killed_client.sh NPU_SHIM NPU_DAEMON LIBDRM_CLIENT — run by with_daemon.sh (NPU_TEST_SOCKET):
# a shimmed program holding a 16 MiB BO and hung jobs is killed with SIGKILL mid-job; the
# daemon must release everything it held (STATUS: no client, no BO memory) once the watchdog
# has ended the running job, and serve the next program.
set -uo pipefail
shim="$1"; daemon="$2"; client="$3"
sock="$NPU_TEST_SOCKET"
out=$(mktemp)
"$shim" --device "unix:$sock" -- "$client" hang > "$out" 2>&1 &
shim_pid=$!
for _ in $(seq 1 200); do grep -q ready "$out" && break; sleep 0.05; done
grep -q ready "$out" || { echo "the client never got ready:"; cat "$out"; exit 1; }
client_pid=$(pgrep -P "$shim_pid" | head -1)
[ -n "$client_pid" ] || { echo "no client process under npu-shim"; exit 1; }
"$daemon" --status --socket "$sock" | sed 's/^/before: /'
kill -KILL "$client_pid"
wait "$shim_pid"
status=$?
[ "$status" -eq 137 ] || { echo "npu-shim exited $status, want 137 (128 + SIGKILL)"; exit 1; }
for _ in $(seq 1 200); do
  st=$("$daemon" --status --socket "$sock")
  if echo "$st" | grep -q "0 client(s) besides this one" && echo "$st" | grep -q " 0 bytes of BO memory"; then
    echo "after: $st"
    "$shim" --device "unix:$sock" -- "$client" daemon > "$out" 2>&1 || { cat "$out"; exit 1; }
    echo "the next program ran: $(tail -1 "$out")"
    rm -f "$out"
    exit 0
  fi
  sleep 0.05
done
echo "the daemon still holds the killed client's resources:"; echo "$st"
exit 1
