"""Real headless Chromium for page tests: Debian's /usr/bin/chromium driven through
/usr/bin/chromedriver by Selenium (never a downloaded browser). A test that uses it is marked
`browser` (tests/conftest.py skips it, saying why, where the browser is missing)."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@contextmanager
def chromium() -> Iterator["object"]:
    """A headless Chromium WebDriver, quit afterwards."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1600"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
