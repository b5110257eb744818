"""The image a Docker test runs, or the test fails (never skips) saying what is missing."""

from __future__ import annotations

import docker
import pytest


def require_image(image: str) -> str:
    """``image`` when a Docker engine answers and has it; else the test fails naming the
    setup step that provides it."""
    try:
        client = docker.from_env()
        client.ping()
    except Exception as e:  # noqa: BLE001 - any failure means the same thing here
        pytest.fail(f"no Docker engine answers ({e}); run scripts/setup.d/50-docker.sh")
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        pytest.fail(f"image {image} is missing; run scripts/setup.d/50-docker.sh to build it")
    return image
