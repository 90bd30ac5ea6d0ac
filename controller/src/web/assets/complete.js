// Autocomplete in the composer: `@` offers resources from GET /api/resources?q= (a pick
// becomes a structured mention), `/` at the start offers the direct-mode commands.

import { h, replace } from './dom.js';
import { get } from './api.js';

/** The direct-mode forms (controller/src/assistant/direct.rs). */
export const COMMANDS = [
  ['/query search ', 'TEXT', 'search resources'],
  ['/query get @', 'R', 'one resource and its route'],
  ['/query list ', '[KIND]', 'list resources'],
  ['/query topology ', '[@R]', 'what runs where'],
  ['/query health', '', 'agents and inventory health'],
  ['/read @', 'R COMMAND', 'run a read-only command'],
  ['/read file @', 'R PATH', 'read a file'],
  ['/read tail @', 'R PATH [LINES]', 'the end of a file'],
  ['/read logs @', 'R [UNIT]', 'journal logs'],
  ['/control @', 'R COMMAND', 'a write (needs approval)'],
  ['/docker list @', 'R', 'containers of a Docker host'],
  ['/docker inspect @', 'R', 'one container'],
  ['/docker logs @', 'R', 'a container\'s logs'],
  ['/docker restart @', 'R', 'restart a container (needs approval)'],
  ['/file @', 'R PATH', 'read a file for editing'],
  ['/metrics @', 'R', 'load, memory and disk'],
  ['/knowledge ', '[QUERY]', 'what this session knows'],
];

export class Completer {
  /** `input` is the textarea; `mentions` is a Map name → resource id the message will carry. */
  constructor(input, mentions) {
    this.input = input;
    this.mentions = mentions;
    this.items = [];
    this.index = 0;
    this.list = h('ul.completions', { role: 'listbox', hidden: true });
    input.addEventListener('input', () => this.update());
    input.addEventListener('blur', () => setTimeout(() => this.close(), 150));
    this.seq = 0;
  }

  get open() { return !this.list.hidden && this.items.length > 0; }

  /** Handles a key; true when it was used for the list. */
  key(event) {
    if (!this.open) return false;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      this.index = (this.index + (event.key === 'ArrowDown' ? 1 : -1) + this.items.length) % this.items.length;
      this.render();
      return true;
    }
    if (event.key === 'Enter' || event.key === 'Tab') { this.pick(this.index); return true; }
    if (event.key === 'Escape') { this.close(); return true; }
    return false;
  }

  /** The word being typed at the caret: `@text` or a leading `/text`. */
  word() {
    const before = this.input.value.slice(0, this.input.selectionStart);
    const at = before.match(/(^|\s)@([\w.:\-/]*)$/);
    if (at) return { kind: '@', text: at[2], start: before.length - at[2].length - 1 };
    const slash = before.match(/^\/([\w ]*)$/);
    if (slash && !before.includes('@')) return { kind: '/', text: before, start: 0 };
    return null;
  }

  async update() {
    const word = this.word();
    if (!word) { this.close(); return; }
    const seq = ++this.seq;
    if (word.kind === '/') {
      this.items = COMMANDS.filter(([form]) => form.startsWith(word.text) || word.text.startsWith(form.trim()) && word.text.length <= form.length)
        .map(([form, args, help]) => ({ label: `${form}${args}`, help, insert: form, word }));
    } else {
      let found = [];
      try { found = await get(`/api/resources?q=${encodeURIComponent(word.text)}`); } catch { found = []; }
      if (seq !== this.seq) return;
      this.items = found.slice(0, 8).map((r) => ({
        label: r.name || r.id, help: `${r.kind} · ${r.id}`, insert: `@${r.name || r.id} `, id: r.id, name: r.name || r.id, word,
      }));
    }
    this.index = 0;
    this.render();
  }

  render() {
    this.list.hidden = this.items.length === 0;
    replace(this.list, this.items.map((item, n) => h(`li${n === this.index ? '.active' : ''}`, {
      role: 'option', 'aria-selected': n === this.index ? 'true' : 'false',
      onmousedown: (e) => { e.preventDefault(); this.pick(n); },
    }, h('span.label', item.label), h('span.help', item.help))));
  }

  pick(n) {
    const item = this.items[n];
    if (!item) return;
    const value = this.input.value;
    const caret = this.input.selectionStart;
    const next = value.slice(0, item.word.start) + item.insert + value.slice(caret);
    this.input.value = next;
    const at = item.word.start + item.insert.length;
    this.input.setSelectionRange(at, at);
    if (item.id) this.mentions.set(item.name, item.id);
    this.close();
    this.input.focus();
    if (item.word.kind === '/' && item.insert.endsWith('@')) this.update();
  }

  close() { this.list.hidden = true; this.items = []; }

  /** The message was sent: close the list, and drop a search still on its way (it would
   * open the list again above an empty box). */
  reset() { this.seq += 1; this.close(); }
}

/** The mentions a message carries: the picked resources whose `@name` is still in it. */
export function mentionsIn(text, picked) {
  const ids = [];
  for (const [name, id] of picked) {
    if (text.includes(`@${name}`) && !ids.includes(id)) ids.push(id);
  }
  return ids;
}
