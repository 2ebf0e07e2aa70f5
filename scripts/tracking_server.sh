#!/usr/bin/env bash
# A shared MLflow tracking server for a team: PostgreSQL (Debian's package) holds runs, the model registry and
# MLflow's users; the server stores artifacts under DIR and serves them (clients need no access to DIR); MLflow's
# basic-auth app asks every request except /health for a user name and password.
#
#   scripts/tracking_server.sh start DIR    # initialise DIR on first use, start both, print the client settings
#   scripts/tracking_server.sh stop DIR     # stop both (by the PIDs recorded in DIR)
#
# Settings (environment): MLFLOW_HOST (default 127.0.0.1; 0.0.0.0 to serve the network), MLFLOW_PORT (5000),
# PG_PORT (5432; PostgreSQL listens on 127.0.0.1 only), MLFLOW_ADMIN_USER (admin), MLFLOW_ADMIN_PASSWORD (default:
# generated once, kept in DIR/admin_password), MLFLOW_DEFAULT_PERMISSION (EDIT), MLFLOW_AUTH_CACHE_TTL (60: seconds a
# checked password is remembered), MLFLOW_ALLOWED_HOSTS (the Host
# headers MLflow accepts; its default is localhost and private addresses). Run as root, PostgreSQL runs as the
# Debian package's `postgres` user and is installed with apt-get when missing. Secrets stay in DIR, readable by the
# owner only.
set -euo pipefail
PATH="$PATH:/usr/sbin:/sbin"  # runuser, as a login shell of root has it
REPO="$(cd "$(dirname "$0")/.." && pwd)"
MLFLOW="$REPO/.venv/bin/mlflow"
PYTHON="$REPO/.venv/bin/python"

die() { echo "error: $*" >&2; exit 2; }

