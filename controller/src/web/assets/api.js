// The controller's HTTP API, called with the bearer token kept in the browser's storage.
// The token travels in the Authorization header only, never in a URL.

const TOKEN_KEY = 'vigil.token';

export function token() { return localStorage.getItem(TOKEN_KEY) || ''; }
export function setToken(value) { localStorage.setItem(TOKEN_KEY, value); }
export function clearToken() { localStorage.removeItem(TOKEN_KEY); }

/** An API error: `status`, `code` and a sentence to show. */
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details || {};
  }
}

/** Listeners told when the token stops working (401). */
const unauthorized = new Set();
export function onUnauthorized(listener) { unauthorized.add(listener); }

async function request(method, path, body, extra = {}) {
  const headers = { Authorization: `Bearer ${token()}`, Accept: 'application/json', ...(extra.headers || {}) };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      signal: extra.signal, cache: 'no-store', credentials: 'omit',
    });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new ApiError(0, 'NETWORK', 'Cannot reach the controller. Is it running?');
  }
  if (res.ok) return res;
  let code = `HTTP_${res.status}`;
  let message = res.statusText || 'request failed';
  let details = {};
  try {
    const data = await res.json();
    if (data && data.error) ({ code, message, details } = { ...data.error, details: data.error.details || {} });
  } catch { /* not JSON */ }
  const error = new ApiError(res.status, code, message, details);
  if (res.status === 401 && !extra.quiet) unauthorized.forEach((f) => f(error));
  throw error;
}

/** GET/POST/PATCH/DELETE returning parsed JSON (null for 204). */
export async function api(method, path, body, extra) {
  const res = await request(method, path, body, extra);
  if (res.status === 204) return null;
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

export const get = (path, extra) => api('GET', path, undefined, extra);
export const post = (path, body = {}) => api('POST', path, body);

/**
 * Sends a chat message and calls `onEvent(name, data)` for each server-sent event until the
 * stream ends. Resolves when it ends; rejects with an ApiError when the request is refused.
 */
export async function chatStream(body, onEvent, signal) {
  const res = await request('POST', '/api/ai/chat', body, { signal, headers: { Accept: 'text/event-stream' } });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SseParser(onEvent);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.push(value);
  }
  parser.push('\n\n');
}

/** The event-stream format: `event:` and `data:` lines, a blank line ends an event. */
export class SseParser {
  constructor(onEvent) { this.onEvent = onEvent; this.buffer = ''; this.event = ''; this.data = []; }

  push(text) {
    this.buffer += text;
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop();
    for (const line of lines) this.line(line);
  }

  line(line) {
    if (line === '') {
      if (this.data.length) {
        const name = this.event || 'message';
        let data;
        try { data = JSON.parse(this.data.join('\n')); } catch { data = { text: this.data.join('\n') }; }
        this.onEvent(name, data);
      }
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
  }
}

/** Agents' host names by id (one GET /api/agents, kept for a minute): a person reads names. */
let namesCache = null;
export function agentNames() {
  if (!namesCache || Date.now() - namesCache.at > 60_000) {
    const names = get('/api/agents')
      .then((agents) => new Map(agents.map((a) => [a.id, a.hostname])))
      .catch(() => new Map());
    namesCache = { at: Date.now(), names };
  }
  return namesCache.names;
}

/** `name (kind)` of a resource named by its id, or by a name or alias that one resource
 * has exactly (as a direct-mode mention); null when the inventory does not know it. */
export async function resourceLabel(idOrName) {
  if (!idOrName) return null;
  const text = String(idOrName);
  const label = (r) => ({ text: `${r.name} (${r.kind})`, resource: r });
  try {
    if (text.includes(':')) return label(await get(`/api/resources/${encodeURIComponent(text)}`));
    const found = await get(`/api/resources?q=${encodeURIComponent(text)}`);
    const exact = found.filter((r) => r.name === text || (r.aliases || []).includes(text));
    return exact.length === 1 ? label(exact[0]) : null;
  } catch { return null; }
}
