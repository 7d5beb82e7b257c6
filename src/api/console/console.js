/**
 * The operator console (decision 0026): one module, no framework, no build step. Every byte of data
 * comes from the public `/v1` API with `Authorization: Bearer <secret key>`; the key lives in the
 * variable below only (never in a URL, cookie or storage), so reloading the tab signs out. Pages are
 * chosen by the URL's fragment (`#/requests/req_…`), which never carries the key and never reloads.
 * Text from the API is only ever set with `textContent` (through `h`), never parsed as HTML.
 */

/** The signed-in key: in memory only. */
let secretKey = null;
/** Bumped on every page change; a page's pending poll stops when it is no longer current. */
let generation = 0;
let pollTimer = null;

const POLL_MS = 1500;
const SETTLED = new Set(["succeeded", "failed", "canceled", "outcome_unknown"]);
const REQUEST_STATUSES = [
  "queued",
  "waiting_for_connection",
  "sent",
  "succeeded",
  "failed",
  "canceled",
  "outcome_unknown",
];

const $ = (id) => document.getElementById(id);

/** `h("td", {class: "x"}, "text", child)`: an element with attributes and children (strings are text). */
function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

class ApiError extends Error {
  constructor(status, body) {
    const error = body && typeof body === "object" && body.error ? body.error : null;
    super(error ? `${error.code}: ${error.message}` : `HTTP ${status}`);
    this.status = status;
    this.code = error ? error.code : null;
  }
}

/** A call to the public API with the signed-in key. */
async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${secretKey}`, Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "omit",
    cache: "no-store",
  });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

function announce(message) {
  $("live").textContent = message;
}

// ---- formatting -------------------------------------------------------------------------------

function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  return `${date.toISOString().replace("T", " ").slice(0, 19)} UTC`;
}

function duration(ms) {
  if (ms === null || ms === undefined) return "—";
  if (ms < 1000) return `${ms} ms`;
  const seconds = ms / 1000;
  if (seconds < 120) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = Math.round(seconds % 60);
  if (minutes < 120) return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function seconds(value) {
  return value === null || value === undefined ? "—" : duration(value * 1000);
}

const TONE = {
  online: "good",
  succeeded: "good",
  pending_setup: "neutral",
  queued: "wait",
  sent: "wait",
  pending: "wait",
  waiting_for_connection: "wait",
  ledger_unavailable: "bad",
  company_file_mismatch: "bad",
  offline: "bad",
  disabled: "bad",
  failed: "bad",
  outcome_unknown: "bad",
  canceled: "neutral",
  ready: "good",
  filling: "wait",
  paused: "neutral",
  error: "bad",
};

function statusPill(status) {
  return h("span", { class: `status ${TONE[status] ?? "neutral"}`, "data-status": status }, status);
}

/** The expected check-in with how far to trust it (decision 0025). */
function expected(estimate, expectedAt) {
  if (!estimate) return "—";
  const at = expectedAt ?? estimate.expectedAt;
  const overdue = estimate.overdueSeconds ? `, overdue by ${seconds(estimate.overdueSeconds)}` : "";
  return h(
    "span",
    { class: "expected-check-in" },
    at ? when(at) : "unknown",
    h("span", { class: "muted" }, ` (confidence ${estimate.confidence}, ${estimate.basis}${overdue})`),
  );
}

function table(caption, headings, rows, empty) {
  if (rows.length === 0) return h("p", { class: "muted" }, empty);
  return h(
    "table",
    {},
    h("caption", { class: "visually-hidden" }, caption),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        headings.map((heading) => h("th", { scope: "col" }, heading)),
      ),
    ),
    h("tbody", {}, rows),
  );
}

function facts(pairs) {
  return h(
    "dl",
    { class: "facts" },
    pairs.map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]),
  );
}

function json(value, label) {
  return h("pre", { tabindex: "0", "aria-label": label }, JSON.stringify(value, null, 2));
}

// ---- pages ------------------------------------------------------------------------------------

function pageRoot(title, ...children) {
  const root = $("page");
  root.replaceChildren(h("h1", {}, title), ...children);
  document.title = `${title} · ledger-bridge console`;
  return root;
}

function showError(error) {
  pageRoot("Something went wrong", h("p", { class: "error", role: "alert" }, error.message));
}

async function endUsersPage() {
  const list = await api("GET", "/v1/end-users?limit=100");
  const rows = list.data.map((user) => {
    const connection = user.integrationConnections[0] ?? null;
    const file = connection?.companyFile ?? null;
    return h(
      "tr",
      { "data-end-user-id": user.id },
      h(
        "td",
        {},
        h("a", { href: `#/end-users/${user.id}` }, h("strong", {}, user.companyName)),
        h("br"),
        h("code", {}, user.id),
      ),
      h(
        "td",
        {},
        connection ? statusPill(connection.status) : "no connection",
        connection?.statusReason ? h("div", { class: "muted" }, connection.statusReason) : null,
      ),
      h("td", {}, when(connection?.lastCheckInAt)),
      h("td", {}, seconds(connection?.checkInEstimate.intervalSeconds)),
      h(
        "td",
        {},
        connection?.checkInEstimate.basis === "session_open" ? "open" : connection ? "closed" : "—",
      ),
      h(
        "td",
        {},
        file
          ? [
              file.companyName ?? "—",
              h("div", { class: "muted" }, [file.product, file.xmlVersion].filter(Boolean).join(" · ")),
            ]
          : "—",
      ),
      h("td", {}, connection ? expected(connection.checkInEstimate, connection.expectedCheckInAt) : "—"),
      h("td", {}, h("a", { href: `#/requests?endUserId=${encodeURIComponent(user.id)}` }, "Requests")),
    );
  });
  pageRoot(
    "End users & connections",
    h(
      "p",
      { class: "muted" },
      `${list.data.length}${list.hasMore ? "+" : ""} end users. Expected check-in: when the connector should next call in, from its recorded check-ins.`,
    ),
    table(
      "End users and their connections",
      ["End user", "Status", "Last check-in", "Interval", "Session", "Company file", "Expected check-in", ""],
      rows,
      "No end users yet.",
    ),
  );
}

