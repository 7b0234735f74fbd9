/* Keyboard focus across htmx swaps. When a swap removes the element that had focus (the
 * scope tree's ▸, the block preview's form, a pager link, an inline action's button), the
 * browser drops focus to <body> and a keyboard user starts again from the top of the page.
 * htmx itself only puts focus back on an element with the same id; this file finds the
 * next best thing in the new content, in this order:
 *
 *   1. a message the swap brought (an error, role=alert, or an action's notice, .flash):
 *      the result is read out;
 *   2. the counterpart of what had focus: the same disclosure (aria-expanded), the same
 *      form field (name), or a link or button with the same text ("next ›", "Preview");
 *   3. the new content's first heading;
 *   4. the new content itself.
 *
 * Headings, messages and regions are given tabindex=-1 so they can take focus. Nothing
 * happens when focus is still somewhere (a filter field outside the swapped list, a
 * live poll adding rows), so a swap never pulls focus away from where someone is typing.
 */
(function () {
  "use strict";

  var FOCUSABLE = "a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), " +
    "select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex='-1'])";
  var asked = new WeakMap(); // request -> the element that had focus when it was sent
  var lost = null; // what had focus inside a target about to be swapped
  var fresh = []; // the elements the swap put in

  function focused() {
    var active = document.activeElement;
    return active && active !== document.body && active !== document.documentElement ? active : null;
  }

  function describe(elt) {
    return {
      tag: elt.tagName,
      name: elt.getAttribute("name"),
      expandable: elt.hasAttribute("aria-expanded"),
      text: (elt.textContent || "").trim()
    };
  }

  function first(selector, test) {
    for (var i = 0; i < fresh.length; i++) {
      var root = fresh[i];
      var candidates = [root].concat(Array.prototype.slice.call(root.querySelectorAll(selector)));
      for (var j = 0; j < candidates.length; j++) {
        var elt = candidates[j];
        if (elt.matches(selector) && (!test || test(elt)) && elt.getClientRects().length) return elt;
      }
    }
    return null;
  }

  function counterpart() {
    if (lost.expandable) return first("[aria-expanded]");
    if (lost.name) {
      return first(FOCUSABLE, function (elt) {
        return elt.tagName === lost.tag && elt.getAttribute("name") === lost.name;
      });
    }
    if (!lost.text) return null;
    return first(FOCUSABLE, function (elt) {
      return elt.tagName === lost.tag && (elt.textContent || "").trim() === lost.text;
    });
  }

  function choose() {
    var message = first("[role=alert], .flash");
    if (message) return message;
    var same = counterpart();
    if (same) return same;
    var heading = first("h1, h2, h3, h4, h5, h6");
    if (heading) return heading;
    for (var i = 0; i < fresh.length; i++) {
      if (fresh[i].isConnected && fresh[i].getClientRects().length) return fresh[i];
    }
    return null;
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    var active = focused();
    if (active && event.detail.xhr) asked.set(event.detail.xhr, active);
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    // A button disabled while its request runs (hx-disabled-elt) has lost focus already.
    var had = focused() || (event.detail.xhr && asked.get(event.detail.xhr));
    lost = had && target && target.contains(had) ? describe(had) : null;
    fresh = [];
  });

  document.addEventListener("htmx:afterSwap", function (event) {
    if (lost && event.target instanceof Element) fresh.push(event.target);
  });

  document.addEventListener("htmx:afterSettle", function () {
    if (!lost) return;
    if (!focused()) {
      var elt = choose();
      if (elt) {
        if (!elt.matches(FOCUSABLE) && !elt.hasAttribute("tabindex")) elt.setAttribute("tabindex", "-1");
        elt.focus();
      }
    }
    lost = null;
    fresh = [];
  });
})();
