#!/usr/bin/env bash
# ./pageio verify --pgdata against pg_checksums --check on the same stopped PostgreSQL cluster, cold
# and warm, interleaved in rounds, in one run: wall-clock medians, ratios against pg_checksums, and
# pg_checksums' user CPU per GB (its checksum loop, the yardstick for PgChecksum's speed). ./pageio
# verify is the command-line tool (cli/, no container; its start-up cache is made by the untimed first
# run). Cold rounds also time fio reading the same files of base/ (those of at least 128 kB: nearly
# all the bytes) once, one after another, with plain 128 kB reads through the page cache (psync, one
# job): the time just to read the files as pg_checksums does, nothing checked.
# Usage: bench/verify-vs-pg-checksums.sh [--pgdata DIR] [--scale 150] [--rounds 3] [--methods sync,worker,io_uring,direct,posix_aio] [--modes cold,warm] [--jobs N]
# Cold: the cluster's files, and only they, are dropped from the page cache before each cold run
# (sync, then dd iflag=nocache count=0 on each file: posix_fadvise DONTNEED on the whole file), so
# the JDK and pageio's jars stay cached as on a machine that runs pageio. Warm: read once before the
# round's warm runs. Needs root when the cluster is made (runuser postgres) and PostgreSQL (initdb,
# pg_ctl, pgbench, pg_checksums: /usr/lib/postgresql/N/bin), and fio. The cluster is made once (initdb --data-checksums,
# pgbench -i -s SCALE, a checkpoint, pg_ctl stop -m fast: scale 150 is about 2.2 GB), as the user
# postgres, in data/pgbench-cluster (as root: /var/tmp/pageio-pgbench-cluster, a directory the user
# postgres can reach; pageio's data directory is private to root), and reused; each method gets its own pageio data directory
# (data/verify-bench/METHOD, its settings file naming io_method), made once too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PGDATA_DIR="$ROOT/data/pgbench-cluster"
[[ "$(id -u)" -ne 0 ]] || PGDATA_DIR=/var/tmp/pageio-pgbench-cluster
SCALE=150
ROUNDS=3
METHODS="sync,worker,io_uring,direct,posix_aio"
MODES="cold,warm"
JOBS=()
die() { echo "verify-vs-pg-checksums: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --pgdata) PGDATA_DIR="$2"; shift 2 ;;
        --scale) SCALE="$2"; shift 2 ;;
        --rounds) ROUNDS="$2"; shift 2 ;;
        --methods) METHODS="$2"; shift 2 ;;
        --modes) MODES="$2"; shift 2 ;;
        --jobs) JOBS=(--jobs "$2"); shift 2 ;;
        -h|--help) sed -n 2,16p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1'; see --help" ;;
    esac
done
BIN="$(pg_config --bindir 2>/dev/null || true)"
[[ -n "$BIN" && -x "$BIN/pg_checksums" ]] || BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
[[ -n "$BIN" && -x "$BIN/pg_checksums" && -x "$BIN/pgbench" ]] || die "PostgreSQL is not installed: apt-get install -y postgresql"
# PostgreSQL's programs run as postgres when this runs as root (they refuse root), else as the caller.
AS_POSTGRES=()
[[ "$(id -u)" -ne 0 ]] || AS_POSTGRES=(runuser -u postgres --)
as_postgres() { "${AS_POSTGRES[@]}" "$@"; }

# The cluster, once: made in a scratch name and renamed when stopped, so a half-made one is never reused.
if [[ ! -f "$PGDATA_DIR/global/pg_control" ]]; then
    tmp="$PGDATA_DIR.making"
    rm -rf "$tmp"
    mkdir -p "$(dirname "$PGDATA_DIR")"
    if [[ "$(id -u)" -eq 0 ]]; then install -d -o postgres -g postgres -m 700 "$tmp"; else install -d -m 700 "$tmp"; fi
    echo "verify-vs-pg-checksums: making a cluster of pgbench scale $SCALE in $PGDATA_DIR (once)" >&2
    as_postgres "$BIN/initdb" --data-checksums -A trust -U postgres -D "$tmp" >/dev/null
    port=$((20000 + RANDOM % 10000))
    as_postgres "$BIN/pg_ctl" -D "$tmp" -w -l "$tmp/server.log" -o "-p $port -k /tmp -c listen_addresses= -c max_wal_size=4GB" start >/dev/null
    as_postgres "$BIN/pgbench" -h /tmp -p "$port" -U postgres -i -q -s "$SCALE" postgres >&2
    as_postgres "$BIN/psql" -h /tmp -p "$port" -U postgres -qc "VACUUM ANALYZE" -c CHECKPOINT postgres
    as_postgres "$BIN/pg_ctl" -D "$tmp" -w -m fast stop >/dev/null
    mv "$tmp" "$PGDATA_DIR"
fi
[[ ! -f "$PGDATA_DIR/postmaster.pid" ]] || die "$PGDATA_DIR holds postmaster.pid: stop its server first"
# %.0f, not %d: Debian's awk (mawk) prints %d at most 2^31 - 1
BYTES="$(du -sb "$PGDATA_DIR/base" "$PGDATA_DIR/global" | awk '{ s += $1 } END { printf "%.0f", s }')"

# One pageio data directory per method, its settings file naming the method.
IFS=, read -r -a METHOD_LIST <<<"$METHODS"
IFS=, read -r -a MODE_LIST <<<"$MODES"
for m in "${METHOD_LIST[@]}"; do
    d="$ROOT/data/verify-bench/$m"
    mkdir -p -m 700 "$ROOT/data/verify-bench" "$d" "$d/conf"
    echo "io_method = $m" >"$d/conf/org.pageio.settings.cfg"
