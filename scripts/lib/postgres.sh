# Sourced by scripts: a private, throwaway PostgreSQL cluster (temp dir, random port, torn down on exit).
# Installs Debian's postgresql package when no server binaries are found.

postgres_bindir() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
  done
  return 1
}

postgres_install() {
  if postgres_bindir >/dev/null; then return 0; fi
  echo "==> PostgreSQL server not found: installing Debian's postgresql package"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
  postgres_bindir >/dev/null || { echo "PostgreSQL installation failed" >&2; return 1; }
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Starts the cluster and exports POSTGRES_URL (a superuser URL to the `postgres` database).
postgres_start() {
  postgres_install
  local bindir; bindir=$(postgres_bindir)
  PG_DIR=$(mktemp -d /tmp/ordersafe-pg.XXXXXX)
  PG_PORT=$(free_port)
  local run=()
  if [ "$(id -u)" -eq 0 ]; then
    # PostgreSQL refuses to run as root: run it as the postgres user the package created.
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$PG_DIR"
    run=(runuser -u postgres --)
  fi
  "${run[@]}" "$bindir/initdb" -D "$PG_DIR/data" -U ordersafe --auth=trust --no-sync -E UTF8 >/dev/null
  "${run[@]}" "$bindir/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -o \
    "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
    start >/dev/null
  PG_RUN=("${run[@]}")
  PG_BINDIR=$bindir
  export POSTGRES_URL="postgres://ordersafe@127.0.0.1:$PG_PORT/postgres?sslmode=disable"
  trap postgres_stop EXIT
  echo "==> PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') running on 127.0.0.1:$PG_PORT ($PG_DIR)"
}

postgres_stop() {
  if [ -n "${PG_DIR:-}" ]; then
    "${PG_RUN[@]}" "$PG_BINDIR/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$PG_DIR"
    PG_DIR=""
  fi
}

# Creates database $1 in the cluster and prints its URL.
postgres_create_database() {
  "$PG_BINDIR/psql" "$POSTGRES_URL" -q -c "CREATE DATABASE $1" >/dev/null
  echo "postgres://ordersafe@127.0.0.1:$PG_PORT/$1?sslmode=disable"
}
