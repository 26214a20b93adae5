// Live updates for the fleet page: listen to /ui/events and, when the fleet changes, fetch the page
// shown again and swap its <main>. Without JavaScript the page is complete as served; reload to refresh.
"use strict";
(function () {
  if (!window.EventSource || !window.fetch || !window.DOMParser) { return; }
  var live = document.getElementById("live");
  var busy = false, again = false, waiting = false;
  function typing() {  // someone is choosing a filter or typing a token: do not swap the form away
    var el = document.activeElement;
    return el && /^(SELECT|INPUT|TEXTAREA)$/.test(el.tagName);
  }
  function refresh() {
    if (busy) { again = true; return; }
    if (typing()) {
      if (!waiting) { waiting = true; setTimeout(function () { waiting = false; refresh(); }, 2000); }
      return;
    }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (text) {
        if (text === null) { return; }
        var doc = new DOMParser().parseFromString(text, "text/html");
        var fresh = doc.getElementById("main"), old = document.getElementById("main");
        if (fresh && old) { old.replaceWith(document.importNode(fresh, true)); }
        var footer = doc.querySelector("footer"), mine = document.querySelector("footer");
        if (footer && mine) { mine.textContent = footer.textContent; }
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }
  var source = new EventSource("/ui/events");
  source.addEventListener("open", function () { if (live) { live.hidden = false; } });
  source.addEventListener("error", function () { if (live) { live.hidden = true; } });
  source.addEventListener("change", refresh);
})();
