// The redeye dashboard page: one EventSource on ./events, tiles kept in a map by name and re-rendered only when
// changed, at most once per animation frame. No framework, nothing loaded from elsewhere.
(function () {
  'use strict';
  var readOnly = document.body.getAttribute('data-read-only') === 'true';
  // false where the host authenticates requests itself (Spring Security): no token field
  var tokenActions = document.body.getAttribute('data-token-actions') !== 'false';
  var tilesEl = document.getElementById('tiles');
  var timelineEl = document.getElementById('timeline');
  var chart = document.getElementById('timeline-chart');
  var filterEl = document.getElementById('filter');
  var tokenEl = document.getElementById('token');
  var connEl = document.getElementById('connection');
  var storeBanner = document.getElementById('store-banner');
  var actionMsg = document.getElementById('action-message');
  var summaryEl = document.getElementById('summary');
  var TIMELINE_SHOWN = 200;
  var HOUR = 3600000;

  var tiles = new Map();      // name -> tile (JSON)
  var elements = new Map();   // name -> element
  var dirty = new Set();
  var timeline = [];
  var timelineDirty = false;
  var scheduled = false;
  var filter = '';
  var skew = 0;               // server clock - browser clock, ms

  // What the browser test reads: events received and the time spent rendering them.
  var stats = window.redeyeStats = {
    events: 0, transitions: 0, renders: 0, renderMillis: 0, maxRenderMillis: 0, snapshots: 0, lastEventAt: 0
  };

  if (!tokenActions) { document.getElementById('token-box').classList.add('hidden'); }
  tokenEl.value = sessionStorage.getItem('redeye-token') || '';
  tokenEl.addEventListener('change', function () { sessionStorage.setItem('redeye-token', tokenEl.value.trim()); });
  filterEl.addEventListener('input', function () {
    filter = filterEl.value.trim().toLowerCase();
    tiles.forEach(function (t, name) { applyFilter(name); });
  });

  function applyFilter(name) {
    var el = elements.get(name);
    if (el) {
      el.classList.toggle('hidden', filter !== '' && name.toLowerCase().indexOf(filter) < 0);
    }
  }

  function schedule() {
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(render);
    }
  }

  function fmtTime(ms) {
    if (ms == null) { return '-'; }
    return new Date(ms).toLocaleTimeString();
  }

  function fmtIn(ms) {
    var d = Math.round((ms - (Date.now() + skew)) / 1000);
    if (d <= 0) { return 'now'; }
    if (d < 120) { return 'in ' + d + ' s'; }
    return 'in ' + Math.round(d / 60) + ' min';
  }

  function text(el, cls, value) {
    var e = document.createElement('div');
    e.className = cls;
    e.textContent = value;
    el.appendChild(e);
    return e;
  }

  function measure(t) {
    if (t.windowCalls != null) {
      var rate = t.windowCalls === 0 ? 0 : 100 * t.windowFailures / t.windowCalls;
      return { label: t.windowFailures + ' failed of ' + t.windowCalls + ' (' + rate.toFixed(0) + ' % / '
          + t.failureRateThreshold.toFixed(0) + ' %)', fill: rate / t.failureRateThreshold };
    }
    if (t.errorRate != null) {
      return { label: 'error rate ' + (100 * t.errorRate).toFixed(1) + ' % / '
          + (100 * t.errorRateThreshold).toFixed(0) + ' %', fill: t.errorRate / t.errorRateThreshold };
    }
    return { label: 'failures ' + t.failures + ' / ' + t.failureThreshold, fill: t.failures / t.failureThreshold };
  }

  function build(t) {
    var el = document.createElement('article');
    el.className = 'tile ' + t.status;
    el.setAttribute('data-operation', t.operation);
    el.setAttribute('data-status', t.status);
    el.setAttribute('data-version', String(t.version));
    text(el, 'name', t.operation).title = t.operation;
    text(el, 'status', t.status.replace('_', ' ') + (t.mode !== 'default' ? ' (' + t.mode + ')' : ''));
    var m = measure(t);
    text(el, 'line measure', m.label);
    var bar = document.createElement('div');
    bar.className = 'bar';
    var fill = document.createElement('span');
    fill.style.width = Math.max(0, Math.min(100, 100 * m.fill)).toFixed(0) + '%';
    bar.appendChild(fill);
    el.appendChild(bar);
    if (t.openedAt != null) { text(el, 'line', 'open since ' + fmtTime(t.openedAt)); }
    if (t.retryAt != null) { text(el, 'line', 'retry at ' + fmtTime(t.retryAt) + ' (' + fmtIn(t.retryAt) + ')'); }
    if (t.lastTrial != null) { text(el, 'line', 'last trial: ' + t.lastTrial); }
    if (t.lastKind != null) { text(el, 'line', 'last: ' + t.lastKind + ' at ' + fmtTime(t.lastAt)); }
    if (t.contributions && t.contributions.length > 0) {
      var c = t.contributions.map(function (x) { return x.instance + ' ' + x.failures + '/' + x.calls; });
      text(el, 'line contributions', 'instances: ' + c.join(', ')).title = c.join('\n');
    }
    if (!readOnly) {
      var actions = document.createElement('div');
      actions.className = 'actions';
      [['force-open', 'force open'], ['force-half-open', 'half-open'], ['reset', 'reset']].forEach(function (a) {
        var b = document.createElement('button');
        b.type = 'button';
        b.textContent = a[1];
        b.setAttribute('data-action', a[0]);
        b.addEventListener('click', function () { act(a[0], t.operation); });
        actions.appendChild(b);
      });
      el.appendChild(actions);
    }
    return el;
  }

  function render() {
    scheduled = false;
    var start = performance.now();
    if (dirty.size > 0) {
      var names = Array.from(tiles.keys()).sort();
      dirty.forEach(function (name) {
        var t = tiles.get(name);
        var old = elements.get(name);
        if (!t) {
          if (old) { old.remove(); elements.delete(name); }
          return;
        }
        var el = build(t);
        if (old) {
          tilesEl.replaceChild(el, old);
        } else {
          // insert in name order: before the first existing element whose name sorts after
          var i = names.indexOf(name);
          var next = null;
          for (var j = i + 1; j < names.length && next === null; j++) {
            next = elements.get(names[j]) || null;
          }
          tilesEl.insertBefore(el, next);
        }
        elements.set(name, el);
        applyFilter(name);
      });
      dirty.clear();
    }
    if (timelineDirty) {
      renderTimeline();
      timelineDirty = false;
    }
    summarize();
    var took = performance.now() - start;
    stats.renders++;
    stats.renderMillis += took;
    stats.maxRenderMillis = Math.max(stats.maxRenderMillis, took);
  }

  function summarize() {
    var counts = {};
    tiles.forEach(function (t) { counts[t.status] = (counts[t.status] || 0) + 1; });
    summaryEl.textContent = tiles.size + ' operations: ' + Object.keys(counts).sort().map(function (k) {
      return counts[k] + ' ' + k.replace('_', ' ');
    }).join(', ');
  }

  function renderTimeline() {
    var cutoff = Date.now() + skew - HOUR;
    while (timeline.length > 0 && timeline[0].at < cutoff) { timeline.shift(); }
    var frag = document.createDocumentFragment();
    for (var i = timeline.length - 1; i >= 0 && i >= timeline.length - TIMELINE_SHOWN; i--) {
      var e = timeline[i];
      var li = document.createElement('li');
      li.className = 'k-' + e.kind;
      li.textContent = fmtTime(e.at) + '  ' + e.operation + '  ' + e.from + ' \u2192 ' + e.to;
      li.title = e.kind + ', version ' + e.version;
      frag.appendChild(li);
    }
    timelineEl.replaceChildren(frag);
    drawChart(cutoff);
  }

  function drawChart(cutoff) {
    var ctx = chart.getContext('2d');
    var w = chart.width, h = chart.height;
    var perMinute = new Array(60).fill(0);
    timeline.forEach(function (e) {
      var m = Math.floor((e.at - cutoff) / 60000);
      if (m >= 0 && m < 60) { perMinute[m]++; }
    });
    var max = Math.max(1, Math.max.apply(null, perMinute));
    ctx.clearRect(0, 0, w, h);
    ctx.fillStyle = '#d7191c';
    for (var m = 0; m < 60; m++) {
      var bh = Math.round((h - 2) * perMinute[m] / max);
      ctx.fillRect(m * w / 60, h - bh, w / 60 - 1, bh);
    }
  }

  function setStore(s) {
    if (s.up) {
      storeBanner.classList.add('hidden');
    } else {
      storeBanner.textContent = 'Store unavailable since ' + fmtTime(s.since) + ': ' + s.message
          + ' (showing the last states read; reconnecting)';
      storeBanner.classList.remove('hidden');
    }
    document.body.setAttribute('data-store', s.up ? 'up' : 'down');
  }

  function put(t) {
    tiles.set(t.operation, t);
    dirty.add(t.operation);
  }

  function connect() {
    var source = new EventSource('events');
    source.addEventListener('open', function () {
      connEl.textContent = 'live';
      connEl.className = 'badge live';
    });
    source.addEventListener('error', function () {
      connEl.textContent = 'reconnecting';
      connEl.className = 'badge down';
    });
    source.addEventListener('snapshot', function (ev) {
      var s = JSON.parse(ev.data);
      stats.snapshots++;
      skew = s.now - Date.now();
      var names = new Set();
      s.tiles.forEach(function (t) { names.add(t.operation); put(t); });
      tiles.forEach(function (t, name) {
        if (!names.has(name)) { tiles.delete(name); dirty.add(name); }
      });
      timeline = s.timeline;
      timelineDirty = true;
      setStore(s.store);
      seen();
    });
    source.addEventListener('tiles', function (ev) {
      JSON.parse(ev.data).forEach(put);
      seen();
    });
    source.addEventListener('transition', function (ev) {
      var d = JSON.parse(ev.data);
      put(d.tile);
      timeline.push(d.entry);
      timelineDirty = true;
      stats.transitions++;
      seen();
    });
    source.addEventListener('removed', function (ev) {
      JSON.parse(ev.data).forEach(function (name) { tiles.delete(name); dirty.add(name); });
      seen();
    });
    source.addEventListener('store', function (ev) {
      setStore(JSON.parse(ev.data));
      seen();
    });
  }

  function seen() {
    stats.events++;
    stats.lastEventAt = Date.now();
    schedule();
  }

  function say(message, failed) {
    actionMsg.textContent = message;
    actionMsg.classList.toggle('error', !!failed);
    actionMsg.setAttribute('data-failed', failed ? 'true' : 'false');
    actionMsg.classList.remove('hidden');
  }

  function act(action, operation) {
    var headers = { 'Content-Type': 'application/json' };
    if (tokenActions) {
      var token = tokenEl.value.trim();
      if (token === '') {
        say('Enter the operator token the dashboard printed at start.', true);
        return;
      }
      sessionStorage.setItem('redeye-token', token);
      headers['X-Redeye-Token'] = token;
    }
    var xsrf = document.cookie.match(/(?:^|; )XSRF-TOKEN=([^;]*)/);
    if (xsrf) { headers['X-XSRF-TOKEN'] = decodeURIComponent(xsrf[1]); }
    fetch('api/action', {
      method: 'POST',
      credentials: 'same-origin',
      headers: headers,
      body: JSON.stringify({ action: action, operation: operation })
    }).then(function (r) {
      return r.json().then(function (body) {
        if (r.ok) {
          say(action + ' ' + operation + ': done', false);
        } else {
          say(action + ' ' + operation + ' refused (' + r.status + '): ' + body.error, true);
        }
      });
    }).catch(function (e) {
      say(action + ' ' + operation + ' failed: ' + e, true);
    });
  }

  // retry times count down without events
  setInterval(function () {
    tiles.forEach(function (t, name) { if (t.retryAt != null) { dirty.add(name); } });
    if (dirty.size > 0) { schedule(); }
  }, 5000);

  connect();
}());
