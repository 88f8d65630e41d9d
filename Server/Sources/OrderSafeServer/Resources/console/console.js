// Progressive enhancement only: every page reads and every form works without this script.
// It tells the server the browser's time zone, so times are shown in the operator's zone from the next page on.
(function () {
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!zone) return;
    var current = document.cookie.split("; ").filter(function (c) { return c.indexOf("ordersafe_tz=") === 0; })[0];
    var wanted = "ordersafe_tz=" + encodeURIComponent(zone);
    if (current !== wanted) {
      document.cookie = wanted + "; path=/admin; max-age=31536000; samesite=strict";
      var shown = document.getElementById("zone");
      if (shown && shown.textContent !== zone && !current) location.reload();
    }
  } catch (e) { /* an old browser: times stay in the configured zone */ }
})();
