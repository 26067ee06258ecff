/**
 * The only script on the pages (progressive enhancement: every form works without it).
 * It moves focus to a result or error heading, and while a payment is in progress it polls the
 * JSON status endpoint and reloads the page when the state changes. Served inline under the
 * response's CSP nonce.
 */
export const PAGE_SCRIPT = `(function () {
  var focus = document.querySelector('[data-autofocus]');
  if (focus) focus.focus();
  var poll = document.querySelector('[data-poll]');
  if (!poll) return;
  var url = poll.getAttribute('data-poll');
  var state = poll.getAttribute('data-state');
  var live = document.getElementById('live-status');
  var done = false;
  function schedule(ms) { if (!done) setTimeout(tick, ms); }
  function tick() {
    fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store', credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (s) {
        if (!s) return schedule(3000);
        if (s.state !== state) {
          done = true;
          if (live) live.textContent = s.state === 'paid' ? 'Payment received. Loading…' : 'The payment did not go through. Loading…';
          window.location.replace(window.location.pathname);
          return;
        }
        schedule(1000);
      })
      .catch(function () { schedule(3000); });
  }
  schedule(1000);
})();`;