done

FILES=("$PGDATA_DIR"/global/* "$PGDATA_DIR"/base/*/*)
cold() {
    local f
    sync
    for f in "${FILES[@]}"; do dd if="$f" iflag=nocache count=0 status=none; done
}
warm() { cat "${FILES[@]}" >/dev/null; }
now() { date +%s%N; }
declare -A TIMES USER
# run NAME COMMAND...: one timed run; its wall-clock seconds in TIMES[NAME], its user CPU seconds in USER[NAME].
run() {
    local name="$1" out t0 t1 rc=0
    shift
    out="$(mktemp)"
    t0="$(now)"
    /usr/bin/time -f %U -o "$out.time" "$@" >"$out" 2>&1 || rc=$?
    t1="$(now)"
    [[ $rc -eq 0 ]] || { cat "$out" >&2; die "$name failed (exit $rc)"; }
    [[ "$name" == *start* ]] || grep -q "Bad checksums:  0" "$out" || { cat "$out" >&2; die "$name did not report 0 bad checksums"; }
    LAST="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
    TIMES[$name]+="$LAST "
    echo "verify-vs-pg-checksums: $name: $LAST s" >&2
    USER[$name]+="$(tail -n 1 "$out.time") "
    rm -f "$out" "$out.time"
}
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

FIO_FILES=()
for f in "$PGDATA_DIR"/base/*/*; do [[ $(stat -c %s "$f") -lt 131072 ]] || FIO_FILES+=("$f"); done
FIO_BYTES="$(du -cb "${FIO_FILES[@]}" | tail -n 1 | cut -f 1)"
# fio_read: one fio run over FIO_FILES; its wall-clock seconds in TIMES[cold fio].
fio_read() {
    local t0 t1
    command -v fio >/dev/null || die "fio is not installed: apt-get install -y fio"
    t0="$(now)"
    fio --name=read-once --rw=read --bs=128k --direct=0 --ioengine=psync --numjobs=1 \
        --filename="$(IFS=:; echo "${FIO_FILES[*]}")" --file_service_type=sequential --output=/dev/null ||
        die "fio failed on the cluster's files"
    t1="$(now)"
    LAST="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')"
    TIMES[cold fio]+="$LAST "
    echo "verify-vs-pg-checksums: cold fio: $LAST s ($((FIO_BYTES / 1048576)) MiB)" >&2
}

# One untimed run per method: builds the tool once, makes its start-up cache, checks each method reads the cluster.
for m in "${METHOD_LIST[@]}"; do
    "$ROOT/pageio" verify --data "$ROOT/data/verify-bench/$m" --pgdata "$PGDATA_DIR" "${JOBS[@]}" >/dev/null ||
        die "./pageio verify with io_method=$m failed on $PGDATA_DIR"
done
echo "verify-vs-pg-checksums: $PGDATA_DIR, $((BYTES / 1048576)) MiB in base/ and global/; $ROUNDS rounds of" \
    "${MODES//,/ and } runs; cold = the cluster's files dropped from the page cache before the run" >&2
for ((r = 1; r <= ROUNDS; r++)); do
    for mode in "${MODE_LIST[@]}"; do
        if [[ "$mode" == warm ]]; then warm; else cold; fi
        run "$mode pg_checksums" "${AS_POSTGRES[@]}" "$BIN/pg_checksums" --check -D "$PGDATA_DIR"
        for m in "${METHOD_LIST[@]}"; do
            if [[ "$mode" == cold ]]; then cold; fi
            run "$mode pageio $m" "$ROOT/pageio" verify --data "$ROOT/data/verify-bench/$m" --pgdata "$PGDATA_DIR" "${JOBS[@]}"
        done
        if [[ "$mode" == cold ]]; then cold; fio_read; fi
    done
    echo "verify-vs-pg-checksums: round $r of $ROUNDS done" >&2
done

printf '%-22s %9s %8s %9s %7s   %s\n' "run" "median s" "MB/s" "user s" "vs pg" "all (s)"
for mode in "${MODE_LIST[@]}"; do
    base="$(median "${TIMES[$mode pg_checksums]}")"
    names=("$mode pg_checksums")
    for m in "${METHOD_LIST[@]}"; do names+=("$mode pageio $m"); done
    [[ "$mode" != cold ]] || names+=("cold fio")
    for name in "${names[@]}"; do
        t="$(median "${TIMES[$name]}")"
        u=""
        [[ -z "${USER[$name]:-}" ]] || u="$(median "${USER[$name]}")"
        bytes="$BYTES"
        [[ "$name" != *fio* ]] || bytes="$FIO_BYTES"
        awk -v n="$name" -v t="$t" -v u="${u:--1}" -v b="$base" -v bytes="$bytes" -v all="${TIMES[$name]}" \
            'BEGIN { us = (u < 0) ? "-" : sprintf("%.2f", u); printf "%-22s %9.3f %8.0f %9s %6.2fx   %s\n", n, t, bytes / 1e6 / t, us, b / t, all }'
    done
done
u="$(median "${USER[warm pg_checksums]:-}")"
[[ -z "$u" ]] || awk -v u="$u" -v bytes="$BYTES" \
    'BEGIN { printf "pg_checksums, warm: %.3f s user CPU per GB, %.0f ns per 8 KiB page\n", u / (bytes / 1e9), u * 1e9 / (bytes / 8192) }'
