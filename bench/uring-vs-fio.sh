#!/usr/bin/env bash
# io_method=io_uring against fio's io_uring engine on a cold 1 GiB file, in one run.
# Usage: bench/uring-vs-fio.sh [--dir DIR] [--size-mib 1024] [--seconds 10] [--rounds 2] [--policies NEVER,PG18,PG19,LARGE] [--unbatched] [--workloads seq|rand|both] [--keep]
# Needs fio (apt-get install -y fio) and bench/target/benchmarks.jar (./pageio bench -l builds it).
# Leaves nothing behind: the file is deleted at the end unless --keep.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAR="$ROOT/bench/target/benchmarks.jar"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
command -v fio >/dev/null || { echo "uring-vs-fio: fio is not installed: apt-get install -y fio" >&2; exit 2; }
[[ -f "$JAR" ]] || { echo "uring-vs-fio: $JAR is missing: build it with ./pageio bench -l" >&2; exit 2; }
cd "$ROOT"
exec "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$JAR" org.pageio.bench.UringVsFioBench "$@"
