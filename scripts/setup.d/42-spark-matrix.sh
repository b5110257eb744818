#!/usr/bin/env bash
# The Spark version matrix's venvs (spark_validation/venvs.py): one per release named in
# SPARK_VALIDATION_MATRIX (e.g. "3.5.7 4.2.0"), each holding that PySpark, plus each
# release's connector jars from Maven Central. scripts/spark_matrix sets the variable;
# scripts/test does not, so CI (which runs the default release, 4.0.0, from the main
# environment) only prints that nothing was asked. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/../.."
matrix=${SPARK_VALIDATION_MATRIX:-}
if [ -z "$matrix" ]; then
  echo "spark matrix: no release asked (scripts/spark_matrix sets SPARK_VALIDATION_MATRIX;" \
       "the releases: $(SPARK_VALIDATION_SPARK= python3 spark_validation/versions.py --matrix))"
  exit 0
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
for v in $matrix; do
  SPARK_VALIDATION_SPARK= python3 -m spark_validation.venvs "$v"
  py=$(python3 -c "from spark_validation import venvs; print(venvs.venv_python('$v'))")
  echo "spark $v: fetching its connector jars"
  SPARK_VALIDATION_SPARK=$v "$py" -m spark_validation.fetch_jars
done
