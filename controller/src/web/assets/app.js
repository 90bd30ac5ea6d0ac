// The Vigil web page: sign-in with an API token, the navigation between views, the theme,
// the badge of pending approvals and error toasts. Plain ES modules, no build step.

import { h, replace } from './dom.js';
import { get, setToken, clearToken, token, onUnauthorized } from './api.js';
import { ChatView } from './chat.js';
import { ApprovalsView, AgentsView, ResourcesView, AuditView } from './views.js';
import { FindingsView } from './findings.js';

const ROLES = { viewer: 0, operator: 1, admin: 2 };

class App {
  constructor(root) {
    this.root = root;
    this.me = null;
    this.toasts = h('div.toasts', { role: 'status' });
    document.body.append(this.toasts);
    onUnauthorized(() => this.signOut('Your token is no longer accepted. Sign in again.'));
    this.applyTheme(localStorage.getItem('vigil.theme'));
  }

  canDecide() { return this.me && ROLES[this.me.role] >= ROLES.operator; }

  async start() {
    if (!token()) { this.signInPage(); return; }
    try {
      this.me = await get('/api/me', { quiet: true });
    } catch (err) {
      this.signInPage(err.status === 401 ? 'The saved token is no longer accepted. Sign in again.' : err.message);
      return;
    }
    this.mainPage();
  }

  signInPage(message) {
    const input = h('input#token', { type: 'password', autocomplete: 'current-password', placeholder: 'vat_…', 'aria-label': 'API token', required: true });
    const error = h('p.signin-error', { role: 'alert' }, message || '');
    const button = h('button', { type: 'submit' }, 'Sign in');
    const form = h('form.signin', {
      onsubmit: async (e) => {
        e.preventDefault();
        const value = input.value.trim();
        if (!value) return;
        button.disabled = true;
        setToken(value);
        try {
          this.me = await get('/api/me', { quiet: true });
          this.mainPage();
        } catch (err) {
          clearToken();
          error.textContent = err.status === 401
            ? 'That token was not accepted. Paste the admin token from <data-dir>/admin.token, or create one with `vigil-controller apitoken create`.'
            : err.message;
          button.disabled = false;
          input.select();
        }
      },
    },
    h('h1', h('span.logo', '◆'), ' Vigil'),
    h('p', 'Sign in with an API token. The token stays in this browser.'),
    input, button, error);
    replace(this.root, h('main.signin-page', form));
    input.focus();
  }

  signOut(message) {
    clearToken();
    this.me = null;
    clearInterval(this.badgeTimer);
    this.signInPage(message);
  }

  mainPage() {
    this.views = { chat: new ChatView(this), approvals: new ApprovalsView(this), findings: new FindingsView(this), agents: new AgentsView(this), resources: new ResourcesView(this) };
    if (this.me.role === 'admin') this.views.audit = new AuditView(this);
    this.badge = h('span.badge', { hidden: true, 'aria-label': 'pending approvals' });
    this.findingsBadge = h('span.badge.findings-count', { hidden: true, 'aria-label': 'open findings' });
    const labels = { chat: 'Chat', approvals: 'Approvals', findings: 'Findings', agents: 'Agents', resources: 'Resources', audit: 'Audit' };
    this.tabs = Object.keys(this.views).map((name) => h('button.tab', { type: 'button', dataset: { view: name }, onclick: () => this.go(name) },
      labels[name], name === 'approvals' ? this.badge : null, name === 'findings' ? this.findingsBadge : null));
    this.content = h('div.content');
    const menu = h('button.icon.menu', { type: 'button', 'aria-label': 'Sessions', title: 'Sessions', onclick: () => this.views.chat.sidebar.classList.toggle('open') }, '☰');
    const header = h('header.top',
      menu, h('span.brand', h('span.logo', '◆'), ' Vigil'), h('nav.tabs', this.tabs), h('span.spacer'),
      h('span.who', { title: `version ${this.me.version}` }, `${this.me.name} · ${this.me.role}`),
      h('button.icon.theme', { type: 'button', title: 'Light or dark theme', 'aria-label': 'Toggle theme', onclick: () => this.toggleTheme() }, '◐'),
      h('button.signout', { type: 'button', onclick: () => this.signOut('Signed out.') }, 'Sign out'));
    replace(this.root, h('div.app', header, this.content));
    // A link such as /#approvals/<id> (in a notification) opens its view.
    const wanted = location.hash.slice(1).split('/')[0];
    this.go(this.views[wanted] ? wanted : 'chat');
    this.refreshBadge();
    clearInterval(this.badgeTimer);
    this.badgeTimer = setInterval(() => this.refreshBadge(), 5000);
  }

  go(name) {
    this.current = name;
    for (const tab of this.tabs) tab.classList.toggle('active', tab.dataset.view === name);
    document.body.dataset.view = name;
    replace(this.content, this.views[name].el);
    this.views[name].show();
  }

  async refreshBadge() {
    if (!this.me) return;
    try {
      const pending = await get('/api/ai/approvals?status=pending');
      this.badge.hidden = pending.length === 0;
      this.badge.textContent = String(pending.length);
      const summary = await get('/api/findings/summary');
      this.findingsBadge.hidden = summary.open === 0;
      this.findingsBadge.textContent = String(summary.open);
    } catch { /* shown elsewhere */ }
  }

  toast(err) {
    const text = err && err.code ? `${err.code}: ${err.message}` : String(err && err.message ? err.message : err);
    const el = h('div.toast', text);
    this.toasts.append(el);
    setTimeout(() => el.remove(), 6000);
  }

  applyTheme(theme) {
    if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
    else delete document.documentElement.dataset.theme;
  }

  toggleTheme() {
    const dark = document.documentElement.dataset.theme
      ? document.documentElement.dataset.theme === 'dark'
      : window.matchMedia('(prefers-color-scheme: dark)').matches;
    const next = dark ? 'light' : 'dark';
    localStorage.setItem('vigil.theme', next);
    this.applyTheme(next);
  }
}

new App(document.getElementById('app')).start();