const AVAILABILITY_LABEL = {
  online: "online",
  offline: "offline",
  ledger_unavailable: "application unavailable",
  not_set_up: "not set up",
  disabled: "disabled",
};

/** The availability strip (decision 0028): the window cut into spans of one state, each as wide as it lasted. */
function availabilityStrip(history) {
  const { segments, seconds: byState } = history.availability;
  const total = Object.values(byState).reduce((sum, value) => sum + value, 0) || 1;
  const share = (value) => `${((value / total) * 100).toFixed(value / total < 0.1 ? 1 : 0)} %`;
  const summary = Object.entries(byState)
    .filter(([, value]) => value > 0)
    .map(([state, value]) => `${AVAILABILITY_LABEL[state] ?? state} ${share(value)} (${seconds(value)})`);
  return h(
    "figure",
    { class: "timeline-figure" },
    h(
      "div",
      {
        class: "strip",
        id: "availability-strip",
        role: "img",
        "aria-label": `Availability from ${when(history.from)} to ${when(history.to)}: ${summary.join(", ") || "no data"}`,
      },
      segments.map((segment) => {
        const ms = Date.parse(segment.to) - Date.parse(segment.from);
        return h("div", {
          class: `band ${segment.state}`,
          "data-state": segment.state,
          "data-grow": String(Math.max(1, Math.round((ms / 1000 / total) * 1000))),
          title: `${AVAILABILITY_LABEL[segment.state] ?? segment.state}: ${when(segment.from)} → ${when(segment.to)}`,
        });
      }),
    ),
    h(
      "figcaption",
      {},
      h("span", { class: "muted" }, `${when(history.from)} → ${when(history.to)}. `),
      h(
        "ul",
        { class: "legend", id: "availability-totals" },
        Object.entries(byState).map(([state, value]) =>
          h(
            "li",
            { "data-state": state },
            h("span", { class: `swatch ${state}`, "aria-hidden": "true" }),
            `${AVAILABILITY_LABEL[state] ?? state}: ${share(value)}`,
          ),
        ),
      ),
    ),
  );
}

/** The mirror's groups as a table (issue 26): each group's state, records, as of, last change applied, error. */
function mirrorTable(mirror) {
  return table(
    "Mirrored groups",
    ["Group", "State", "Records", "As of", "Last change applied", "Error"],
    mirror.resources.map((group) =>
      h(
        "tr",
        { "data-mirror-resource": group.resource },
        h("td", {}, h("code", {}, group.resource)),
        h("td", {}, statusPill(group.state)),
        h("td", { class: "records" }, String(group.records)),
        h("td", { class: "as-of" }, when(group.asOf)),
        h("td", {}, when(group.lastChangeAppliedAt)),
        h("td", {}, group.error ? `${group.error.code}: ${group.error.message}` : "—"),
      ),
    ),
    "Not mirrored: every read goes to the application.",
  );
}

/**
 * The end user's mirror: its table, and a form that sets the mirrored groups (`PUT …/mirror`). While a
 * group fills, the table (only: the form keeps what is typed) is read again every POLL_MS.
 */
