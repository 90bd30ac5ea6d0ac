// DOM helpers. Every text goes through text nodes: nothing here parses HTML, so text from
// the model, the hosts or the API can never become markup.

/** Creates an element: h('div.card.open', {title: 'x', onclick: f}, child, 'text', [more]). */
export function h(spec, attrs, ...children) {
  const [head, ...classes] = spec.split('.');
  const [tag, id] = head.split('#');
  const el = document.createElement(tag || 'div');
  if (id) el.id = id;
  if (classes.length) el.className = classes.join(' ');
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'dataset') {
      Object.assign(el.dataset, value);
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Appends children (nodes, strings, numbers, arrays; null and false are skipped). */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Replaces an element's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

/** `12 s ago`, `5 min ago`, or a local date for older times; `seconds` is a Unix time. */
export function ago(seconds) {
  if (!seconds) return 'never';
  const delta = Math.round(Date.now() / 1000 - seconds);
  if (delta < 5) return 'just now';
  if (delta < 60) return `${delta} s ago`;
  if (delta < 3600) return `${Math.round(delta / 60)} min ago`;
  if (delta < 86400) return `${Math.round(delta / 3600)} h ago`;
  return new Date(seconds * 1000).toLocaleString();
}

/** `4:05` left until `seconds` (a Unix time), or `expired`. */
export function timeLeft(seconds) {
  const left = Math.floor(seconds - Date.now() / 1000);
  if (left <= 0) return 'expired';
  const m = Math.floor(left / 60);
  const s = String(left % 60).padStart(2, '0');
  return `${m}:${s}`;
}

/** A token count as a person reads it: `840 tokens`, `12.5k tokens`, `1.2M tokens`. */
export function tokens(n) {
  const count = Number(n) || 0;
  if (count < 1000) return `${count} tokens`;
  if (count < 1e6) return `${(count / 1000).toFixed(count < 1e4 ? 1 : 0)}k tokens`;
  return `${(count / 1e6).toFixed(1)}M tokens`;
}
