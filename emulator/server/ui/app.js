// kafka-emulator web console: live view over server-sent events (GET /events), actions
// through the control plane's JSON API. Plain JS, no build step, no network beyond this
// emulator. The stream is read with fetch() rather than EventSource so that a bearer
// token (--control-token) can go in a header.
"use strict";

const state = { snap: null, history: [], expanded: new Set(), topicPage: 0, partPage: {} };
const TOPICS_PER_PAGE = 20, PARTS_PER_PAGE = 50, HISTORY = 60;
const COLORS = ["#3a7bd5", "#d5533a", "#2a9a4a", "#9a3ad5", "#d5a23a", "#3ab8d5"];
const $ = (id) => document.getElementById(id);
const esc = (v) => String(v).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

function headers(json) {
  const h = {};
  const token = sessionStorage.getItem("kafkaEmulatorToken");
  if (token) h["Authorization"] = "Bearer " + token;
  if (json) h["Content-Type"] = "application/json";
  return h;
}

function say(text, ok) {
  const m = $("message");
  m.textContent = text;
  m.className = ok ? "info" : "";
}

async function api(method, path, body) {
  const r = await fetch(path, { method, headers: headers(true), body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await r.json().catch(() => ({}));
  if (r.status === 401) $("token-form").hidden = false;
  if (!r.ok) { say(`${method} ${path}: ${data.error || r.status}`); throw new Error(data.error); }
  say(`${method} ${path}: done`, true);
  return data;
}

async function stream() {
  for (;;) {
    try {
      const r = await fetch("/events?interval_ms=1000", { headers: headers(false) });
      if (r.status === 401) { $("token-form").hidden = false; setStatus(false, "token needed"); await sleep(2000); continue; }
      if (!r.ok || !r.body) throw new Error("status " + r.status);
      setStatus(true, "live");
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const event = buf.slice(0, i); buf = buf.slice(i + 2);
          const lines = event.split("\n");
          const kind = (lines.find((l) => l.startsWith("event: ")) || "event: snapshot").slice(7);
          const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (data) onEvent(kind, JSON.parse(data));
        }
      }
    } catch (e) { /* reconnect below */ }
    setStatus(false, "offline, reconnecting");
    await sleep(1000);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function setStatus(live, text) { const s = $("status"); s.textContent = text; s.className = "status" + (live ? " live" : ""); }

// The stream sends one whole "snapshot", then "delta" events holding only the topics
// rebuilt since (and the names of removed ones): the topics are kept here by name, and
// the topic list is re-rendered only when a topic on the shown page changed.
function onEvent(kind, msg) {
  let changed = null;  // null: everything may have changed
  if (kind === "snapshot" || !state.topicsByName) {
    state.topicsByName = new Map(msg.topics.map((t) => [t.name, t]));
    state.topicNames = msg.topics.map((t) => t.name);
  } else {
    changed = new Set(msg.topics.map((t) => t.name));
    let added = false;
    for (const t of msg.topics) { if (!state.topicsByName.has(t.name)) added = true; state.topicsByName.set(t.name, t); }
    for (const n of msg.removed_topics || []) { state.topicsByName.delete(n); changed.add(n); }
    if (added || (msg.removed_topics || []).length) {
      state.topicNames = [...state.topicsByName.keys()].sort();
      changed = null;
    }
  }
  msg.topics = state.topicNames.map((n) => state.topicsByName.get(n));
  onSnapshot(msg, changed);
}

function onSnapshot(snap, changed) {
  state.snap = snap;
  state.history.push({ t: snap.time_ms, brokers: Object.fromEntries(snap.brokers.map((b) => [b.id, [b.produced, b.consumed]])) });
  if (state.history.length > HISTORY + 1) state.history.shift();
  $("summary").textContent = `cluster ${snap.cluster_id} · controller ${snap.controller} (epoch ${snap.controller_epoch}) · ${snap.topics.length} topics · ${snap.partition_count} partitions · snapshot built in ${snap.build_ms} ms, ${snap.topics_rebuilt ?? 0} topics rebuilt`;
  const t0 = performance.now();
  renderBrokers(snap); renderChart(); renderReassignments(snap); renderFaults(snap); renderGroups(snap);
  if (!changed || !state.shown || [...changed].some((n) => state.shown.has(n))) renderTopics(snap);
  window.consoleRenderMs = performance.now() - t0;  // read by bench/console.py
  window.consoleRenders = (window.consoleRenders || 0) + 1;
}

function renderBrokers(snap) {
  $("brokers").tBodies[0].innerHTML = snap.brokers.map((b) => {
    const st = b.alive ? (b.shutting_down ? '<span class="warn">shutting down</span>' : '<span class="ok">alive</span>')
      : (b.crashed ? '<span class="bad">crashed (not yet fenced)</span>' : '<span class="bad">fenced</span>');
    const th = b.throttle;
    const lim = (v) => (v === null ? "∞" : v);
    const action = b.alive && !b.crashed
      ? `<button data-action="stop" data-broker="${b.id}">stop broker ${b.id}</button>`
      : `<button data-action="start" data-broker="${b.id}">start broker ${b.id}</button>`;
    return `<tr data-broker-row="${b.id}"><td>${b.id}</td><td>${esc(b.host)}:${b.port}</td><td class="broker-state">${st}</td>
      <td>${b.controller ? "★ controller" : ""}</td><td>${b.leaders}</td><td>${b.replicas}</td>
      <td>${lim(th.leader_rate)} / ${lim(th.follower_rate)} (now ${th.leader_measured} / ${th.follower_measured})</td><td>${action}</td></tr>`;
  }).join("");
}

function rates() {
  // records/s per broker between successive snapshots: [{id, produced: [...], consumed: [...]}]
  const h = state.history, out = {};
  for (let i = 1; i < h.length; i++) {
    const dt = Math.max((h[i].t - h[i - 1].t) / 1000, 0.001);
    for (const id of Object.keys(h[i].brokers)) {
      const a = h[i - 1].brokers[id], b = h[i].brokers[id];
      out[id] = out[id] || { produced: [], consumed: [] };
      out[id].produced.push(a ? Math.max(b[0] - a[0], 0) / dt : 0);
      out[id].consumed.push(a ? Math.max(b[1] - a[1], 0) / dt : 0);
    }
  }
  return out;
}

function renderChart() {
  const c = $("chart"), g = c.getContext("2d"), r = rates();
  const W = c.width, H = c.height, pad = 30;
  g.clearRect(0, 0, W, H);
  let max = 1;
  for (const id in r) for (const v of [...r[id].produced, ...r[id].consumed]) max = Math.max(max, v);
  g.fillStyle = "#566"; g.font = "11px sans-serif";
  g.fillText(max.toFixed(0) + " rec/s", 2, 12); g.fillText("0", 2, H - 4);
  g.strokeStyle = "#e3e6eb"; g.beginPath(); g.moveTo(pad, H - pad / 2); g.lineTo(W, H - pad / 2); g.stroke();
  const ids = Object.keys(r);
  ids.forEach((id, k) => {
    g.strokeStyle = COLORS[k % COLORS.length];
    for (const [series, dash] of [["produced", []], ["consumed", [4, 3]]]) {
      // Before the page's first snapshots the rate is drawn as 0: a line from the left.
      const pts = [...Array(Math.max(HISTORY - r[id][series].length, 0)).fill(0), ...r[id][series]];
      g.setLineDash(dash); g.lineWidth = 2; g.beginPath();
      pts.forEach((v, i) => {
        const x = pad + (W - pad) * (i + 1) / HISTORY;
        const y = (H - pad / 2) - (H - pad) * v / max;
        if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
      });
      g.stroke();
    }
  });
  g.setLineDash([]);
  $("legend").innerHTML = ids.map((id, k) => {
    const p = r[id].produced, q = r[id].consumed;
    return `<span class="swatch" style="background:${COLORS[k % COLORS.length]}"></span>broker ${id}: ${(p[p.length - 1] || 0).toFixed(0)} in / ${(q[q.length - 1] || 0).toFixed(0)} out rec/s`;
  }).join("");
}

function bar(f) { return `<span class="bar"><span style="width:${(100 * f).toFixed(1)}%"></span></span>`; }

function renderReassignments(snap) {
  $("reassignments").innerHTML = snap.reassignments.length === 0 ? "<p>none in flight</p>" :
    `<table><thead><tr><th>partition</th><th>replicas</th><th>adding</th><th>removing</th><th>progress (bytes caught up)</th><th></th></tr></thead><tbody>` +
    snap.reassignments.map((r) => `<tr class="reassignment"><td>${esc(r.topic)}-${r.partition}</td><td>${r.replicas}</td><td>${r.adding}</td><td>${r.removing}</td>
      <td>${r.progress.map((p) => `broker ${p.broker} ${bar(p.fraction)} ${p.bytes}/${p.target_bytes} B`).join("<br>") || "waiting for a leader"}</td>
      <td><button data-action="cancel-reassignment" data-topic="${esc(r.topic)}" data-partition="${r.partition}">cancel</button></td></tr>`).join("") + "</tbody></table>";
  const rows = snap.throttled_topics.map((t) => `<tr><td>${esc(t.topic)}</td><td>${esc(t.leader_replicas)}</td><td>${esc(t.follower_replicas)}</td></tr>`);
  $("throttles").innerHTML = rows.length ? `<table><thead><tr><th>topic</th><th>leader replicas</th><th>follower replicas</th></tr></thead><tbody>${rows.join("")}</tbody></table>` : "<p>no throttled replicas</p>";
}

function renderFaults(snap) {
  const f = snap.faults || {};
  const inForce = Object.entries(f).filter(([, v]) => Array.isArray(v) && v.length).map(([k, v]) => `<li>${esc(k)}: ${esc(JSON.stringify(v))}</li>`);
  const logged = snap.fault_log.slice().reverse().map((op) => `<li>${esc(JSON.stringify(op))}</li>`);
  let sched = "<p>no fault schedule run</p>";
  if (snap.schedule) {
    const s = snap.schedule, done = s.applied.length;
    sched = `<p>schedule (seed ${s.seed}): ${bar(s.steps ? done / s.steps : 1)} ${done}/${s.steps} steps${s.done ? " · done" : ""}</p>`;
  }
  $("faults").innerHTML = `<h3>In force</h3><ul>${inForce.join("") || "<li>none</li>"}</ul><h3>Recent</h3><ul>${logged.join("") || "<li>none</li>"}</ul>${sched}`;
}

function renderGroups(snap) {
  $("groups").innerHTML = snap.groups.length === 0 ? "<p>no groups</p>" : snap.groups.map((g) => `<details ${state.expanded.has("g:" + g.group_id) ? "open" : ""} data-key="g:${esc(g.group_id)}">
    <summary><b>${esc(g.group_id)}</b> · ${esc(g.type)} · ${esc(g.state)} · ${g.members.length} members · lag ${g.total_lag}</summary>
    <table><thead><tr><th>member</th><th>client</th><th>host</th><th>assignment</th></tr></thead><tbody>${g.members.map((m) => `<tr><td>${esc(m.member_id.slice(0, 24))}</td><td>${esc(m.client_id)}</td><td>${esc(m.host)}</td><td>${esc(m.assignment.join(", "))}</td></tr>`).join("")}</tbody></table>
    <table><thead><tr><th>partition</th><th>committed</th><th>high watermark</th><th>lag</th></tr></thead><tbody>${g.lag.map((l) => `<tr><td>${esc(l.topic)}-${l.partition}</td><td>${l.committed}</td><td>${l.high_watermark}</td><td>${l.lag}</td></tr>`).join("")}</tbody></table></details>`).join("");
}

function renderTopics(snap) {
  const filter = $("topic-filter").value.trim();
  const internal = $("show-internal").checked;
  const topics = snap.topics.filter((t) => (internal || !t.internal) && (!filter || t.name.includes(filter)));
  const pages = Math.max(1, Math.ceil(topics.length / TOPICS_PER_PAGE));
  state.topicPage = Math.min(state.topicPage, pages - 1);
  const shown = topics.slice(state.topicPage * TOPICS_PER_PAGE, (state.topicPage + 1) * TOPICS_PER_PAGE);
  state.shown = new Set(shown.map((t) => t.name));
  $("topics").innerHTML = shown.map((t) => {
    const key = "t:" + t.name, open = state.expanded.has(key);
    const health = t.offline ? `<span class="bad">${t.offline} offline</span>` : t.under_replicated ? `<span class="warn">${t.under_replicated} under-replicated</span>` : '<span class="ok">healthy</span>';
    let body = "";
    if (open) {  // partitions are only rendered for open topics, a page at a time
      const pp = Math.max(1, Math.ceil(t.partitions.length / PARTS_PER_PAGE));
      const page = Math.min(state.partPage[t.name] || 0, pp - 1);
      const rows = t.partitions.slice(page * PARTS_PER_PAGE, (page + 1) * PARTS_PER_PAGE).map(([i, leader, reps, isr, hw, leo]) =>
        `<tr><td>${i}</td><td class="${leader < 0 ? "bad" : ""}">${leader}</td><td>${reps}</td><td class="${isr.length < reps.length ? "warn" : ""}">${isr}</td><td>${hw}</td><td>${esc(Object.entries(leo).map(([b, o]) => b + ":" + o).join(" "))}</td>
        <td><button data-action="elect" data-topic="${esc(t.name)}" data-partition="${i}">preferred election</button></td></tr>`).join("");
      const pager = pp > 1 ? `<div class="pager">${Array.from({ length: pp }, (_, k) => `<button data-action="part-page" data-topic="${esc(t.name)}" data-page="${k}" ${k === page ? "disabled" : ""}>${k + 1}</button>`).join("")}</div>` : "";
      body = `<table><thead><tr><th>partition</th><th>leader</th><th>replicas</th><th>ISR</th><th>high watermark</th><th>log end offsets (broker:offset)</th><th></th></tr></thead><tbody>${rows}</tbody></table>${pager}`;
    }
    return `<details ${open ? "open" : ""} data-key="${esc(key)}" class="topic" data-topic="${esc(t.name)}"><summary><b>${esc(t.name)}</b> · ${t.partitions.length} partitions · ${health}</summary>${body}</details>`;
  }).join("") || "<p>no topics</p>";
  $("topic-pages").innerHTML = pages > 1 ? Array.from({ length: pages }, (_, k) => `<button data-action="topic-page" data-page="${k}" ${k === state.topicPage ? "disabled" : ""}>${k + 1}</button>`).join("") : "";
}

document.addEventListener("toggle", (e) => {
  const d = e.target;
  if (!(d instanceof HTMLDetailsElement) || !d.dataset.key) return;
  const had = state.expanded.has(d.dataset.key);
  if (d.open === had) return;
  if (d.open) state.expanded.add(d.dataset.key); else state.expanded.delete(d.dataset.key);
  if (state.snap && d.dataset.key.startsWith("t:")) renderTopics(state.snap);
}, true);

document.addEventListener("click", async (e) => {
  const b = e.target.closest("button[data-action]");
  if (!b) return;
  const d = b.dataset;
  try {
    if (d.action === "stop") await api("POST", `/brokers/${d.broker}/stop`, {});
    else if (d.action === "start") await api("POST", `/brokers/${d.broker}/start`, {});
    else if (d.action === "cancel-reassignment") await api("DELETE", "/reassignments", { topic: d.topic, partition: Number(d.partition) });
    else if (d.action === "elect") await api("POST", "/elections/preferred", { topic: d.topic, partitions: [Number(d.partition)] });
    else if (d.action === "topic-page") { state.topicPage = Number(d.page); renderTopics(state.snap); }
    else if (d.action === "part-page") { state.partPage[d.topic] = Number(d.page); renderTopics(state.snap); }
  } catch (err) { /* said already */ }
});

$("reassign-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const replicas = $("reassign-replicas").value.split(",").map((s) => Number(s.trim())).filter((n) => !Number.isNaN(n));
  try { await api("POST", "/reassignments", { topic: $("reassign-topic").value.trim(), partition: Number($("reassign-partition").value), replicas }); } catch (err) { /* said */ }
});
$("elect-preferred").addEventListener("click", () => api("POST", "/elections/preferred", {}).catch(() => {}));
$("fault-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  let op;
  try { op = JSON.parse($("fault-json").value.trim() || $("fault-preset").value); } catch (err) { say("the fault is not JSON: " + err.message); return; }
  try { await api("POST", "/faults", op); } catch (err) { /* said */ }
});
$("fault-clear").addEventListener("click", () => api("DELETE", "/faults").catch(() => {}));
$("topic-filter").addEventListener("input", () => { state.topicPage = 0; if (state.snap) renderTopics(state.snap); });
$("show-internal").addEventListener("change", () => { if (state.snap) renderTopics(state.snap); });
$("token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem("kafkaEmulatorToken", $("token").value);
  $("token-form").hidden = true;
});

stream();