[ $# -eq 2 ] || die "usage: scripts/tracking_server.sh start|stop DIR"
ACTION="$1"
mkdir -p "$2"
DIR="$(cd "$2" && pwd)"
PGDATA="$DIR/postgres"
MLFLOW_HOST="${MLFLOW_HOST:-127.0.0.1}"
MLFLOW_PORT="${MLFLOW_PORT:-5000}"
PG_PORT="${PG_PORT:-5432}"
ADMIN_USER="${MLFLOW_ADMIN_USER:-admin}"
[[ "${MLFLOW_AUTH_CACHE_TTL:-60}" =~ ^[0-9]+$ ]] \
    || die "MLFLOW_AUTH_CACHE_TTL must be a whole number of seconds (got '${MLFLOW_AUTH_CACHE_TTL}')"

pg_bin() {  # the newest installed PostgreSQL's bin folder (Debian keeps them under /usr/lib/postgresql/<version>)
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

as_pg() {  # run a PostgreSQL program as the database's OS user (it refuses to run as root)
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

secret() {  # DIR/<name>: created once with a random URL-safe value (or $2), readable by the owner only
    local file="$DIR/$1"
    if [ ! -s "$file" ]; then
        (umask 077 && printf '%s' "${2:-$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')}" > "$file")
    fi
    cat "$file"
}

stop_pid() {  # stop the process group recorded in DIR/<name>.pid: TERM, then KILL after 20 s
    local file="$DIR/$1.pid" pid
    [ -s "$file" ] || return 0
    pid="$(cat "$file")"
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
        kill -KILL -- "-$pid" 2>/dev/null || true
    fi
    rm -f "$file"
}

if [ "$ACTION" = stop ]; then
    stop_pid mlflow
    BIN="$(pg_bin)"
    if [ -n "$BIN" ] && [ -f "$PGDATA/postmaster.pid" ]; then
        as_pg "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
    fi
    echo "stopped the tracking server in $DIR"
    exit 0
fi
[ "$ACTION" = start ] || die "unknown action '$ACTION': use start or stop"

[ -x "$MLFLOW" ] || die "$MLFLOW not found: run scripts/install.sh first"
"$PYTHON" -c "import psycopg, flask_wtf" 2>/dev/null \
    || die "the server's packages are missing (PostgreSQL driver, basic auth): .venv/bin/python -m pip install -e '.[server]'"
if [ -z "$(pg_bin)" ]; then
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null || die "PostgreSQL is not installed: apt-get install postgresql (as root)"
    echo "installing PostgreSQL (apt-get install postgresql)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
BIN="$(pg_bin)"

PG_PASSWORD="$(secret postgres_password)"
ADMIN_PASSWORD="$(secret admin_password "${MLFLOW_ADMIN_PASSWORD:-}")"
[ "${#ADMIN_PASSWORD}" -ge 12 ] || die "the admin password must have at least 12 characters (MLflow's rule)"

# PostgreSQL: its own cluster in DIR/postgres, listening on 127.0.0.1:$PG_PORT and a socket in its data folder.
if [ ! -f "$PGDATA/PG_VERSION" ]; then
    mkdir -p "$PGDATA"
    if [ "$(id -u)" = 0 ]; then
        chown postgres: "$PGDATA"
        chmod o+x "$DIR"
        runuser -u postgres -- test -w "$PGDATA" \
            || die "the postgres user cannot reach $PGDATA: choose a DIR whose parent folders others may enter (e.g. under /srv)"
    fi
    as_pg "$BIN/initdb" -D "$PGDATA" -U postgres --auth-local=peer --auth-host=scram-sha-256 >"$DIR/initdb.log"
fi
if ! as_pg "$BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    as_pg "$BIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w -t 60 \
        -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PGDATA" start >/dev/null \
        || die "PostgreSQL did not start: see $PGDATA/server.log"
fi
psql_pg() { as_pg "$BIN/psql" -h "$PGDATA" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt "$@"; }
if [ -z "$(psql_pg -c "SELECT 1 FROM pg_roles WHERE rolname = 'mlflow'")" ]; then
    psql_pg -c "CREATE ROLE mlflow LOGIN PASSWORD '$PG_PASSWORD'"
fi
for db in mlflow mlflow_auth; do
    if [ -z "$(psql_pg -c "SELECT 1 FROM pg_database WHERE datname = '$db'")" ]; then
        psql_pg -c "CREATE DATABASE $db OWNER mlflow"
    fi
done
DB="postgresql+psycopg://mlflow:$PG_PASSWORD@127.0.0.1:$PG_PORT"

# MLflow's basic-auth app, its users in PostgreSQL too. Every signed-in user may read and write (EDIT) by default, so a
# team logs into shared experiments; MLFLOW_DEFAULT_PERMISSION=READ makes writers need a grant instead. A password is
# checked with its slow hash once a minute per user, not on every request (MLflow's auth cache; the server has one
# worker, so a password changed through MLflow's API counts at once; MLFLOW_AUTH_CACHE_TTL=0 checks every request).
(umask 077 && cat > "$DIR/basic_auth.ini" <<EOF
[mlflow]
default_permission = ${MLFLOW_DEFAULT_PERMISSION:-EDIT}
database_uri = $DB/mlflow_auth
admin_username = $ADMIN_USER
admin_password = $ADMIN_PASSWORD
authorization_function = mlflow.server.auth:authenticate_request_basic_auth
auth_cache_ttl_seconds = ${MLFLOW_AUTH_CACHE_TTL:-60}
EOF
)

stop_pid mlflow
mkdir -p "$DIR/artifacts"
args=(server --app-name basic-auth --serve-artifacts --artifacts-destination "$DIR/artifacts"
      --host "$MLFLOW_HOST" --port "$MLFLOW_PORT" --workers 1)
[ -n "${MLFLOW_ALLOWED_HOSTS:-}" ] && args+=(--allowed-hosts "$MLFLOW_ALLOWED_HOSTS")
# The database URI (with its password) and the key that signs the UI's CSRF tokens go through the environment,
# never onto a command line; setsid gives the server and its workers one process group, which `stop` ends.
MLFLOW_BACKEND_STORE_URI="$DB/mlflow" MLFLOW_AUTH_CONFIG_PATH="$DIR/basic_auth.ini" \
    MLFLOW_FLASK_SERVER_SECRET_KEY="$(secret flask_secret_key)" setsid "$MLFLOW" "${args[@]}" >"$DIR/mlflow.log" 2>&1 < /dev/null &
echo $! > "$DIR/mlflow.pid"

URL="http://$([ "$MLFLOW_HOST" = 0.0.0.0 ] && hostname -f || echo "$MLFLOW_HOST"):$MLFLOW_PORT"
for _ in $(seq 240); do
    if "$PYTHON" -c "import urllib.request, sys; urllib.request.urlopen(sys.argv[1] + '/health', timeout=2)" \
        "http://127.0.0.1:$MLFLOW_PORT" 2>/dev/null; then
        cat <<EOF
MLflow tracking server on $URL (PostgreSQL on 127.0.0.1:$PG_PORT, artifacts in $DIR/artifacts, logs in $DIR)
Use it with:
  export MLFLOW_TRACKING_USERNAME=$ADMIN_USER
  export MLFLOW_TRACKING_PASSWORD="\$(cat $DIR/admin_password)"
  .venv/bin/python -m platform.sweep amnist --tracking-uri $URL
Stop it with: scripts/tracking_server.sh stop $DIR
EOF
        exit 0
    fi
    kill -0 "$(cat "$DIR/mlflow.pid")" 2>/dev/null || die "mlflow server exited: see $DIR/mlflow.log"
    sleep 0.5
done
die "mlflow server did not answer within 120 s: see $DIR/mlflow.log"
