"""The web console in a real browser: Debian's headless Chromium driven by selenium
(scripts/setup.d/60-chromium.sh installs both). The page loads and shows the cluster,
a screenshot is a real picture, and its buttons really change the cluster: a broker
stopped and started from the page, a reassignment started there and completed."""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaProducer
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from emulator import Cluster
from emulator.testing import wait_for

pytestmark = pytest.mark.emulator_only


def _binary(*names: str) -> str:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError(f"none of {names} on PATH: run scripts/setup.d/60-chromium.sh "
                         "(apt-get install chromium chromium-driver)")


@pytest.fixture
def browser() -> Iterator[webdriver.Chrome]:
    opts = webdriver.ChromeOptions()
    opts.binary_location = _binary("chromium", "chromium-browser")
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1100"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(options=opts, service=Service(_binary("chromedriver")))
    try:
        yield driver
    finally:
        driver.quit()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def click(driver: webdriver.Chrome, css: str) -> None:
    """A real click on ``css``; the page re-renders every second, so an element found
    may be replaced before the click lands: find it again then."""
    def attempt(d: webdriver.Chrome) -> bool:
        found = d.find_elements(By.CSS_SELECTOR, css)
        if not found:
            return False
        found[0].click()
        return True
    WebDriverWait(driver, 20, ignored_exceptions=[StaleElementReferenceException]).until(
        attempt, f"clicking {css}")


def cells(driver: webdriver.Chrome, css: str) -> list[list[str]]:
    """The text of a table's cells, read in one go inside the page (no stale rows)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map("
        "r => [...r.querySelectorAll('td')].map(td => td.textContent))", css)


def broker(c: Cluster, bid: int) -> dict:
    return next(b for b in c.cluster_info()["brokers"] if b["id"] == bid)


def test_console_in_chromium(browser: webdriver.Chrome, tmp_path: Path) -> None:
    with Cluster(brokers=3, port=0, control_port=0) as c:
        c.create_topic("ui-orders", partitions=4, replication_factor=2)
        producer = KafkaProducer(bootstrap_servers=c.bootstrap_servers)
        for i in range(200):
            producer.send("ui-orders", value=b"order-%d" % i, partition=i % 4)
        producer.flush()
        producer.close()

        browser.get(f"http://127.0.0.1:{c.control.port}/ui")
        wait = WebDriverWait(browser, 20)
        wait.until(lambda d: d.find_element(By.ID, "status").text == "live")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#brokers tbody tr")) == 3)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, 'details[data-topic="ui-orders"]'))
        # Open the topic: its partitions with leader, replicas, ISR, HW and LEOs.
        click(browser, 'details[data-topic="ui-orders"] summary')
        rows_css = 'details[data-topic="ui-orders"] tbody tr'
        wait.until(lambda d: len(cells(d, rows_css)) == 4)
        rows = cells(browser, rows_css)
        # partition, leader, replicas, ISR, high watermark (50 each), LEOs per replica
        assert [r[0] for r in rows] == ["0", "1", "2", "3"] and {r[4] for r in rows} == {"50"}
        assert all(r[5].count(":50") == 2 for r in rows), rows
        assert "controller" in browser.find_element(By.ID, "brokers").text
        summary = browser.find_element(By.ID, "summary").text
        assert "3 partitions" not in summary and "partitions" in summary

        # Produce while the page watches: the chart's legend shows a rate.
        producer = KafkaProducer(bootstrap_servers=c.bootstrap_servers)
        for i in range(400):
            producer.send("ui-orders", value=b"more-%d" % i, partition=0)
        producer.flush()
        producer.close()
        wait.until(lambda d: any(not s.startswith("0 ") for s in d.execute_script(
            "return [...document.querySelectorAll('#legend')].map(e => e.textContent)"
            "[0].split(': ').slice(1)")))
        shot = browser.get_screenshot_as_png()
        width, height = png_size(shot)
        assert width >= 1000 and height >= 600 and len(shot) > 20_000, (width, height, len(shot))
        out = Path(os.environ.get("CONSOLE_SCREENSHOT_DIR", tmp_path))
        out.mkdir(parents=True, exist_ok=True)
        (out / "console.png").write_bytes(shot)

        # Stop broker 3 from the page: the cluster really loses it.
        click(browser, 'button[data-action="stop"][data-broker="3"]')
        wait_for(lambda: broker(c, 3)["crashed"] or not broker(c, 3)["alive"],
                 "broker 3 stopped by the page's button")
        click(browser, 'button[data-action="start"][data-broker="3"]')
        wait_for(lambda: broker(c, 3)["alive"] and not broker(c, 3)["crashed"],
                 "broker 3 started again by the page's button")

        # Start a reassignment from the page's form; it completes in the cluster.
        current = c.cluster_info()["topics"]["ui-orders"]["partitions"][1]["replicas"]
        target = [b for b in (1, 2, 3) if b not in current] + [current[0]]
        browser.find_element(By.ID, "reassign-topic").send_keys("ui-orders")
        part = browser.find_element(By.ID, "reassign-partition")
        part.clear()
        part.send_keys("1")
        browser.find_element(By.ID, "reassign-replicas").send_keys(
            ",".join(str(b) for b in target))
        # The new replica's fetching is held (a fault injected from the page), so the
        # move shows in flight with its progress bar until the fault is cleared.
        new = target[0]
        browser.find_element(By.ID, "fault-json").send_keys(
            f'{{"op": "pause_follower", "broker": {new}}}')
        click(browser, "#fault-apply")
        wait_for(lambda: c.call(lambda: c.faults.model.describe())["followers"],
                 "the page's fault to be in force")
        click(browser, "#reassign-start")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#reassignments .bar"))
        assert "ui-orders-1" in browser.find_element(By.ID, "reassignments").text
        assert "pause_follower" in browser.find_element(By.ID, "faults").text
        click(browser, "#fault-clear")
        wait_for(lambda: c.cluster_info()["topics"]["ui-orders"]["partitions"][1]["replicas"]
                 == target, "the page's reassignment to complete")
        wait.until(lambda d: "none in flight" in d.find_element(By.ID, "reassignments").text)
        assert "done" in browser.find_element(By.ID, "message").text
