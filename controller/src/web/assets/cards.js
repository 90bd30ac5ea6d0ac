// Tool cards (one per tool call: tool, target, command, live output, outcome) and approval
// cards (command, target and its routing chain, risk, reasons, diff, time left, decide).

import { h, append, replace, timeLeft } from './dom.js';
import { get, post, agentNames, resourceLabel } from './api.js';

/** The most output a card keeps, in characters; older output is dropped with a note. */
const MAX_OUTPUT = 200_000;

/** What a call does, in one line: its command, path or arguments. */
export function describeInput(input) {
  if (!input || typeof input !== 'object') return '';
  if (input.command) return input.command;
  const rest = Object.entries(input).filter(([k]) => k !== 'action' && k !== 'resource_id' && k !== 'content');
  return rest.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
}

/** Shows `el` as the resource's `name (kind)` once known, its id in the tooltip. */
function labelResource(el, id) {
  if (!el || !id) return;
  el.title = id;
  resourceLabel(id).then((label) => { if (label) el.textContent = label.text; });
}

export class ToolCard {
  /** `keepOpen`: the card stays open when the call ends (direct mode: no answer text). */
  constructor({ tool_call_id, name, input }, { keepOpen = false } = {}) {
    this.id = tool_call_id;
    this.size = 0;
    this.keepOpen = keepOpen;
    this.status = h('span.tool-status.running', { title: 'running' }, '…');
    this.duration = h('span.tool-duration');
    const action = input && input.action ? ` ${input.action}` : '';
    const target = input && input.resource_id ? h('span.tool-target', input.resource_id) : null;
    if (target) labelResource(target, input.resource_id);
    const command = describeInput(input);
    this.output = h('pre.tool-output', { hidden: true });
    this.outcome = h('div.tool-outcome');
    this.el = h('details.tool-card', { open: true, dataset: { toolCallId: tool_call_id, tool: name } },
      h('summary', this.status, h('span.tool-name', `${name}${action}`), target, this.duration),
      command ? h('pre.tool-command', command) : null,
      this.output, this.outcome);
    // Open while it runs; a finished call folds away unless the user opened or closed it.
    this.el.firstChild.addEventListener('click', () => { this.touched = true; });
  }

  /** Appends a chunk of live output. */
  append(stream, text) {
    this.output.hidden = false;
    this.size += text.length;
    append(this.output, [stream === 'stderr' ? h('span.stderr', text) : text]);
    while (this.size > MAX_OUTPUT && this.output.firstChild) {
      this.size -= this.output.firstChild.textContent.length;
      this.output.firstChild.remove();
    }
  }

  /** Marks the end of the call. */
  end({ ok, error_code, duration_ms }) {
    this.ok = ok;
    this.status.className = `tool-status ${ok ? 'ok' : 'failed'}`;
    this.status.textContent = ok ? '✓' : '✗';
    this.status.title = ok ? 'ok' : error_code || 'failed';
    if (duration_ms !== undefined && duration_ms !== null) this.duration.textContent = `${duration_ms} ms`;
    if (!ok) {
      this.el.classList.add('failed');
      replace(this.outcome, h('span.error-code', error_code || 'FAILED'));
      this.el.open = true;
    } else if (!this.touched && !this.keepOpen) {
      this.el.open = false;
    }
  }

  /** Shows a tool result envelope `{ok, data|error}` (its hint, or its output on replay). */
  result(envelope) {
    if (!envelope || typeof envelope !== 'object') return;
    if (envelope.ok === false && envelope.error) {
      const e = envelope.error;
      const hint = e.details && (e.details.recovery_hint || e.details.suggested_rewrite);
      replace(this.outcome, h('span.error-code', e.code || 'FAILED'), ' ', h('span.error-message', e.message || ''),
        hint ? h('div.hint', 'Hint: ', hint) : null);
      if (this.ok === undefined) this.end({ ok: false, error_code: e.code });
    } else if (envelope.ok) {
      const data = envelope.data || {};
      if (!this.size && (data.stdout || data.stderr)) {
        if (data.stdout) this.append('stdout', data.stdout);
        if (data.stderr) this.append('stderr', data.stderr);
      }
      if (data.exit_code !== undefined && data.exit_code !== null) replace(this.outcome, `exit ${data.exit_code}`);
      if (this.ok === undefined) this.end({ ok: true });
    }
  }
}

/** Colours a unified diff line by line. */
export function renderDiff(diff) {
  return h('pre.diff', String(diff).split('\n').map((line) => {
    const cls = line.startsWith('+++') || line.startsWith('---') ? 'meta'
      : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : line.startsWith('@@') ? 'hunk' : 'ctx';
    return h(`span.${cls}`, `${line}\n`);
  }));
}

const timers = new Set();
setInterval(() => timers.forEach((tick) => tick()), 1000);

/**
 * An approval card for `a` (an `approval_needed` event or a row of GET /api/ai/approvals).
 * `canDecide`: the user's role may approve. `onDecided(decision)` runs after a decision.
 */
