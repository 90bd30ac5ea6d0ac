// A small Markdown renderer for model answers. It builds DOM nodes and text nodes only,
// never HTML strings, so `<script>` or `<img onerror=…>` in an answer shows as text.
// It covers what answers use: paragraphs, headings, fenced code, lists, tables, quotes,
// rules, and inline code, bold, italic and http(s) links.

import { h } from './dom.js';

const FENCE = /^\s*(`{3,}|~{3,})\s*([\w+-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const LIST_ITEM = /^\s*([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;

/** Renders `text` into a fragment. */
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) { i += 1; continue; }
    const fence = line.match(FENCE);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i += 1;
      const code = h('code', body.join('\n'));
      if (fence[2]) code.dataset.lang = fence[2];
      out.append(h('pre', code));
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      out.append(h(`h${Math.min(heading[1].length + 2, 6)}`, inline(heading[2])));
      i += 1;
      continue;
    }
    if (RULE.test(line)) { out.append(h('hr')); i += 1; continue; }
    if (line.includes('|') && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) {
      i = table(lines, i, out);
      continue;
    }
    if (/^\s*>/.test(line)) {
      const body = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ''));
      out.append(h('blockquote', renderMarkdown(body.join('\n'))));
      continue;
    }
    if (LIST_ITEM.test(line)) { i = list(lines, i, out); continue; }
    const para = [];
    while (i < lines.length && lines[i].trim() && !startsBlock(lines, i)) para.push(lines[i++].trim());
    if (!para.length) para.push(lines[i++].trim());
    const p = h('p');
    para.forEach((l, n) => { if (n) p.append(h('br')); p.append(inline(l)); });
    out.append(p);
  }
  return out;
}

function startsBlock(lines, i) {
  const line = lines[i];
  return FENCE.test(line) || HEADING.test(line) || LIST_ITEM.test(line) || /^\s*>/.test(line)
    || RULE.test(line)
    || (line.includes('|') && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]));
}

function list(lines, i, out) {
  const ordered = /^\s*\d/.test(lines[i]);
  const el = h(ordered ? 'ol' : 'ul');
  if (ordered) {
    const start = parseInt(lines[i].trim(), 10);
    if (start > 1) el.setAttribute('start', String(start));
  }
  let item = null;
  while (i < lines.length) {
    const m = lines[i].match(LIST_ITEM);
    if (m && (/^\s*\d/.test(lines[i]) === ordered)) {
      item = h('li', inline(m[2]));
      el.append(item);
    } else if (item && lines[i].trim() && /^\s+/.test(lines[i]) && !FENCE.test(lines[i])) {
      item.append(' ', inline(lines[i].trim()));
    } else {
      break;
    }
    i += 1;
  }
  out.append(el);
  return i;
}

function cells(line) {
  let t = line.trim();
  if (t.startsWith('|')) t = t.slice(1);
  if (t.endsWith('|') && !t.endsWith('\\|')) t = t.slice(0, -1);
  return t.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function table(lines, i, out) {
  const head = cells(lines[i]);
  const aligns = cells(lines[i + 1]).map((c) =>
    c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : null);
  const row = (values, tag) => h('tr', head.map((_, n) => {
    const cell = h(tag, inline(values[n] ?? ''));
    if (aligns[n]) cell.style.textAlign = aligns[n];
    return cell;
  }));
  const body = h('tbody');
  i += 2;
  while (i < lines.length && lines[i].includes('|') && lines[i].trim()) body.append(row(cells(lines[i++]), 'td'));
  out.append(h('div.table-wrap', h('table', h('thead', row(head, 'th')), body)));
  return i;
}

const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+?)\*\*|__([^_]+?)__|\*([^*\s][^*]*?)\*|(?<![\w])_([^_\s][^_]*?)_(?![\w])|\[([^\]]+)\]\(([^)\s]+)\)/g;

/** Renders one line's inline Markdown into a fragment. */
export function inline(text) {
  const out = document.createDocumentFragment();
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    out.append(text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1]) out.append(h('code', m[2].replace(/^ (.*) $/, '$1')));
    else if (m[3] || m[4]) out.append(h('strong', inline(m[3] || m[4])));
    else if (m[5] || m[6]) out.append(h('em', inline(m[5] || m[6])));
    else out.append(link(m[7], m[8]));
  }
  out.append(text.slice(last));
  return out;
}

function link(label, href) {
  let url = null;
  try { url = new URL(href); } catch { url = null; }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return `${label} (${href})`;
  return h('a', { href: url.href, target: '_blank', rel: 'noopener noreferrer nofollow' }, inline(label));
}
