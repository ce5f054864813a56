#!/usr/bin/env bash
# with_daemon.sh NPU_DAEMON [--daemon-args DAEMON_ARGS... --] COMMAND [ARGS...]
# Starts npu-daemon on a fresh socket, runs COMMAND with every "@SOCKET@" in its arguments
# replaced by the socket path (also exported as NPU_TEST_SOCKET), stops the daemon and exits
# with COMMAND's status. The daemon's log goes to stderr when the command fails.
#
# Nothing may outlive the test: the daemon dies with this script (PR_SET_PDEATHSIG through
# setpriv) and never holds ctest's output pipe (its output goes to the log); COMMAND runs in
# its own session, bounded by NPU_TEST_TIMEOUT seconds (default 240, below the tests' ctest
# TIMEOUT). A command that overruns is not just killed: the stacks of the daemon and of every
# process of the command's session are printed first (gdb, where installed), so a hang in CI
# says where it hung.
set -uo pipefail
daemon="$1"; shift
daemon_args=()
if [ "${1:-}" = "--daemon-args" ]; then
  shift
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do daemon_args+=("$1"); shift; done
  shift
fi
limit="${NPU_TEST_TIMEOUT:-240}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/npu-test-daemon.XXXXXX")
sock="$dir/npu.sock"
log="$dir/daemon.log"
pid=""
cpid=""
cleanup() {
  [ -n "$cpid" ] && kill -KILL -- "-$cpid" 2>/dev/null
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

deathsig=()
command -v setpriv > /dev/null && deathsig=(setpriv --pdeathsig KILL --)
"${deathsig[@]}" "$daemon" --socket "$sock" "${daemon_args[@]}" > "$log" 2>&1 < /dev/null &
pid=$!
for _ in $(seq 1 200); do
  [ -S "$sock" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.05
done

# A process's state letter from /proc (R, S, Z, ...), empty once it is gone.
state_of() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  s="${s##*) }"
  echo "${s%% *}"
}
# Every process whose session is $1.
session_pids() {
  local p s
  for p in /proc/[0-9]*; do
    s=$(cat "$p/stat" 2>/dev/null) || continue
    s="${s##*) }"
    set -- "$1" $s
    [ "${5:-}" = "$1" ] && echo "${p#/proc/}"
    set -- "$1"
  done
}
stacks() {
  echo "--- stacks of pid $1: $(tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null) ---" >&2
  if command -v gdb > /dev/null; then
    timeout 60 gdb -p "$1" -batch -nx -ex "thread apply all bt" 2>&1 | grep -E '^(Thread|#)' >&2
  fi
}

# Waits up to $2 seconds for child $1 to end (not reaping it); false if it is still running.
wait_bounded() {
  local deadline=$((SECONDS + $2)) st
  while :; do
    st=$(state_of "$1")
    [ -z "$st" ] || [ "$st" = Z ] && return 0
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.05
  done
}

args=()
for a in "$@"; do args+=("${a//@SOCKET@/$sock}"); done
NPU_TEST_SOCKET="$sock" setsid "${args[@]}" &
cpid=$!
status=0
if ! wait_bounded "$cpid" "$limit"; then
  echo "with_daemon.sh: '${args[*]}' still running after ${limit} s; stacks follow" >&2
  stacks "$pid"
  for p in $(session_pids "$cpid"); do stacks "$p"; done
  kill -KILL -- "-$cpid" 2>/dev/null
  wait "$cpid"
  status=124
else
  wait "$cpid"
  status=$?
fi
cpid=""

kill -TERM "$pid" 2>/dev/null
if ! wait_bounded "$pid" 30; then
  echo "with_daemon.sh: npu-daemon ignored SIGTERM for 30 s; stacks follow" >&2
  stacks "$pid"
  kill -KILL "$pid" 2>/dev/null
fi
wait "$pid"
dstatus=$?
pid=""
if [ "$status" -ne 0 ] || [ "$dstatus" -ne 0 ]; then
  echo "--- npu-daemon log (exit $dstatus) ---" >&2
  cat "$log" >&2
fi
[ "$status" -ne 0 ] && exit "$status"
exit "$dstatus"
