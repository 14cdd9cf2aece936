# shellcheck shell=bash disable=SC2034  # variables are used by the scripts that source this file
# Shared settings of the local test environment, sourced by scripts/test-env and the
# scripts/kafka-* tool wrappers. Not meant to be run on its own.

OV_REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OV_SCRIPTS_DIR="$OV_REPO_DIR/scripts"
OV_FIXTURES_DIR="$OV_REPO_DIR/fixtures/test-env"

# Versions. Kafka 4.3.1 is the newest 4.x release whose jars are all on Maven Central
# (for 4.3.2 and 4.4.0 the connect-file artifact, which holds the FileStream connectors, is missing).
OV_KAFKA_VERSION="${OV_KAFKA_VERSION:-4.3.1}"
OV_LOG4J_VERSION="${OV_LOG4J_VERSION:-2.25.3}"
OV_S3S_FS_VERSION="0.14.1"
# Helm, built from its Go module (helm.sh/helm/v3) with `go install`, to lint and render the chart in
# deploy/helm. promtool comes from Debian's `prometheus` package (whatever version the archive has).
OV_HELM_VERSION="3.22.0"

# Where downloaded and built things are kept between runs, and where a running environment lives.
OV_CACHE_DIR="${OV_CACHE_DIR:-$HOME/.cache/offset-vault}"
OV_TEST_ENV_DIR="${OV_TEST_ENV_DIR:-$OV_REPO_DIR/target/test-env}"

OV_KAFKA_HOME="$OV_CACHE_DIR/kafka-$OV_KAFKA_VERSION"
OV_KAFKA_LIBS="$OV_KAFKA_HOME/libs"
OV_S3S_FS_ROOT="$OV_CACHE_DIR/s3s-fs-$OV_S3S_FS_VERSION"
OV_S3S_FS_BIN="$OV_S3S_FS_ROOT/bin/s3s-fs"
OV_VENV_DIR="$OV_CACHE_DIR/venv"
OV_PROMTOOL_ROOT="$OV_CACHE_DIR/promtool"
OV_PROMTOOL_BIN="$OV_PROMTOOL_ROOT/bin/promtool"
OV_HELM_ROOT="$OV_CACHE_DIR/helm-$OV_HELM_VERSION"
OV_HELM_BIN="$OV_HELM_ROOT/bin/helm"

# Fixed addresses and credentials of the local services. OV_PORT_OFFSET (default 0) is added to
# every port, so that a second environment (another worktree, another user) can run beside the
# first on the same machine; `scripts/test-env env` prints the resulting addresses.
OV_HOST="127.0.0.1"
OV_PORT_OFFSET="${OV_PORT_OFFSET:-0}"
[[ "$OV_PORT_OFFSET" =~ ^[0-9]+$ ]] || { echo "error: OV_PORT_OFFSET must be a number, not '$OV_PORT_OFFSET'" >&2; exit 2; }
OV_KAFKA_PORT=$((19092 + OV_PORT_OFFSET))
OV_KAFKA_CONTROLLER_PORT=$((19093 + OV_PORT_OFFSET))
# A SASL_PLAINTEXT (PLAIN) listener, to test authentication failures.
OV_KAFKA_SASL_PORT=$((19094 + OV_PORT_OFFSET))
# SASL_PLAINTEXT with SCRAM-SHA-256 and SCRAM-SHA-512 (one user, credentials for both mechanisms,
# added when the data directory is formatted), and TLS without client authentication (a CA and a
# broker certificate for 127.0.0.1 and localhost, made per environment under $OV_TEST_ENV_DIR/tls).
OV_KAFKA_SCRAM_PORT=$((19095 + OV_PORT_OFFSET))
OV_KAFKA_TLS_PORT=$((19096 + OV_PORT_OFFSET))
OV_SCRAM_USER_VALUE="ov-scram"
OV_SCRAM_PASSWORD_VALUE="ov-scram-secret"
# A PLAINTEXT listener that the broker advertises on another port than the one it binds: a delay
# proxy listens on the advertised port and forwards to the bound one, so that every connection a
# client makes after bootstrapping goes through the proxy (latency benchmarks).
OV_KAFKA_PROXIED_LISTEN_PORT=$((19098 + OV_PORT_OFFSET))
OV_KAFKA_PROXIED_ADVERTISED_PORT=$((19099 + OV_PORT_OFFSET))
OV_CONNECT_PORT=$((18083 + OV_PORT_OFFSET))
OV_S3_PORT=$((19000 + OV_PORT_OFFSET))
OV_S3_BUCKET_NAME="offset-vault-test"
OV_S3_ACCESS_KEY_VALUE="ovtestaccess"
OV_S3_SECRET_KEY_VALUE="ovtestsecret-0123456789"
OV_S3_REGION_VALUE="us-east-1"

# The jars that must be in the cache (a cache filled before one of them was added is fetched again).
ov_kafka_required_jars() {
  echo "kafka_2.13-$OV_KAFKA_VERSION.jar" "kafka-tools-$OV_KAFKA_VERSION.jar" \
    "connect-runtime-$OV_KAFKA_VERSION.jar" "connect-json-$OV_KAFKA_VERSION.jar" \
    "connect-file-$OV_KAFKA_VERSION.jar" "connect-mirror-$OV_KAFKA_VERSION.jar" \
    "connect-mirror-client-$OV_KAFKA_VERSION.jar" "kafka-streams-$OV_KAFKA_VERSION.jar" \
    "log4j-core-$OV_LOG4J_VERSION.jar"
}

# True when the Kafka jars are fully in the cache.
ov_kafka_jars_cached() {
  [[ -f "$OV_KAFKA_HOME/.complete" && -d "$OV_KAFKA_LIBS" ]] || return 1
  local jar
  for jar in $(ov_kafka_required_jars); do
    [[ -f "$OV_KAFKA_LIBS/$jar" ]] || return 1
  done
}

# The test Streams application (fixtures/streams-app), compiled against the cached jars. The
# directory name carries the Kafka version and a hash of the source, so an edit is compiled anew.
OV_STREAMS_APP_SRC="$OV_REPO_DIR/fixtures/streams-app/OvStreamsApp.java"
ov_streams_app_dir() {
  local hash
  hash="$(sha256sum "$OV_STREAMS_APP_SRC" | cut -c1-12)"
  echo "$OV_CACHE_DIR/streams-app-$OV_KAFKA_VERSION-$hash"
}