function mirrorSection(path, mirror, myGeneration) {
  const holder = h("div", { id: "mirror-groups" }, mirrorTable(mirror));
  const refresh = (current) => {
    if (!current.resources.some((group) => group.state === "filling")) return;
    pollTimer = setTimeout(async () => {
      if (myGeneration !== generation) return;
      try {
        const next = await api("GET", `${path}/mirror`);
        if (myGeneration !== generation) return;
        holder.replaceChildren(mirrorTable(next));
        refresh(next);
      } catch (error) {
        $("mirror-result").textContent = error.message;
      }
    }, POLL_MS);
  };
  refresh(mirror);
  const form = h(
    "form",
    {
      "aria-label": "Set the mirrored groups",
      onsubmit: async (event) => {
        event.preventDefault();
        const text = String(new FormData(event.target).get("resources") ?? "");
        const resources = text
          .split(",")
          .map((name) => name.trim())
          .filter((name) => name !== "");
        try {
          const next = await api("PUT", `${path}/mirror`, { resources });
          if (myGeneration !== generation) return;
          clearTimeout(pollTimer);
          holder.replaceChildren(mirrorTable(next));
          refresh(next);
          $("mirror-result").textContent =
            resources.length === 0
              ? "The mirror is off; its copy is deleted."
              : `Mirroring ${resources.join(", ")}.`;
        } catch (error) {
          $("mirror-result").textContent = error.message;
        }
      },
    },
    h(
      "label",
      {},
      "Mirrored groups (comma-separated)",
      h("input", {
        name: "resources",
        value: mirror.resources.map((group) => group.resource).join(", "),
        placeholder: "customers, invoices",
        size: "40",
        spellcheck: "false",
      }),
    ),
    h("button", { type: "submit" }, "Set mirrored groups"),
  );
  return [
    h(
      "p",
      { class: "muted" },
      "Reads that allow an age (Svc-Max-Staleness-Seconds) are answered from the mirror while the PC is off. Empty the list to turn it off.",
    ),
    holder,
    form,
    h("p", { id: "mirror-result", role: "status" }),
  ];
}

/**
 * The support bundle's download (issue 28): `GET …/support-bundle?since=…` read with the key, saved
 * as a file through an object URL (no inline script; the CSP stays 'self').
 */
function supportBundleSection(path, id) {
  const form = h(
    "form",
    {
      "aria-label": "Download a support bundle",
      onsubmit: async (event) => {
        event.preventDefault();
        const since = $("bundle-since").value;
        $("bundle-result").textContent = "Preparing the bundle…";
        try {
          const response = await fetch(`${path}/support-bundle?since=${encodeURIComponent(since)}`, {
            headers: { Authorization: `Bearer ${secretKey}`, Accept: "application/json" },
            credentials: "omit",
            cache: "no-store",
          });
          const text = await response.text();
          if (!response.ok) throw new ApiError(response.status, text ? JSON.parse(text) : null);
          const bundle = JSON.parse(text);
          const url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
          const link = h("a", { href: url, download: `support-bundle-${id}.json` });
          document.body.append(link);
          link.click();
          link.remove();
          setTimeout(() => URL.revokeObjectURL(url), 60_000);
          $("bundle-result").textContent =
            `Downloaded: ${bundle.requests.length} requests, ${bundle.sessions.length} sessions` +
            (bundle.truncated ? ` (${bundle.truncated.requestsLeftOut} older requests left out)` : "") +
            ". Replay it with: ledger-bridge replay bundle.json";
        } catch (error) {
          $("bundle-result").textContent = error.message;
        }
      },
    },
    h("label", { for: "bundle-since" }, "Window "),
    h(
      "select",
      { id: "bundle-since", name: "since" },
      h("option", { value: "1h" }, "last hour"),
      h("option", { value: "2h", selected: true }, "last 2 hours"),
      h("option", { value: "24h" }, "last day"),
      h("option", { value: "7d" }, "last 7 days"),
    ),
    " ",
    h("button", { type: "submit", id: "bundle-download" }, "Download support bundle"),
  );
  return [
    h(
      "p",
      { class: "muted" },
      "One JSON file with this end user's connection, requests (messages and answers, secrets masked), connector sessions and webhook deliveries.",
    ),
    form,
    h("p", { id: "bundle-result", role: "status" }),
  ];
}

