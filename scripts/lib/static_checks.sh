# Sourced by scripts/test and scripts/quick: the static checks (docs/architecture.md),
# lint, types, the import layers, import cycles; each fails the run (set -e).
static_checks() {
  echo "== ruff check"
  ruff check .
  echo "== mypy (scripts/typecheck.py; the errors left are counted in scripts/mypy-baseline.txt)"
  python3 scripts/typecheck.py
  echo "== import layers (lint-imports; contracts in pyproject.toml)"
  lint-imports
  echo "== import cycles, annotations included (scripts/check_cycles.py)"
  python3 scripts/check_cycles.py
}
