#!/usr/bin/env bash
# Loading the drill table t with the table Loader through the bulk sink (asynchronous writes
# through io_method sync, worker, io_uring, direct), the O_DIRECT and buffered sinks, next to fio's
# sequential write bandwidth (buffered and direct=1), as ratios in one run (BulkLoadBench's javadoc).
# Usage: bench/bulk-load.sh [--rows 8000000] [--rounds 3] [--cases sync,worker,io_uring,direct,odirect,buffered,fio,fio-direct]
#                           [--write-blocks 128] [--in-flight 8] [--dir DIR] [--no-fio]
# Needs fio (apt-get install -y fio) and bench/target/benchmarks.jar (./pageio bench -l builds it).
# Needs ~2 GB free in DIR (default bench/target/bulk-load); deletes its files at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAR="$ROOT/bench/target/benchmarks.jar"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
command -v fio >/dev/null || { echo "bulk-load: fio is not installed: apt-get install -y fio (or pass --no-fio)" >&2; exit 2; }
[[ -f "$JAR" ]] || { echo "bulk-load: $JAR is missing: build it with ./pageio bench -l" >&2; exit 2; }
cd "$ROOT"
exec "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$JAR" org.pageio.bench.BulkLoadBench "$@"