async function endUserPage(id, myGeneration) {
  const path = `/v1/end-users/${encodeURIComponent(id)}`;
  const [user, history, mirror] = await Promise.all([
    api("GET", path),
    api("GET", `${path}/connection-history?days=7&limit=100`),
    api("GET", `${path}/mirror`),
  ]);
  if (myGeneration !== generation) return;
  const connection = user.integrationConnections[0] ?? null;
  const file = connection?.companyFile ?? null;
  const root = pageRoot(
    user.companyName,
    h("p", {}, h("a", { href: "#/end-users" }, "← All end users")),
    h(
      "div",
      { class: "panel" },
      facts([
        ["End user", h("code", {}, user.id)],
        ["Status", connection ? statusPill(connection.status) : "no connection"],
        ["Status reason", connection?.statusReason ?? "—"],
        ["Last check-in", when(connection?.lastCheckInAt)],
        ["Check-in interval", seconds(connection?.checkInEstimate.intervalSeconds)],
        [
          "Session",
          connection?.checkInEstimate.basis === "session_open" ? "open" : connection ? "closed" : "—",
        ],
        [
          "Company file",
          file ? [file.companyName, file.product, file.xmlVersion].filter(Boolean).join(" · ") : "—",
        ],
        [
          "Expected check-in",
          connection ? expected(connection.checkInEstimate, connection.expectedCheckInAt) : "—",
        ],
        [
          "Requests",
          h("a", { href: `#/requests?endUserId=${encodeURIComponent(user.id)}` }, "this end user's requests"),
        ],
      ]),
    ),
    h("h2", {}, "Availability, last 7 days"),
    history.connectionId === null
      ? h("p", { class: "muted" }, "No connection yet.")
      : availabilityStrip(history),
    h("h2", {}, "Status history"),
    table(
      "Connection status changes, newest first",
      ["Changed", "From", "To", "Reason"],
      history.changes.map((change) =>
        h(
          "tr",
          {},
          h("td", {}, when(change.changedAt)),
          h("td", {}, statusPill(change.previousStatus)),
          h("td", {}, statusPill(change.status)),
          h("td", {}, change.statusReason ?? "—"),
        ),
      ),
      "No status change in the last 7 days.",
    ),
    ...(history.hasMoreChanges
      ? [h("p", { class: "muted" }, "Older changes in this window are not shown.")]
      : []),
    h("h2", {}, "Mirror"),
    ...mirrorSection(path, mirror, myGeneration),
    h("h2", {}, "Support bundle"),
    ...supportBundleSection(path, user.id),
  );
  sizeSegments(root);
}

async function requestsPage(params) {
  const filters = {
    status: params.get("status") ?? "",
    endUserId: params.get("endUserId") ?? "",
    operationId: params.get("operationId") ?? "",
    createdAfter: params.get("createdAfter") ?? "",
    createdBefore: params.get("createdBefore") ?? "",
  };
  const query = new URLSearchParams({ limit: "100" });
  for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
  const [list, users] = await Promise.all([
    api("GET", `/v1/requests?${query}`),
    api("GET", "/v1/end-users?limit=100"),
  ]);
  const names = new Map(users.data.map((user) => [user.id, user.companyName]));

  const form = h(
    "form",
    {
      "aria-label": "Filter requests",
      onsubmit: (event) => {
        event.preventDefault();
        const data = new FormData(event.target);
        const next = new URLSearchParams();
        for (const [name, value] of data) if (value) next.set(name, String(value));
        location.hash = `#/requests${next.size ? `?${next}` : ""}`;
      },
    },
    h(
      "label",
      {},
      "Status",
      h(
        "select",
        { name: "status" },
        h("option", { value: "" }, "any"),
        REQUEST_STATUSES.map((status) =>
          h("option", { value: status, selected: status === filters.status }, status),
        ),
      ),
    ),
    h(
      "label",
      {},
      "End user",
      h(
        "select",
        { name: "endUserId" },
        h("option", { value: "" }, "any"),
        users.data.map((user) =>
          h("option", { value: user.id, selected: user.id === filters.endUserId }, user.companyName),
        ),
      ),
    ),
    h(
      "label",
      {},
      "Operation",
      h("input", {
        name: "operationId",
        value: filters.operationId,
        placeholder: "ledger.customers.create",
        size: "28",
      }),
    ),
    h(
      "label",
      {},
      "Created after",
      h("input", { type: "date", name: "createdAfter", value: filters.createdAfter }),
    ),
    h(
      "label",
      {},
      "Created before",
      h("input", { type: "date", name: "createdBefore", value: filters.createdBefore }),
    ),
    h("button", { type: "submit" }, "Filter"),
  );

  const rows = list.data.map((request) =>
    h(
      "tr",
      { "data-request-id": request.id },
      h("td", {}, h("a", { href: `#/requests/${request.id}` }, request.id)),
      h(
        "td",
        {},
        statusPill(request.status),
        request.waitingReason ? h("div", { class: "muted" }, request.waitingReason) : null,
      ),
      h("td", {}, h("code", {}, request.operationId)),
      h("td", {}, names.get(request.endUserId) ?? request.endUserId),
      h("td", {}, when(request.createdAt)),
      h("td", {}, duration(request.timings.totalMs)),
    ),
  );
  pageRoot(
    "Requests",
    form,
    table(
      "Requests, newest first",
      ["Request", "Status", "Operation", "End user", "Created", "Total"],
      rows,
      "No requests match.",
    ),
  );
}

