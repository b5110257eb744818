#!/usr/bin/env bash
# Spark for spark_validation/: Java 17 and Maven from Debian when missing, the PySpark
# release spark_validation/versions.py pins (its connector must be the same release),
# and the connector jars from Maven Central into spark_validation/jars/ (gitignored).
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/progress.sh
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi

missing=()
java -version 2>&1 | grep -q 'version "17' || missing+=(openjdk-17-jre-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} from Debian"
  $SUDO apt-get update -qq
  progress "apt: ${missing[*]}" \
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# The main environment always holds the default release (the matrix uses venvs).
export SPARK_VALIDATION_SPARK=
want=$(python3 spark_validation/versions.py --pip-requirement)
have=$(python3 -c 'from importlib.metadata import version; print("pyspark==" + version("pyspark"))' 2>/dev/null || true)
if [ "$have" != "$want" ]; then
  echo "installing $want (had: ${have:-none})"
  progress "pip: $want" python3 -m pip install --progress-bar off "$want"
fi

python3 -m spark_validation.fetch_jars
python3 spark_validation/versions.py
