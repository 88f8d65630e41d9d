# The profile a release build of the server is optimised with (profile-guided optimisation): the server built with
# instrumentation (its own scratch folder, PACKAGE/.build-pgo/generate), run on a new SQLite ledger under the load the
# benchmarks measure (fresh App Store submissions from 16 connections, then repeats), and its counts merged with the
# toolchain's llvm-profdata. The compilers then lay out and inline the hot paths by those counts: CPU a fresh verified
# submission ×0.94 over 28 rounds of five runs (docs/benchmarks.md, "The binary trained on its own load").
# wrk and curl come from Debian's packages (installed when missing).
# Usage: source scripts/lib/release-profile.sh; release_profile PACKAGE   (prints the profile's path)

# The profile named by its content, so that a new one changes the build's flags and SwiftPM compiles everything with
# it; PACKAGE/.build-pgo/current names the one in use. Trained when there is none, or when ORDERSAFE_PGO_TRAIN=1.
release_profile() {
  local package=$1
  local dir; dir="$(cd "$package" && pwd)/.build-pgo"
  if [ "${ORDERSAFE_PGO_TRAIN:-0}" != 1 ] && [ -f "$dir/current" ] && [ -f "$dir/$(cat "$dir/current")" ]; then
    echo "$dir/$(cat "$dir/current")"
    return 0
  fi
  mkdir -p "$dir"
  local generate="$dir/generate"
  local flags=(--package-path "$package" -c release --static-swift-stdlib --scratch-path "$generate"
    -Xswiftc -profile-generate -Xcc -fprofile-instr-generate)
  echo "training the release build's profile (an instrumented build, then 15 s of load)" >&2
  if ! swift build "${flags[@]}" --product ordersafe >"$dir/generate.log" 2>&1; then
    grep -E "error" "$dir/generate.log" | head -20 >&2
    echo "the instrumented build failed (its log: $dir/generate.log)" >&2
    return 1
  fi
  local bin; bin="$(swift build "${flags[@]}" --show-bin-path)/ordersafe"
  local raw="$dir/raw"
  rm -rf "$raw"; mkdir -p "$raw"
  release_profile_load "$bin" "$raw" >&2 || return 1
  local tools; tools="$(dirname "$(readlink -f "$(command -v swift)")")"
  "$tools/llvm-profdata" merge -o "$dir/merged.profdata" "$raw"/*.profraw || return 1
  local name; name="ordersafe-$(sha256sum "$dir/merged.profdata" | cut -c1-16).profdata"
  find "$dir" -maxdepth 1 -name 'ordersafe-*.profdata' ! -name "$name" -delete
  mv "$dir/merged.profdata" "$dir/$name"
  echo "$name" >"$dir/current"
  rm -rf "$raw"
  echo "$dir/$name"
}

# Runs the instrumented BINARY as the benchmarks do and leaves its counts in RAW_DIR. Only the server's counts are
# kept: the tokens and the sandbox's minting, done by the same binary, write theirs where nothing reads them.
release_profile_load() {
  local bin=$1 raw=$2
  source "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"
  source "$(dirname "${BASH_SOURCE[0]}")/packages.sh"
  debian_packages wrk curl
  local work; work=$(mktemp -d /tmp/ordersafe-train.XXXXXX)
  local port; port=$(free_port)
  local script; script="$(dirname "${BASH_SOURCE[0]}")/../bench/load/submit.lua"
  ORDERSAFE_SERVER_DATA_DIR=$work/data LLVM_PROFILE_FILE="$raw/%p-%m.profraw" \
    ORDERSAFE_DATABASE_URL="sqlite:$work/data/ordersafe.sqlite" ORDERSAFE_SERVER_LOG_LEVEL=error \
    ORDERSAFE_LIMITS_PER_ADDRESS_PER_MINUTE=0 ORDERSAFE_LIMITS_PER_USER_PER_MINUTE=0 \
    "$bin" serve --port "$port" >"$work/log" 2>&1 &
  local pid=$!
  local ready=""
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && { ready=1; break; }; sleep 0.1; done
  local failed=""
  if [ -z "$ready" ]; then
    echo "the instrumented server did not start:" >&2; tail -5 "$work/log" >&2; failed=1
  else
    local quiet=(env ORDERSAFE_SERVER_DATA_DIR="$work/data" LLVM_PROFILE_FILE="$work/unused-%p.profraw")
    for user in $(seq 1 100); do
      "${quiet[@]}" "$bin" token --user "train-$user" --lifetime 3600 || failed=1
    done >"$work/tokens"
    # Enough for 10 s at 10,000/s (above any rate seen): the fresh load sends no transaction twice.
    "${quiet[@]}" "$bin" sandbox mint --count 100000 --product com.example.ordersafe.coins60 >"$work/jws" || failed=1
    head -4000 "$work/jws" >"$work/repeats"
    # The submissions answered, not refused: a profile of error answers would lay the binary out for them.
    wrk -t2 -c16 -d10s -s "$script" "http://127.0.0.1:$port" -- "$work/jws" "$work/tokens" 0 1 2 >"$work/wrk" || failed=1
    wrk -t2 -c16 -d5s -s "$script" "http://127.0.0.1:$port" -- "$work/repeats" "$work/tokens" 0 1 2 >>"$work/wrk" ||
      failed=1
    if grep -E "Non-2xx|Socket errors" "$work/wrk" >&2; then failed=1; fi
  fi
  # The counts are written when the server exits: it is stopped as a service manager would, and waited for.
  kill -TERM "$pid" 2>/dev/null
  wait "$pid" || true
  rm -rf "$work"
  [ -z "$failed" ] && ls "$raw"/*.profraw >/dev/null 2>&1 || { echo "the training load left no profile" >&2; return 1; }
}