/** The request's path drawn as segments: queued → sent → answered, each as wide as it took. */
function timelinePicture(request, nowMs) {
  const created = Date.parse(request.createdAt);
  const sent = request.sentAt ? Date.parse(request.sentAt) : null;
  const done = request.completedAt ? Date.parse(request.completedAt) : null;
  const segments = [];
  const queuedEnd = sent ?? done ?? nowMs;
  segments.push({
    name: "queued",
    label: sent || done ? "queued" : "waiting",
    ms: Math.max(0, queuedEnd - created),
    open: !sent && !done,
  });
  if (sent !== null) {
    segments.push({
      name: done ? "answered" : "sent",
      label: done ? "sent → answered" : "sent, awaiting answer",
      ms: Math.max(0, (done ?? nowMs) - sent),
      open: !done,
    });
  }
  if (done !== null) {
    const failed = request.status !== "succeeded";
    segments.push({ name: failed ? "failed" : "answered", label: request.status, ms: 0, end: true });
  }
  const total = segments.reduce((sum, segment) => sum + segment.ms, 0) || 1;
  return h(
    "figure",
    { class: "timeline-figure" },
    h(
      "div",
      {
        class: "timeline",
        role: "img",
        "aria-label": segments.map((s) => `${s.label} ${duration(s.ms)}`).join(", "),
      },
      segments.map((segment) =>
        h(
          "div",
          {
            class: `segment ${segment.open ? "open" : segment.name}`,
            "data-segment": segment.name,
            "data-grow": String(segment.end ? 0 : Math.max(1, Math.round((segment.ms / total) * 100))),
          },
          segment.end ? segment.label : `${segment.label} · ${duration(segment.ms)}`,
        ),
      ),
    ),
    h(
      "figcaption",
      { class: "muted" },
      `Queued ${duration(request.timings.queuedMs ?? (sent ? sent - created : null))}, in the application ${duration(request.timings.ledgerMs)}, total ${duration(request.timings.totalMs)}.`,
    ),
  );
}

/**
 * Where the request's time went (decision 0047), as its `timings` tell it and the answer's
 * `Server-Timing` header does: waiting for the Web Connector to ask (connector), waiting in its
 * session (queue), the application (ledger) and the service's own time between them (svc), each as
 * wide as it took. A part not known yet is drawn empty and says so.
 */
function timingsPicture(request) {
  const t = request.timings;
  const connector = t.connectorMs;
  const queue = t.queuedMs !== null && connector !== null ? t.queuedMs - connector : null;
  const svc =
    t.totalMs !== null && t.queuedMs !== null
      ? Math.max(0, t.totalMs - t.queuedMs - (t.ledgerMs ?? 0))
      : null;
  const parts = [
    { name: "connector", label: "connector", ms: connector },
    // Not handed over: the wait is one figure (connector and queue are told apart at hand-over).
    { name: "queue", label: connector === null ? "waiting" : "queue", ms: queue ?? t.queuedMs },
    { name: "ledger", label: "application", ms: t.ledgerMs },
    { name: "svc", label: "service", ms: svc },
  ];
  const known = parts.filter((part) => part.ms !== null);
  const total = known.reduce((sum, part) => sum + part.ms, 0) || 1;
  return h(
    "figure",
    { class: "timings-figure", id: "timings" },
    h(
      "div",
      {
        class: "timeline timings",
        role: "img",
        "aria-label": parts.map((part) => `${part.label} ${duration(part.ms)}`).join(", "),
      },
      parts.map((part) =>
        h(
          "div",
          {
            class: `segment ${part.ms === null ? "unknown" : part.name}`,
            "data-timing": part.name,
            "data-ms": part.ms === null ? "" : String(part.ms),
            "data-grow": String(part.ms === null ? 1 : Math.max(1, Math.round((part.ms / total) * 100))),
          },
          `${part.label} · ${duration(part.ms)}`,
        ),
      ),
    ),
    h(
      "figcaption",
      { class: "muted" },
      "Connector: until the Web Connector opened the session that took it. Queue: in that session, before the hand-over. Application: from the hand-over to its answer. Service: the rest; each HTTP call's own is in its Server-Timing header.",
    ),
  );
}

/** Segment widths: set through the CSS object model (CSP forbids inline `style` attributes). */
function sizeSegments(root) {
  for (const segment of root.querySelectorAll(".segment, .band")) {
    segment.style.flexGrow = segment.dataset.grow ?? "1";
  }
}

/** One XML document of a Request (its message or its answer), secrets already masked by the API. */
function xmlView(view, label, id) {
  const size = view.bytes === null ? "" : ` · ${view.bytes.toLocaleString("en")} bytes`;
  const masked = view.redactedValues > 0 ? ` · ${view.redactedValues} value(s) masked` : "";
  return h(
    "section",
    { class: "xml-view", id },
    h("h3", {}, label, h("span", { class: "muted" }, `${size}${masked}`)),
    view.note ? h("p", { class: "muted" }, view.note) : null,
    view.xml === null ? null : h("pre", { tabindex: "0", "aria-label": `${label} XML` }, view.xml),
  );
}

