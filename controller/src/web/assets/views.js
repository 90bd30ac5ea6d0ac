// The other views: pending approvals (from every session), agents, resources (search,
// then one resource's facts and routing chain) and the audit log (admins).

import { h, replace } from './dom.js';
import { get, agentNames } from './api.js';
import { ApprovalCard, chainText } from './cards.js';

function when(text) {
  if (!text) return 'never';
  const d = typeof text === 'number' ? new Date(text * 1000) : new Date(text);
  return Number.isNaN(d.getTime()) ? String(text) : d.toLocaleString();
}

function table(headers, rows, empty) {
  if (!rows.length) return h('p.empty', empty);
  return h('div.table-wrap', h('table.data', h('thead', h('tr', headers.map((x) => h('th', x)))),
    h('tbody', rows)));
}

export class ApprovalsView {
  constructor(app) {
    this.app = app;
    this.list = h('div.approval-list');
    this.el = h('div.page', h('h2', 'Pending approvals'),
      h('p.lead', 'Writes from every session that wait for a person.'), this.list);
  }

  async show() {
    let rows = [];
    try { rows = await get('/api/ai/approvals?status=pending'); } catch (err) { this.app.toast(err); return; }
    if (!rows.length) { replace(this.list, h('p.empty', 'Nothing is waiting for a decision.')); return; }
    replace(this.list, rows.map((row) => h('div.approval-item',
      h('div.approval-from', `Requested by ${row.created_by}`, row.session_id ? ` in session ${row.session_id}` : ''),
      new ApprovalCard(row, { canDecide: this.app.canDecide(), onDecided: () => this.app.refreshBadge() }).el)));
  }
}

export class AgentsView {
  constructor(app) {
    this.app = app;
    this.body = h('div');
    this.el = h('div.page', h('h2', 'Agents'), this.body);
  }

  async show() {
    let agents = [];
    try { agents = await get('/api/agents'); } catch (err) { this.app.toast(err); return; }
    replace(this.body, table(['Host', 'Status', 'Mode', 'Version', 'Last seen', 'Id'], agents.map((a) => h('tr', { dataset: { agentId: a.id } },
      h('td', a.hostname),
      h('td', h(`span.pill.${a.connected ? 'ok' : 'off'}`, a.connected ? 'connected' : 'offline')),
      h('td', a.read_only ? 'read-only' : 'read/write'),
      h('td', a.version || '—'),
      h('td', when(a.last_seen)),
      h('td.mono', a.id))), 'No agent has joined yet. Create a join token with `vigil-controller token create`.'));
  }
}

export class ResourcesView {
  constructor(app) {
    this.app = app;
    this.query = h('input.search', { type: 'search', placeholder: 'Search by name, id or alias', 'aria-label': 'Search resources' });
    this.results = h('div.resource-results');
    this.detail = h('div.resource-detail');
    let timer = null;
    this.query.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => this.search(), 200); });
    this.el = h('div.page', h('h2', 'Resources'), this.query, h('div.split', this.results, this.detail));
  }

  async show() { await this.search(); }

  async search() {
    let found = [];
    try { found = await get(`/api/resources?q=${encodeURIComponent(this.query.value.trim())}`); } catch (err) { this.app.toast(err); return; }
    replace(this.results, table(['Name', 'Kind', 'Status', 'Id'], found.slice(0, 200).map((r) => h('tr.clickable', { onclick: () => this.open(r.id) },
      h('td', r.name), h('td', r.kind), h('td', r.status || ''), h('td.mono', r.id))), 'Nothing matches.'));
  }

  async open(id) {
    let r;
    try { r = await get(`/api/resources/${encodeURIComponent(id)}`); } catch (err) { this.app.toast(err); return; }
    const facts = Object.entries(r.facts || {});
    replace(this.detail, h('h3', r.name), h('p.mono', r.id),
      h('div.label', 'Route'), h('p.chain', chainText(r, await agentNames())),
      r.parent ? [h('div.label', 'Parent'), h('p.mono', r.parent)] : null,
      (r.aliases || []).length ? [h('div.label', 'Aliases'), h('p', r.aliases.join(', '))] : null,
      h('div.label', 'Facts'),
      facts.length ? h('dl.facts', facts.map(([k, v]) => [h('dt', k), h('dd', typeof v === 'string' ? v : JSON.stringify(v))]))
        : h('p.empty', 'No facts reported.'),
      (r.children || []).length ? [h('div.label', 'Children'), h('ul', r.children.map((c) => h('li.mono', typeof c === 'string' ? c : c.id || JSON.stringify(c))))] : null);
  }
}

export class AuditView {
  constructor(app) {
    this.app = app;
    this.state = h('div.audit-state');
    this.body = h('div');
    this.el = h('div.page', h('h2', 'Audit log'), this.state, this.body);
  }

  async show() {
    try {
      const v = await get('/api/audit/verify');
      replace(this.state, v.intact
        ? h('span.pill.ok', `Chain verified: ${v.rows} rows intact`)
        : h('span.pill.bad', `Chain BROKEN at row ${v.broken_seq}: ${v.why}`));
      const since = v.intact ? Math.max(0, v.rows - 200) : 0;
      const rows = await get(`/api/audit?limit=200&since=${since}`);
      const names = await agentNames();
      rows.reverse();
      replace(this.body, table(['#', 'When', 'Actor', 'Action', 'Target', 'Command', 'Outcome'], rows.map((r) => h('tr',
        h('td', r.seq), h('td', when(r.at)), h('td', r.actor), h('td', r.action),
        h('td', { title: [r.agent, r.target].filter(Boolean).join(' ') },
          [names.get(r.agent) || r.agent, r.target].filter(Boolean).join(' · ')),
        h('td.mono', r.command || ''),
        h('td', r.outcome, r.exit_code !== null && r.exit_code !== undefined ? ` (exit ${r.exit_code})` : ''))), 'The audit log is empty.'));
    } catch (err) { this.app.toast(err); }
  }
}
