"""Every console page at 390, 1024 and 1280 px: nothing scrolls the page sideways, every
link of the top bar stays on the dark bar and inside the window, and long unbroken text
(a fact, a run id) wraps instead of being cut. One browser context per person."""

import pytest

from tests.console_tour import UNKNOWN_PATH, log_in, open_bulk_confirm, seed

pytestmark = pytest.mark.browser

WIDTHS = (390, 1024, 1280)

# Measured in the page: what overflows, and where each control of the top bar ends up.
MEASURE = """
() => {
  const bar = document.querySelector("header.topbar");
  if (!bar) return null;
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width};
  };
  const rgb = (value) => (value.match(/[\\d.]+/g) || []).map(Number);
  const controls = [...bar.querySelectorAll(".brand, nav a, .whoami button")].map((el) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return {
      text: el.textContent.trim(),
      box: box(el),
      onTop: !!hit && (hit === el || el.contains(hit)),
      color: rgb(getComputedStyle(el).color),
    };
  });
  // Text that must wrap: cut off by a scrolling ancestor, or past the window's edge.
  const cut = [...document.querySelectorAll("main .fact, main .msg-text, main h1")]
    .filter((el) => {
      let clip = el.parentElement;
      while (clip && getComputedStyle(clip).overflowX === "visible") clip = clip.parentElement;
      const right = el.getBoundingClientRect().right;
      const edge = clip ? clip.getBoundingClientRect().right : window.innerWidth;
      return right > Math.min(edge, window.innerWidth) + 1 || el.scrollWidth > el.clientWidth + 1;
    })
    .map((el) => el.tagName + "." + el.className);
  // For the message: the outermost elements that reach past the window's edge.
  const name = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.classList.length ? "." + [...el.classList].join(".") : "");
  const sticksOut = (el) => el.getBoundingClientRect().right > window.innerWidth + 1;
  const scrolled = (el) => {
    for (let up = el.parentElement; up; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== "visible") return up !== document.documentElement;
    }
    return false;
  };
  const wide = [...document.body.querySelectorAll("*")]
    .filter((el) => sticksOut(el) && !sticksOut(el.parentElement) && !scrolled(el))
    .slice(0, 3)
    .map(name);
  return {
    wide,
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
    bar: box(bar),
    barColor: rgb(getComputedStyle(bar).backgroundColor),
    controls,
    cut,
  };
}
"""


def _luminance(rgb) -> float:
    def channel(value):
        value = value / 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(one, two) -> float:
    light, dark = sorted((_luminance(one), _luminance(two)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def layout_problems(page, where: str) -> list[str]:
    m = page.evaluate(MEASURE)
    if m is None:
        return [f"{where}: not the console's layout (no top bar)"]
    found = []
    if m["scrollWidth"] > m["innerWidth"]:
        sideways = m["scrollWidth"] - m["innerWidth"]
        found.append(f"{where}: scrolls sideways by {sideways}px ({', '.join(m['wide'])})")
    for text in m["cut"]:
        found.append(f"{where}: {text} is cut or sticks out")
    bar = m["bar"]
    for c in m["controls"]:
        b = c["box"]
        if b["width"] == 0:
            found.append(f"{where}: {c['text']!r} is not shown")
        elif b["left"] < 0 or b["right"] > m["innerWidth"]:
            found.append(f"{where}: {c['text']!r} is outside the window")
        elif (
            b["left"] < bar["left"]
            or b["right"] > bar["right"] + 0.5
            or b["top"] < bar["top"]
            or b["bottom"] > bar["bottom"] + 0.5
        ):
            found.append(f"{where}: {c['text']!r} falls off the bar")
        elif not c["onTop"]:
            found.append(f"{where}: {c['text']!r} is covered")
        elif contrast(c["color"], m["barColor"]) < 4.5:
            found.append(f"{where}: {c['text']!r} has too little contrast")
    return found


def test_every_page_fits_each_width_with_its_menu_on_the_bar(
    browser, live_server, org, users, settings
):
    tour = seed(org, users, settings)
    problems: list[str] = []

    def measure(page, where: str) -> None:
        # One load per page; the window is then resized to each width in turn (media
        # queries apply at once, and no page script lays anything out on load).
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 800})
            problems.extend(layout_problems(page, f"{width}px {where}"))

    def visit(page, who: str, name: str, path: str) -> None:
        page.goto(path)
        measure(page, f"{who} {name}")

    def context_for(who: str | None):
        context = browser.new_context(base_url=live_server.url)
        page = context.new_page()
        page.set_default_timeout(15_000)
        if who:
            log_in(page, who)
        return context, page

    context, page = context_for(None)
    visit(page, "anonymous", "login", "/login/")
    visit(page, "anonymous", "unknown page", UNKNOWN_PATH)
    context.close()

    context, page = context_for("root")
    for name, path in tour.pages.items():
        visit(page, "root", name, path)
    open_bulk_confirm(page)
    measure(page, "root bulk confirm")
    context.close()

    # The menu of a tenant's administrator (no Users), and the 403 page they meet there.
    context, page = context_for("owner")
    visit(page, "owner", "refused", "/users/")
    visit(page, "owner", "dashboard", "/")
    context.close()

    assert not problems, "\n".join(problems)