async function requestPage(id, myGeneration) {
  const path = `/v1/requests/${encodeURIComponent(id)}`;
  const [request, messages] = await Promise.all([api("GET", path), api("GET", `${path}/messages`)]);
  if (myGeneration !== generation) return;
  const diagnosis = request.diagnosis;
  const connector = diagnosis?.connector ?? null;
  const root = pageRoot(
    `Request ${request.id}`,
    h("p", {}, h("a", { href: "#/requests" }, "← All requests")),
    h(
      "div",
      { class: "panel" },
      facts([
        ["Status", statusPill(request.status)],
        ["Operation", h("code", {}, request.operationId)],
        ["End user", h("code", {}, request.endUserId)],
        ["Mode", request.mode],
        ["Created", when(request.createdAt)],
        ["Sent", when(request.sentAt)],
        ["Completed", when(request.completedAt)],
        ["Waiting reason", h("span", { id: "waiting-reason" }, request.waitingReason ?? "—")],
        ["Queue position", request.queuePosition ?? "—"],
        ["Idempotency key", request.idempotencyKeyPresent ? "sent" : "none"],
        [
          "Earlier attempt",
          request.previousRequestId
            ? h("a", { href: `#/requests/${request.previousRequestId}` }, request.previousRequestId)
            : "—",
        ],
        ["Error", request.error ? `${request.error.code}: ${request.error.message}` : "—"],
      ]),
    ),
    h("h2", {}, "Timeline"),
    // "Now" is the service's (the diagnosis's time) where it has one: the browser's clock may differ.
    timelinePicture(request, diagnosis ? Date.parse(diagnosis.at) : Date.now()),
    h("h2", {}, "Where the time went"),
    timingsPicture(request),
    table(
      "Timeline entries",
      ["At", "Status", "Detail", "Elapsed"],
      request.timeline.map((entry) =>
        h(
          "tr",
          {},
          h("td", {}, when(entry.at)),
          h("td", {}, entry.status),
          h("td", {}, entry.detail ?? ""),
          h("td", {}, duration(entry.elapsedMs)),
        ),
      ),
      "No entries.",
    ),
    h("h2", {}, "Diagnosis"),
    diagnosis
      ? h(
          "div",
          { class: "panel", id: "diagnosis" },
          h("p", {}, diagnosis.summary),
          facts([
            [
              "Expected check-in",
              h(
                "span",
                { id: "expected-check-in" },
                expected(connector.checkInEstimate, connector.expectedCheckInAt),
              ),
            ],
            ["Last check-in", when(connector.lastCheckInAt)],
            ["Last seen", when(connector.lastSeenAt)],
            ["Check-in interval", seconds(connector.checkInIntervalSeconds)],
            ["Silent for", seconds(connector.silentForSeconds)],
            ["Session open", connector.sessionOpen ? "yes" : "no"],
            [
              "Application answered",
              connector.ledgerAnswered === null ? "—" : connector.ledgerAnswered ? "yes" : "no",
            ],
            ["Probable causes", diagnosis.probableCauses.map((cause) => cause.code).join(", ") || "—"],
          ]),
        )
      : h("p", { class: "muted" }, "No diagnosis: the request did not wait or run long."),
    h("h2", {}, "Input (JSON in)"),
    messages.input.json === null
      ? h("p", { class: "muted" }, "No JSON input: a passthrough call sends XML (see Messages below).")
      : json(messages.input.json, "Input JSON"),
    h("h2", {}, "Result (JSON out)"),
    request.result === null
      ? h("p", { class: "muted" }, "No result yet.")
      : json(request.result, "Result JSON"),
    h("h2", {}, "Messages (XML)"),
    h(
      "details",
      { id: "messages", open: request.status === "failed" },
      h("summary", {}, "The message sent to the application and its answer (secrets masked)"),
      xmlView(messages.message, "Message", "xml-message"),
      xmlView(
        messages.answer,
        `Answer${messages.answer.receivedAt ? `, ${when(messages.answer.receivedAt)}` : ""}`,
        "xml-answer",
      ),
    ),
    h("h2", {}, "The Request (JSON)"),
    json({ ...request, result: undefined }, "Request JSON"),
  );
  sizeSegments(root);
  if (!SETTLED.has(request.status)) {
    pollTimer = setTimeout(() => {
      if (myGeneration === generation) void requestPage(id, myGeneration).catch(showError);
    }, POLL_MS);
  } else {
    announce(`Request ${request.status}`);
  }
}

