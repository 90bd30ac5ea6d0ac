// The chat view: the session list (new, rename, delete), the conversation, and the
// composer (Enter sends, Shift+Enter adds a line, Esc stops the turn, @ and / complete).

import { h, replace, ago, tokens } from './dom.js';
import { api, get, post, chatStream } from './api.js';
import { Turn, replay } from './turn.js';
import { Completer, mentionsIn } from './complete.js';

export class ChatView {
  constructor(app) {
    this.app = app;
    this.sessionId = null;
    this.running = null;
    this.picked = new Map();
    this.sessions = h('ul.session-list');
    this.log = h('div.messages', { role: 'log', 'aria-live': 'polite' });
    this.input = h('textarea.composer-input', { rows: 2, placeholder: 'Ask about your infrastructure — @ names a resource, / runs a tool directly', 'aria-label': 'Message' });
    this.completer = new Completer(this.input, this.picked);
    this.level = h('select.control-level', { 'aria-label': 'Control level', title: 'Control level of new sessions' });
    this.send = h('button.send', { type: 'submit' }, 'Send');
    this.stop = h('button.stop', { type: 'button', hidden: true, onclick: () => this.cancel() }, 'Stop');
    this.banner = h('div.banner', { hidden: true });
    this.input.addEventListener('keydown', (e) => this.keydown(e));
    const form = h('form.composer', { onsubmit: (e) => { e.preventDefault(); this.submit(); } },
      this.completer.list, this.input, h('div.composer-bar', this.level, h('span.spacer'), this.stop, this.send));
    this.sidebar = h('aside.sidebar',
      h('button.new-session', { type: 'button', onclick: () => this.newSession() }, '+ New chat'),
      this.sessions);
    this.el = h('div.chat-view', this.sidebar,
      h('section.conversation', this.banner, this.log, form));
  }

  /** Called when the user signs in or the view is shown. */
  async show() {
    const me = this.app.me;
    replace(this.level, me.control_levels.map((l) => h('option', { value: l, selected: l === me.control_level }, l.replace('_', ' '))));
    this.level.disabled = me.control_levels.length < 2;
    if (!me.model) {
      this.banner.hidden = false;
      replace(this.banner, 'No model is configured: this is direct mode. Messages that start with ',
        h('code', '/'), ' run one tool without a model (type / to see them). Configure one with ',
        h('code', '--llm-provider'), ' and ', h('code', '--llm-model'), '.');
    } else {
      this.banner.hidden = true;
    }
    await this.loadSessions();
    this.input.focus();
  }

  async loadSessions() {
    let list = [];
    try { list = await get('/api/ai/sessions'); } catch (err) { this.app.toast(err); return; }
    replace(this.sessions, list.map((s) => h(`li${s.id === this.sessionId ? '.active' : ''}`, { dataset: { sessionId: s.id } },
      h('button.session-open', { type: 'button', title: s.title, onclick: () => this.open(s.id) },
        h('span.session-title', s.title || 'Untitled'), h('span.session-meta', `${s.running ? 'running · ' : ''}${ago(s.updated_at)} · ${tokens(s.input_tokens + s.output_tokens)}`)),
      h('button.icon.rename', { type: 'button', title: 'Rename', 'aria-label': 'Rename session', onclick: () => this.rename(s) }, '✎'),
      h('button.icon.delete', { type: 'button', title: 'Delete', 'aria-label': 'Delete session', onclick: () => this.remove(s) }, '✕'))));
  }

  ctx() {
    return {
      canDecide: this.app.canDecide(),
      onDecided: () => this.app.refreshBadge(),
      scroll: () => { this.log.scrollTop = this.log.scrollHeight; },
    };
  }

  newSession() {
    if (this.running) return;
    this.sessionId = null;
    this.log.replaceChildren();
    this.loadSessions();
    this.input.focus();
  }

  async open(id) {
    if (this.running) return;
    this.sessionId = id;
    this.log.replaceChildren();
    try {
      const messages = await get(`/api/ai/sessions/${encodeURIComponent(id)}/messages`);
      replay(this.log, messages, this.ctx());
    } catch (err) { this.app.toast(err); }
    this.loadSessions();
    this.sidebar.classList.remove('open');
  }

  async rename(s) {
    const title = window.prompt('Rename the session', s.title);
    if (title === null || !title.trim()) return;
    try { await api('PATCH', `/api/ai/sessions/${encodeURIComponent(s.id)}`, { title: title.trim() }); } catch (err) { this.app.toast(err); }
    this.loadSessions();
  }

  async remove(s) {
    if (!window.confirm(`Delete "${s.title}" and its messages?`)) return;
    try { await api('DELETE', `/api/ai/sessions/${encodeURIComponent(s.id)}`); } catch (err) { this.app.toast(err); }
    if (s.id === this.sessionId) this.newSession();
    else this.loadSessions();
  }

  keydown(e) {
    if (this.completer.key(e)) { e.preventDefault(); return; }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); this.submit(); }
    if (e.key === 'Escape' && this.running) { e.preventDefault(); this.cancel(); }
  }

  async submit() {
    const message = this.input.value.trim();
    if (!message || this.running) return;
    const body = { message };
    const mentions = mentionsIn(message, this.picked);
    if (mentions.length) body.mentions = mentions;
    if (this.sessionId) body.session_id = this.sessionId;
    else body.control_level = this.level.value;
    this.input.value = '';
    this.completer.reset();
    this.picked.clear();
    const turn = new Turn(this.log, message, this.ctx());
    this.setRunning(new AbortController());
    try {
      await chatStream(body, (name, data) => {
        if (name === 'session') {
          const fresh = this.sessionId !== data.session_id;
          this.sessionId = data.session_id;
          if (fresh) this.loadSessions();
        }
        if (name === 'approval_needed') this.app.refreshBadge();
        turn.event(name, data);
      }, this.running.signal);
    } catch (err) {
      if (err.name !== 'AbortError') turn.event('error', { code: err.code || 'NETWORK', message: err.message });
    } finally {
      this.setRunning(null);
      this.loadSessions();
      this.app.refreshBadge();
      if (this.sessionId) {
        get(`/api/ai/sessions/${encodeURIComponent(this.sessionId)}/messages`)
          .then((messages) => turn.fillResults(messages)).catch(() => {});
      }
    }
  }

  setRunning(controller) {
    this.running = controller;
    this.stop.hidden = !controller;
    this.send.hidden = !!controller;
    this.el.classList.toggle('busy', !!controller);
  }

  /** Stops the running turn (the stream then ends with its `done`). */
  async cancel() {
    if (!this.running || !this.sessionId) return;
    this.stop.disabled = true;
    try { await post(`/api/ai/sessions/${encodeURIComponent(this.sessionId)}/cancel`); } catch (err) { this.app.toast(err); }
    this.stop.disabled = false;
  }
}