export class ApprovalCard {
  constructor(a, { canDecide, onDecided } = {}) {
    this.id = a.approval_id || a.id;
    this.onDecided = onDecided;
    this.expiresAt = a.expires_at;
    this.left = h('span.time-left');
    this.state = h('div.approval-state');
    this.chain = h('div.chain', 'Route: …');
    this.reason = h('input.deny-reason', { type: 'text', placeholder: 'Reason for denying (optional)', 'aria-label': 'Reason for denying' });
    this.approveButton = h('button.approve', { type: 'button', onclick: () => this.decide('approve') }, 'Approve');
    this.denyButton = h('button.deny', { type: 'button', onclick: () => this.decide('deny') }, 'Deny');
    const reasons = a.reasons || [];
    this.buttons = canDecide
      ? h('div.approval-actions', this.approveButton, this.reason, this.denyButton)
      : h('div.approval-actions.note', 'An operator or admin must decide this approval.');
    this.target = h('div.approval-target', a.resource_id || a.target || a.agent || '');
    // A file edit leads with the file and its diff; the command that carries it (the bytes
    // the grant signs) stays one click away.
    const file = a.diff ? diffFile(a.diff) : null;
    const what = a.diff
      ? [h('div.label', 'File'), h('div.approval-file', file || '(see the change)'),
        h('div.label', 'Change'), renderDiff(a.diff),
        h('details.exact-command', h('summary', 'Exact command (what the grant signs)'), h('pre.approval-command', a.command))]
      : [h('div.label', 'Command'), h('pre.approval-command', a.command)];
    this.el = h('section.approval-card', { dataset: { approvalId: this.id } },
      h('header', h('strong', 'Approval needed'), h(`span.risk.risk-${a.risk || 'unknown'}`, a.risk || 'unknown'), this.left),
      what,
      h('div.label', 'Target'), this.target, this.chain,
      reasons.length ? [h('div.label', 'Why it needs approval'), h('ul.reasons', reasons.map((r) => h('li', r)))] : null,
      this.buttons, this.state);
    this.tick = () => this.updateClock();
    this.updateClock();
    timers.add(this.tick);
    this.loadChain(a);
    if (a.status && a.status !== 'pending') this.settled(a);
  }

  updateClock() {
    const left = timeLeft(this.expiresAt);
    this.left.textContent = left === 'expired' ? 'expired' : `expires in ${left}`;
    if (left === 'expired' && !this.done) this.resolved({ decision: 'expired' });
  }

  async loadChain(a) {
    try {
      const row = a.resource_id !== undefined ? a : await get(`/api/ai/approvals/${encodeURIComponent(this.id)}`);
      const names = await agentNames();
      if (!row.resource_id) {
        this.chain.textContent = row.agent ? `Route: agent ${names.get(row.agent) || row.agent}` : '';
        return;
      }
      const r = await get(`/api/resources/${encodeURIComponent(row.resource_id)}`);
      this.target.textContent = `${r.name} (${r.kind})`;
      this.target.title = r.id;
      replace(this.chain, 'Route: ', chainText(r, names));
    } catch { this.chain.textContent = ''; }
  }

  async decide(kind) {
    this.approveButton.disabled = this.denyButton.disabled = true;
    const reason = this.reason.value.trim();
    try {
      await post(`/api/ai/approvals/${encodeURIComponent(this.id)}/${kind}`, kind === 'deny' ? { reason: reason || null } : {});
      this.resolved({ decision: kind === 'approve' ? 'approved' : 'denied', reason });
      if (kind === 'approve') this.followRun();
      if (this.onDecided) this.onDecided(kind);
    } catch (err) {
      this.approveButton.disabled = this.denyButton.disabled = false;
      replace(this.state, h('span.error', `${err.code}: ${err.message}`));
    }
  }

  /** Shows a decision (from this card, the stream or another client). */
  resolved({ decision, reason }) {
    if (this.done) return;
    this.done = true;
    timers.delete(this.tick);
    this.buttons.remove();
    this.el.classList.add(`decided-${decision}`);
    replace(this.state, h(`strong.decision-${decision}`, decision === 'approved' ? 'Approved' : decision === 'denied' ? 'Denied' : 'Expired'),
      reason ? ` — ${reason}` : '', decision === 'approved' ? h('span.run', ' · running…') : null);
  }

  /** A row that is no longer pending. */
  settled(row) {
    this.resolved({ decision: row.status, reason: row.reason });
    if (row.status === 'approved') this.showRun(row);
  }

  /** Polls the approval until its run ends, then shows the outcome. */
  async followRun() {
    for (let i = 0; i < 600; i += 1) {
      try {
        const row = await get(`/api/ai/approvals/${encodeURIComponent(this.id)}`);
        if (row.run_state === 'done' || row.run_state === 'unknown') { this.showRun(row); return; }
      } catch { /* keep trying */ }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  showRun(row) {
    const run = this.state.querySelector('.run') || append(this.state, [h('span.run')]).lastChild;
    if (row.run_state === 'done' || row.run_state === 'unknown') {
      run.textContent = ` · ${row.outcome || row.run_state}${row.exit_code !== null && row.exit_code !== undefined ? ` (exit ${row.exit_code})` : ''}`;
      run.className = `run ${row.exit_code === 0 ? 'ok' : 'failed'}`;
    }
  }
}

/** `lxc:141 via agent delly (pct)`: a resource's chain as text, agents by host name when
 * `names` (id → host name) knows them. */
export function chainText(resource, names = new Map()) {
  const paths = resource.chain || [];
  if (!paths.length) return 'no route';
  return paths.map((p) => `${p.target} via agent ${names.get(p.agent) || p.agent}${p.via ? ` (${p.via})` : ''}${p.connected ? '' : ' — offline'}`).join('; ');
}

/** The file a unified diff changes: its `+++` line, whose `b` prefix the controller puts
 * before the absolute path (`+++ b/etc/motd` is /etc/motd). */
export function diffFile(diff) {
  const line = String(diff).split('\n').find((l) => l.startsWith('+++ '));
  if (!line) return null;
  const path = line.slice(4).split('\t')[0].trim();
  return path.startsWith('b/') ? path.slice(1) : path;
}
