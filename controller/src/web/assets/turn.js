// One exchange in the chat: the user's message and the assistant's answer, built from the
// chat stream's events (docs/assistant.md) or replayed from a session's stored messages.

import { h, append } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { ToolCard, ApprovalCard } from './cards.js';

export class Turn {
  /** `log` is the messages element; `ctx` gives {canDecide, onDecided, scroll}. */
  constructor(log, userText, ctx) {
    this.ctx = ctx;
    this.tools = new Map();
    this.approvals = new Map();
    this.segment = null;
    // Direct mode (`/read @vm df -h`): no answer text follows, so tool cards stay open.
    this.direct = typeof userText === 'string' && userText.trim().startsWith('/');
    if (userText !== null) log.append(h('div.msg.user', h('div.bubble', userText)));
    this.body = h('div.answer');
    this.el = h('div.msg.assistant', this.body);
    log.append(this.el);
  }

  /** The text segment being written (a new one after a card). */
  text() {
    if (!this.segment) {
      this.segment = { raw: '', el: h('div.md') };
      this.body.append(this.segment.el);
    }
    return this.segment;
  }

  addText(delta) {
    const seg = this.text();
    seg.raw += delta;
    if (!seg.pending) {
      seg.pending = true;
      requestAnimationFrame(() => {
        seg.pending = false;
        seg.el.replaceChildren(renderMarkdown(seg.raw));
        this.ctx.scroll();
      });
    }
  }

  /** Handles one chat event. */
  event(name, data) {
    switch (name) {
      case 'content': this.addText(data.text || ''); break;
      case 'content_replaced': {
        this.body.querySelectorAll('.md').forEach((el) => el.remove());
        this.segment = null;
        this.addText(data.text || '');
        this.body.append(h('div.note', `The answer was replaced: ${data.reason || 'it claimed something no tool did'}.`));
        break;
      }
      case 'tool_start': {
        const card = new ToolCard(data, { keepOpen: this.direct });
        this.tools.set(data.tool_call_id, card);
        this.body.append(card.el);
        this.segment = null;
        break;
      }
      case 'tool_output': this.tools.get(data.tool_call_id)?.append(data.stream, data.text || ''); break;
      case 'tool_end': this.tools.get(data.tool_call_id)?.end(data); break;
      case 'approval_needed': {
        const card = new ApprovalCard(data, this.ctx);
        this.approvals.set(data.approval_id, card);
        const tool = this.tools.get(data.tool_call_id);
        if (tool) tool.el.after(card.el);
        else this.body.append(card.el);
        this.segment = null;
        break;
      }
      case 'approval_resolved': {
        const card = this.approvals.get(data.approval_id);
        if (card) {
          card.resolved(data);
          if (data.decision === 'approved') card.followRun();
        }
        break;
      }
      case 'error':
        this.body.append(h('div.error-box', h('strong', data.code || 'ERROR'), ': ', data.message || ''));
        this.segment = null;
        break;
      case 'done': {
        const parts = [`${data.turns ?? 0} model call${data.turns === 1 ? '' : 's'}`,
          `${data.tool_calls ?? 0} tool call${data.tool_calls === 1 ? '' : 's'}`];
        if (data.input_tokens || data.output_tokens) parts.push(`${data.input_tokens} in / ${data.output_tokens} out tokens`);
        this.el.append(h('div.usage', parts.join(' · ')));
        break;
      }
      default: break;
    }
    this.ctx.scroll();
  }

  /** Gives failed cards their error message and hint from the stored tool results. */
  fillResults(messages) {
    for (const m of messages) {
      if (m.role !== 'tool' || !m.data) continue;
      const card = this.tools.get(m.data.tool_call_id);
      if (!card || card.filled) continue;
      card.filled = true;
      try { card.result(JSON.parse(m.content)); } catch { /* not an envelope */ }
    }
  }
}

/** Rebuilds a session's conversation from its stored messages. */
export function replay(log, messages, ctx) {
  let turn = null;
  const all = [];
  for (const m of messages) {
    if (m.role === 'user') {
      turn = new Turn(log, m.content, ctx);
      all.push(turn);
      continue;
    }
    if (!turn) { turn = new Turn(log, null, ctx); all.push(turn); }
    if (m.role === 'assistant') {
      if (m.content) turn.addText(m.content);
      for (const call of (m.data && m.data.tool_calls) || []) {
        let input = {};
        try { input = typeof call.arguments === 'string' ? JSON.parse(call.arguments) : call.arguments || {}; } catch { input = {}; }
        turn.event('tool_start', { tool_call_id: call.id, name: call.name, input });
      }
    } else if (m.role === 'tool') {
      turn.fillResults([m]);
    } else {
      append(turn.body, [h('div.note', m.content)]);
      turn.segment = null;
    }
  }
  return all;
}
