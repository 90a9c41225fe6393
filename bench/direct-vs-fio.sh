#!/usr/bin/env bash
# io_method=direct through the buffer manager against fio --direct=1 on the same cold relation file, in one run.
# Usage: bench/direct-vs-fio.sh [--dir DIR] [--size-mib 1024] [--seconds 10] [--rounds 3] [--engines io_uring,threads] [--workloads seq|rand|both] [--raw] [--raw-groups 2,3] [--warmups 2] [--sample-inflight] [--keep] [--checksums on|off] [--io-max-concurrency 128,64] [--registered-buffers on|off|both] [--huge-pages try|on|off|both]
# Needs fio (apt-get install -y fio) and bench/target/benchmarks.jar (./pageio bench -l builds it).
# Leaves nothing behind: the relation is deleted at the end unless --keep.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAR="$ROOT/bench/target/benchmarks.jar"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
command -v fio >/dev/null || { echo "direct-vs-fio: fio is not installed: apt-get install -y fio" >&2; exit 2; }
[[ -f "$JAR" ]] || { echo "direct-vs-fio: $JAR is missing: build it with ./pageio bench -l" >&2; exit 2; }
cd "$ROOT"
exec "$JAVA" --enable-native-access=ALL-UNNAMED -cp "$JAR" org.pageio.bench.DirectVsFioBench "$@"
