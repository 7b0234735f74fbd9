/* Live updates for a list that polls with htmx: the element marked [data-live-poll] carries
 * hx-get and hx-trigger="every Ns, live:resume". This file only decides whether a poll
 * goes out: not while the tab is hidden, not while the person has pressed "Pause", and not
 * after the session ended (the poll was answered by the login page). Showing the tab again
 * or pressing "Resume" polls at once.
 *
 * Gating happens here, in a static file, rather than in an hx-trigger filter such as
 * `every 5s [!document.hidden]`: htmx evaluates those filters with Function(), which a
 * strict Content-Security-Policy (no inline script, no eval) forbids.
 */
(function () {
  "use strict";

  var paused = false;
  var stopped = false;

  function isPoller(elt) {
    return !!(elt && elt.hasAttribute && elt.hasAttribute("data-live-poll"));
  }

  function state() {
    if (stopped) return "Live updates stopped: the session ended. Reload the page.";
    if (paused) return "Paused: new events are not fetched.";
    if (document.hidden) return "Paused while this tab is hidden.";
    return "Live: new events appear as they are recorded.";
  }

  function sync() {
    document.querySelectorAll("[data-live]").forEach(function (box) {
      box.hidden = false;
      box.classList.toggle("is-paused", paused || stopped);
      var status = box.querySelector("[data-live-state]");
      if (status) status.textContent = state();
      var toggle = box.querySelector("[data-live-toggle]");
      if (toggle) {
        toggle.hidden = stopped;
        toggle.setAttribute("aria-pressed", paused ? "true" : "false");
        toggle.textContent = paused ? "Resume" : "Pause";
      }
    });
  }

  function resume() {
    var poller = document.querySelector("[data-live-poll]");
    if (poller && window.htmx) window.htmx.trigger(poller, "live:resume");
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (isPoller(event.detail.elt) && (paused || stopped || document.hidden)) {
      event.preventDefault();
    }
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    var config = event.detail.requestConfig;
    if (!config || !isPoller(config.elt)) return;
    // A poll answered from another address was redirected: to the login page.
    // Compare paths only: the login page's own query (?next=/ledger/new/…) names the
    // polled path too, so a substring test would miss the redirect.
    var asked = (config.path || "").split("?")[0];
    var answered = "";
    try {
      answered = new URL(event.detail.xhr.responseURL || "", window.location.href).pathname;
    } catch (e) {
      answered = "";
    }
    if (asked && answered && answered !== new URL(asked, window.location.href).pathname) {
      event.detail.shouldSwap = false;
      stopped = true;
      sync();
    }
  });

  document.addEventListener("click", function (event) {
    var toggle = event.target.closest ? event.target.closest("[data-live-toggle]") : null;
    if (!toggle) return;
    paused = !paused;
    sync();
    if (!paused) resume();
  });

  document.addEventListener("visibilitychange", function () {
    sync();
    if (!document.hidden && !paused) resume();
  });

  // Filters and page links swap the list (and its live box) for a new one.
  document.addEventListener("htmx:load", sync);
  sync();
})();