async function webhooksPage(params) {
  const endpoints = await api("GET", "/v1/webhook-endpoints?limit=100");
  const selected = params.get("endpoint") ?? endpoints.data[0]?.id ?? null;
  const rows = endpoints.data.map((endpoint) =>
    h(
      "tr",
      { "data-endpoint-id": endpoint.id },
      h(
        "td",
        {},
        h(
          "a",
          {
            href: `#/webhooks?endpoint=${endpoint.id}`,
            "aria-current": endpoint.id === selected ? "true" : null,
          },
          endpoint.url,
        ),
      ),
      h("td", {}, endpoint.description ?? ""),
      h("td", {}, endpoint.eventTypes.join(", ")),
      h(
        "td",
        {},
        endpoint.enabled
          ? "enabled"
          : `disabled${endpoint.disabledReason ? ` (${endpoint.disabledReason})` : ""}`,
      ),
    ),
  );
  const children = [
    table("Webhook endpoints", ["URL", "Description", "Events", "State"], rows, "No webhook endpoints."),
  ];
  if (selected) {
    const deliveries = await api(
      "GET",
      `/v1/webhook-endpoints/${encodeURIComponent(selected)}/deliveries?limit=100`,
    );
    children.push(
      h("h2", {}, "Deliveries"),
      h("p", { id: "resend-result", role: "status" }),
      table(
        "Deliveries, newest first",
        ["Delivery", "Event", "Status", "Attempts", ""],
        deliveries.data.map((delivery) =>
          h(
            "tr",
            { "data-delivery-id": delivery.id },
            h("td", {}, h("code", {}, delivery.id), h("div", { class: "muted" }, when(delivery.createdAt))),
            h("td", {}, delivery.eventType, h("div", { class: "muted" }, delivery.eventId)),
            h(
              "td",
              {},
              statusPill(delivery.status),
              delivery.nextAttemptAt
                ? h("div", { class: "muted" }, `next ${when(delivery.nextAttemptAt)}`)
                : null,
            ),
            h(
              "td",
              {},
              delivery.attempts.length === 0
                ? "none yet"
                : h(
                    "ol",
                    { class: "attempts" },
                    delivery.attempts.map((attempt) =>
                      h(
                        "li",
                        {},
                        `${when(attempt.at)}: ${attempt.statusCode ?? "no answer"}${attempt.error ? ` (${attempt.error})` : ""}, ${attempt.latencyMs} ms`,
                      ),
                    ),
                  ),
            ),
            h(
              "td",
              {},
              delivery.status === "pending"
                ? ""
                : h(
                    "button",
                    {
                      type: "button",
                      class: "secondary",
                      "aria-label": `Resend delivery ${delivery.id}`,
                      onclick: async (event) => {
                        event.target.disabled = true;
                        try {
                          const created = await api(
                            "POST",
                            `/v1/webhook-endpoints/${encodeURIComponent(selected)}/deliveries/${encodeURIComponent(delivery.id)}/resend`,
                            {},
                          );
                          await webhooksPage(params);
                          $("resend-result").textContent = `Resent as ${created.id}.`;
                        } catch (error) {
                          $("resend-result").textContent = error.message;
                          event.target.disabled = false;
                        }
                      },
                    },
                    "Resend",
                  ),
            ),
          ),
        ),
        "No deliveries in the last 30 days.",
      ),
    );
  }
  const subscriptions = await api("GET", "/v1/change-feed-subscriptions?limit=100");
  children.push(
    h("h2", {}, "Change feed subscriptions"),
    table(
      "Change feed subscriptions",
      ["Subscription", "Resources", "Every", "State"],
      subscriptions.data.map((subscription) =>
        h(
          "tr",
          { "data-subscription-id": subscription.id },
          h("td", {}, h("code", {}, subscription.id)),
          h("td", {}, subscription.resources.join(", ")),
          h("td", {}, `${subscription.intervalMinutes} min`),
          h("td", {}, subscription.enabled ? "enabled" : "disabled"),
        ),
      ),
      "No change feed subscriptions.",
    ),
  );
  pageRoot("Webhooks", ...children);
}

