// The Findings view: what patrol checks and alerts found (open, acknowledged, resolved),
// with the evidence, an investigation's answer and its session, acknowledge and snooze for
// operators, and where the unattended budget stands (investigations wait when it is spent).

import { h, replace } from './dom.js';
import { get, post } from './api.js';

function when(text) {
  const d = new Date(text);
  return Number.isNaN(d.getTime()) ? String(text || '') : d.toLocaleString();
}

const STATUSES = ['open', 'acknowledged', 'resolved'];

export class FindingsView {
  constructor(app) {
    this.app = app;
    this.status = 'open';
    this.budget = h('div.budget', { role: 'status' });
    this.filters = h('div.filters', STATUSES.map((s) => h('button.filter', {
      type: 'button', dataset: { status: s }, onclick: () => { this.status = s; this.show(); },
    }, s[0].toUpperCase() + s.slice(1))));
    this.list = h('div.finding-list');
    this.el = h('div.page', h('h2', 'Findings'),
      h('p.lead', 'What the patrol checks and your alerts found. A finding resolves itself when its check passes again.'),
      this.budget, this.filters, this.list);
  }

  async show() {
    for (const b of this.filters.children) b.classList.toggle('active', b.dataset.status === this.status);
    let body;
    try {
      const summary = await get('/api/findings/summary');
      this.showBudget(summary.budget);
      body = await get(`/api/findings?status=${this.status}`);
    } catch (err) { this.app.toast(err); return; }
    const rows = body.findings || [];
    if (!rows.length) { replace(this.list, h('p.empty', `No ${this.status} findings.`)); return; }
    replace(this.list, rows.map((f) => this.item(f)));
  }

  showBudget(b) {
    if (!b) { replace(this.budget); return; }
    const use = `Unattended model use: ${b.tokens_used_24h} of ${b.tokens_per_day} tokens in 24 h, `
      + `${b.investigations_last_hour} of ${b.investigations_per_hour} investigations this hour.`;
    replace(this.budget, b.spent
      ? h('p.budget-spent', 'The unattended budget is spent: checks go on, investigations wait',
        b.waiting ? ` (${b.waiting} waiting)` : '', '. ', use)
      : h('p.budget-ok', use));
  }

  item(f) {
    const detail = h('div.finding-detail', { hidden: true },
      h('div.label', 'Evidence'), h('pre.evidence', f.evidence),
      f.investigation_status ? [h('div.label', `Investigation (${f.investigation_status})`),
        f.investigation_answer ? h('p.answer', f.investigation_answer) : null,
        f.investigation_session_id ? h('button.link', { type: 'button', onclick: () => this.openSession(f.investigation_session_id) }, 'Open the session') : null] : null,
      h('p.meta', `First seen ${when(f.first_seen)} · last seen ${when(f.last_seen)} · ${f.count} time${f.count === 1 ? '' : 's'}`,
        f.acknowledged_by ? ` · acknowledged by ${f.acknowledged_by}` : '',
        f.snoozed_until ? ` · snoozed until ${when(f.snoozed_until)}` : '',
        f.resolved_at ? ` · resolved ${when(f.resolved_at)}` : ''));
    const actions = this.app.canDecide() && f.status !== 'resolved' ? h('span.actions',
      f.status === 'open' ? h('button.ack', { type: 'button', onclick: (e) => { e.stopPropagation(); this.act(f, 'ack', {}); } }, 'Acknowledge') : null,
      h('button.snooze', { type: 'button', onclick: (e) => { e.stopPropagation(); this.act(f, 'snooze', { until: Math.floor(Date.now() / 1000) + 4 * 3600 }); } }, 'Snooze 4 h')) : null;
    return h('div.finding', { dataset: { findingId: f.id, check: f.check } },
      h('div.finding-head', { onclick: () => { detail.hidden = !detail.hidden; } },
        h(`span.pill.sev-${f.severity}`, f.severity),
        h('span.finding-summary', f.summary),
        h('span.finding-where', f.resource_name || f.resource_id || '—'),
        h('span.finding-check.mono', f.check),
        f.count > 1 ? h('span.finding-count', `×${f.count}`) : null,
        actions),
      detail);
  }

  async act(f, verb, body) {
    try { await post(`/api/findings/${encodeURIComponent(f.id)}/${verb}`, body); } catch (err) { this.app.toast(err); }
    await this.show();
    this.app.refreshBadge();
  }

  openSession(id) {
    this.app.go('chat');
    this.app.views.chat.open(id);
  }
}
