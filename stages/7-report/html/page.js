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
  // The pair view: the chosen pair drawn from each provider's figure cells and the pair's
  // differences table (views.rs `pair` writes both, and draws the first pair the same way).
  function header(label) {
    return label.replace(/_/g, "_<wbr>");
  }
  function drawPair(key) {
    var holder = document.getElementById("pair-drawn");
    var source = document.getElementById("pair-data");
    if (!holder || !source) {
      return;
    }
    var data = JSON.parse(source.textContent);
    var two = key.split("|");
    var a = data.providers[two[0]];
    var b = data.providers[two[1]];
    if (!a || !b) {
      throw new Error("pair " + key + ": no figures in #pair-data");
    }
    var t = "<div class=\"scroll\"><table><thead><tr><th scope=\"col\" class=\"l\">Figure</th>" +
      "<th scope=\"col\">" + header(a.label) + "</th><th scope=\"col\">" + header(b.label) + "</th></tr></thead><tbody>";
    for (var k = 0; k < data.figures.length; k++) {
      t += "<tr><th scope=\"row\" class=\"l\">" + data.figures[k] + "</th><td>" + a.cells[k] + "</td><td>" +
        b.cells[k] + "</td></tr>";
    }
    t += "</tbody></table></div>";
    holder.innerHTML = t + (data.differences[key] || "");
    holder.setAttribute("data-pair", key);
  }
  try {
    bind("scope-select", "data-scope");
    var pairs = document.getElementById("pair-select");
    if (pairs) {
      pairs.addEventListener("change", function () {
        drawPair(pairs.value);
      });
      if (document.getElementById("pair-drawn") && document.getElementById("pair-drawn").getAttribute("data-pair") !== pairs.value) {
        drawPair(pairs.value);
      }
    }
    bind("pair-select", "data-pair");
    root.setAttribute("data-report-ready", "1");
  } catch (e) {
    fail(e && e.message ? e.message : e);
  }
})();