async function keysPage() {
  const keys = await api("GET", "/v1/api-keys?limit=100");
  const rows = keys.data.map((key) =>
    h(
      "tr",
      { "data-key-id": key.id },
      h(
        "td",
        {},
        h("code", {}, `…${key.hint}`),
        key.current ? h("span", { class: "badge" }, " this key") : null,
      ),
      h("td", {}, key.kind, key.readOnly ? " (read-only)" : ""),
      h("td", {}, key.mode),
      h("td", {}, when(key.createdAt)),
      h("td", { class: "revoked" }, key.revokedAt ? `revoked ${when(key.revokedAt)}` : "active"),
      h(
        "td",
        {},
        key.revokedAt || key.current
          ? ""
          : h(
              "button",
              {
                type: "button",
                class: "danger",
                "aria-label": `Revoke key ending ${key.hint}`,
                onclick: async () => {
                  if (
                    !window.confirm(
                      `Revoke the ${key.kind} key ending ${key.hint}? It stops working at once.`,
                    )
                  )
                    return;
                  try {
                    await api("POST", `/v1/api-keys/${encodeURIComponent(key.id)}/revoke`, {});
                    await keysPage();
                    $("key-result").textContent = `Revoked the key ending ${key.hint}.`;
                  } catch (error) {
                    $("key-result").textContent = error.message;
                  }
                },
              },
              "Revoke",
            ),
      ),
    ),
  );
  const form = h(
    "form",
    {
      "aria-label": "Create a key",
      onsubmit: async (event) => {
        event.preventDefault();
        const data = new FormData(event.target);
        try {
          const created = await api("POST", "/v1/api-keys", {
            kind: String(data.get("kind")),
            readOnly: data.get("readOnly") === "on",
          });
          await keysPage();
          $("key-result").replaceChildren(
            "New key (copy it now: it is not shown again): ",
            h("span", { class: "secret", id: "new-secret" }, created.secret),
          );
        } catch (error) {
          $("key-result").textContent = error.message;
        }
      },
    },
    h(
      "label",
      {},
      "Kind",
      h(
        "select",
        { name: "kind" },
        h("option", { value: "secret" }, "secret"),
        h("option", { value: "publishable" }, "publishable"),
      ),
    ),
    h(
      "label",
      { class: "inline" },
      h("input", { type: "checkbox", name: "readOnly" }),
      "Read-only (secret keys)",
    ),
    h("button", { type: "submit" }, "Create key"),
  );
  pageRoot(
    "Keys",
    h(
      "p",
      { class: "muted" },
      "The project's keys in this mode. Secrets are never shown again after creation.",
    ),
    form,
    h("p", { id: "key-result", role: "status" }),
    table("API keys, newest first", ["Key", "Kind", "Mode", "Created", "State", ""], rows, "No keys."),
  );
}

// ---- routing and sign-in ----------------------------------------------------------------------

async function route() {
  generation++;
  clearTimeout(pollTimer);
  if (secretKey === null) return;
  const hash = location.hash || "#/end-users";
  const [path, search] = hash.slice(1).split("?");
  const params = new URLSearchParams(search ?? "");
  for (const link of document.querySelectorAll("#nav a")) {
    const target = link.getAttribute("href").slice(1);
    link.setAttribute("aria-current", path === target || path.startsWith(`${target}/`) ? "page" : "false");
  }
  const myGeneration = generation;
  try {
    const requestMatch = /^\/requests\/([A-Za-z0-9_]+)$/.exec(path);
    const endUserMatch = /^\/end-users\/([A-Za-z0-9_]+)$/.exec(path);
    if (requestMatch) await requestPage(requestMatch[1], myGeneration);
    else if (endUserMatch) await endUserPage(endUserMatch[1], myGeneration);
    else if (path === "/requests") await requestsPage(params);
    else if (path === "/webhooks") await webhooksPage(params);
    else if (path === "/keys") await keysPage();
    else await endUsersPage();
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return signOut(error.message);
    if (myGeneration === generation) showError(error);
  }
}

function signOut(message = "") {
  secretKey = null;
  generation++;
  clearTimeout(pollTimer);
  $("page").replaceChildren();
  $("page").hidden = true;
  $("nav").hidden = true;
  $("who").hidden = true;
  $("sign-in-page").hidden = false;
  $("sign-in-error").textContent = message;
  document.title = "ledger-bridge console";
  $("secret-key").focus();
}

async function signIn(event) {
  event.preventDefault();
  const input = $("secret-key");
  const candidate = input.value.trim();
  input.value = "";
  $("sign-in-error").textContent = "";
  if (!/^sk_(live|test)_/.test(candidate)) {
    $("sign-in-error").textContent = "Enter a secret key: it begins sk_live_ or sk_test_.";
    input.focus();
    return;
  }
  secretKey = candidate;
  try {
    await api("GET", "/v1/api-keys?limit=1");
  } catch (error) {
    secretKey = null;
    $("sign-in-error").textContent = error.message;
    input.focus();
    return;
  }
  $("sign-in-page").hidden = true;
  $("nav").hidden = false;
  $("who").hidden = false;
  $("page").hidden = false;
  $("mode-badge").textContent = candidate.startsWith("sk_live_") ? "live mode" : "test mode";
  announce("Signed in");
  await route();
  $("main").focus();
}

$("sign-in-form").addEventListener("submit", (event) => void signIn(event));
$("sign-out").addEventListener("click", () => signOut());
window.addEventListener("hashchange", () => void route());
// Following the link of the page already shown reloads its data (the fragment does not change).
$("nav").addEventListener("click", (event) => {
  const link = event.target.closest("a");
  if (link && link.getAttribute("href") === location.hash) void route();
});
