"""Real headless Chromium for page tests: Debian's /usr/bin/chromium driven through
/usr/bin/chromedriver by Selenium (never a downloaded browser). A test that uses it is marked
`browser` (tests/conftest.py skips it, saying why, where the browser is missing)."""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from typing import Iterator

PHONE = {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True}
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@contextmanager
def chromium() -> Iterator["object"]:
    """A headless Chromium WebDriver, quit afterwards. Its profile and its temporary files
    (Chromium leaves an `org.chromium.Chromium.*` folder in TMPDIR at every start) live in a
    folder of the test's own, removed afterwards."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    with tempfile.TemporaryDirectory(prefix="arena-chromium-") as scratch:
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1280,1600",
                     f"--user-data-dir={scratch}/profile"):
            options.add_argument(flag)
        service = Service(CHROMEDRIVER, env={**os.environ, "TMPDIR": scratch})
        driver = webdriver.Chrome(service=service, options=options)
        try:
            yield driver
        finally:
            driver.quit()


def sign_in(browser, service, author: str) -> None:
    """Signs `author` in on `service` (tests/serving.py) through its login form."""
    from selenium.webdriver.common.by import By
    browser.get(service.url + "/login")
    browser.delete_all_cookies()
    browser.find_element(By.ID, "token").send_keys(service.tokens[author])
    browser.find_element(By.ID, "sign-in").click()
    settled(browser, lambda driver: f"signed in as {author}"
            in driver.find_element(By.TAG_NAME, "header").text)


def settled(browser, condition):
    """Waits for `condition` on the page a click leads to. The old page's elements go away
    meanwhile: one found just before the new page replaces it is stale when it is read, which
    Chromium reports as a stale element or, between two of its calls, as a node that "does not
    belong to the document"; either way the wait tries again."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def on_the_new_page(driver):
        try:
            return condition(driver)
        except StaleElementReferenceException:
            return False
        except WebDriverException as error:
            if "does not belong to the document" in str(error.msg):
                return False
            raise
    return WebDriverWait(browser, 30).until(on_the_new_page)


@contextmanager
def phone(browser) -> Iterator[None]:
    """The browser as a phone's screen (PHONE: 390 px wide) while the block runs."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", PHONE)
    try:
        yield
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def widths(browser) -> tuple[int, int, int]:
    """The page's width, the width it scrolls to and the window's, in CSS pixels."""
    return tuple(browser.execute_script(
        "const root = document.documentElement;"
        "return [root.clientWidth, root.scrollWidth, window.innerWidth];"))
