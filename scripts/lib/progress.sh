# Sourced by scripts/setup.d steps. progress LABEL CMD...: run a long install command
# (pip, Maven, apt, docker build) with a line every 15 s while it runs and its time when
# it ends, so a first run never sits silent for minutes; the command's own output is
# kept in a file and shown only if it fails.
progress() {
  local label=$1
  shift
  local log start pid n=0 rc=0
  log=$(mktemp)
  start=$SECONDS
  echo "$label ..."
  "$@" >"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    n=$((n + 1))
    if [ $((n % 15)) -eq 0 ]; then
      echo "  $label: still running ($((SECONDS - start)) s; last: $(tail -c 300 "$log" | tr '\r' '\n' | grep -v '^\s*$' | tail -n 1 | cut -c1-100))"
    fi
  done
  wait "$pid" || rc=$?
  if [ "$rc" -ne 0 ]; then
    cat "$log" >&2
    rm -f "$log"
    echo "$label failed (exit $rc)" >&2
    return "$rc"
  fi
  rm -f "$log"
  echo "  $label: done in $((SECONDS - start)) s"
}
