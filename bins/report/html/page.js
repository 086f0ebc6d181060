// report.html: switches the distributions' scope and the compared pair; no network.
(function () {
  "use strict";
  var root = document.documentElement;
  function fail(message) {
    root.setAttribute("data-report-error", String(message));
  }
  window.onerror = function (message) {
    fail(message);
  };
  function show(attribute, value) {
    var nodes = document.querySelectorAll("[" + attribute + "]");
    // The attribute, not the property: SVG elements have no `hidden` property.
    for (var i = 0; i < nodes.length; i++) {
      if (nodes[i].getAttribute(attribute) === value) {
        nodes[i].removeAttribute("hidden");
      } else {
        nodes[i].setAttribute("hidden", "");
      }
    }
  }
  function bind(selectId, attribute) {
    var select = document.getElementById(selectId);
    if (!select) {
      return;
    }
    select.addEventListener("change", function () {
      show(attribute, select.value);
    });
    show(attribute, select.value);
  }
  try {
    bind("scope-select", "data-scope");
    bind("pair-select", "data-pair");
    root.setAttribute("data-report-ready", "1");
  } catch (e) {
    fail(e && e.message ? e.message : e);
  }
})();
