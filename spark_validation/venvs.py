"""One virtual environment per Spark release of the version matrix (versions.MATRIX).

    python -m spark_validation.venvs 3.5.7 4.2.0   # idempotent; prints each venv's python

A PySpark release carries its own JVM jars and its own py4j, so two releases cannot share
a site-packages. Each venv is made with ``--system-site-packages`` from the interpreter
that runs this (so the emulator's dependencies, pytest and the client libraries come
from the main environment) and gets only ``pyspark==X`` (and the py4j it pins) itself;
a venv's own site-packages comes first on sys.path, so its PySpark shadows the main
environment's. The default release needs no venv: the main environment has it.

Venvs live under ``$SPARK_VALIDATION_VENVS`` (default ~/.cache/kafka-emulator/spark-venvs),
outside the worktree, so every clone and worktree shares the 300-400 MB per release. A
``.complete`` marker, written last, makes a half-made venv count as absent.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from spark_validation import versions

MARKER = ".complete"


def venvs_root() -> Path:
    env = os.environ.get("SPARK_VALIDATION_VENVS")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "kafka-emulator" / "spark-venvs"


def venv_dir(spark_version: str) -> Path:
    return venvs_root() / f"pyspark-{spark_version}"


def venv_python(spark_version: str) -> Path:
    return venv_dir(spark_version) / "bin" / "python"


def ready(spark_version: str) -> bool:
    return (venv_dir(spark_version) / MARKER).exists()


def _run(label: str, cmd: list[str]) -> None:
    """Run an install command with a progress line every 15 s (pip is silent for a
    minute while it downloads 300-400 MB), its output shown only when it fails."""
    start = time.monotonic()
    print(f"{label} ...", flush=True)
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        while True:
            try:
                proc.wait(timeout=15)
                break
            except subprocess.TimeoutExpired:
                log.seek(0)
                lines = [x for x in log.read().decode(errors="replace").splitlines() if x.strip()]
                last = lines[-1].strip()[:100] if lines else ""
                print(f"  {label}: still running ({time.monotonic() - start:.0f} s; "
                      f"last: {last})", flush=True)
        if proc.returncode != 0:
            log.seek(0)
            sys.stderr.write(log.read().decode(errors="replace")[-6000:])
            raise RuntimeError(f"{label} failed (exit {proc.returncode}): {' '.join(cmd)}")
    print(f"  {label}: done in {time.monotonic() - start:.0f} s", flush=True)


def ensure(spark_version: str) -> Path:
    """Create (once) the venv holding ``pyspark==spark_version``; return its python."""
    if spark_version not in versions.MATRIX:
        raise RuntimeError(f"Spark {spark_version} is not in the matrix "
                           f"{sorted(versions.MATRIX)} (spark_validation/versions.py)")
    d = venv_dir(spark_version)
    py = venv_python(spark_version)
    if ready(spark_version):
        return py
    if d.exists():
        shutil.rmtree(d)
    d.parent.mkdir(parents=True, exist_ok=True)
    _run(f"venv {d}", [sys.executable, "-m", "venv", "--system-site-packages", str(d)])
    _run(f"pip: pyspark=={spark_version} into {d.name}",
         [str(py), "-m", "pip", "install", "--progress-bar", "off",
          "--disable-pip-version-check", f"pyspark=={spark_version}"])
    got = subprocess.run(
        [str(py), "-c", "import importlib.metadata as m, pyspark, py4j; "
         "print(m.version('pyspark'), pyspark.__file__)"],
        capture_output=True, text=True, check=True).stdout.split()
    if got[0] != spark_version or not got[1].startswith(str(d)):
        raise RuntimeError(f"venv {d}: PySpark {got} does not shadow the main one")
    (d / MARKER).write_text(f"pyspark=={spark_version}\n")
    return py


def python_for(spark_version: str) -> Path:
    """The interpreter that runs ``spark_version``: this one for the default release when
    it holds it, else the matrix venv (created on first use)."""
    if spark_version == versions.DEFAULT_SPARK_VERSION and \
            versions.installed_pyspark() == spark_version:
        return Path(sys.executable)
    return ensure(spark_version)


def main(argv: list[str]) -> int:
    wanted = argv or [v for v in versions.MATRIX if v != versions.DEFAULT_SPARK_VERSION]
    for v in wanted:
        print(f"pyspark {v}: {python_for(v)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
