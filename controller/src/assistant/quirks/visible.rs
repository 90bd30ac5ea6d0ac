//! The visible text of an answer: reasoning blocks and vendor artifacts removed, on a
//! stream of deltas ([`VisibleText`]) or on a whole text ([`strip_reasoning`]). A tag split
//! across deltas is held back until it is complete or can no longer be one; nothing else
//! is delayed.

use super::artifacts::{REGIONS, Region, TOKENS, longest_tag};

/// Streaming filter for the text shown to the user.
#[derive(Debug, Default)]
pub struct VisibleText {
    filter: Filter,
}

impl VisibleText {
    /// A filter at the start of an answer.
    pub fn new() -> Self {
        Self::default()
    }

    /// A filter for a model whose server opens the reasoning block in the prompt, so that
    /// the answer starts inside it without `<think>`: text is held until a closing
    /// reasoning tag (what came before it is dropped) or, if none comes, until
    /// [`finish`](Self::finish). Use it once [`dropped_opening`](Self::dropped_opening)
    /// has shown that a model does this.
    pub fn opened_reasoning() -> Self {
        Self {
            filter: Filter {
                opened: true,
                implicit: true,
                ..Filter::default()
            },
        }
    }

    /// True once a closing reasoning tag came without its opening tag; the text streamed
    /// before it was reasoning (the stored text, [`strip_reasoning`], drops it).
    pub fn dropped_opening(&self) -> bool {
        self.filter.stray
    }

    /// The visible part of `delta` (and of what earlier deltas held back).
    pub fn push(&mut self, delta: &str) -> String {
        let mut out = String::new();
        self.filter.push(delta, &mut out);
        out
    }

    /// What is still held back once the answer is complete; the filter starts over.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        self.filter.finish(&mut out);
        out
    }
}

/// `text` without reasoning blocks and vendor artifacts, trimmed when anything was removed
/// (for what is stored).
pub fn strip_reasoning(text: &str) -> String {
    whole(text, Filter::default())
}

/// `text` without its reasoning blocks only (the tool-call markup stays for recovery).
pub(super) fn without_reasoning(text: &str) -> String {
    whole(
        text,
        Filter {
            reasoning_only: true,
            ..Filter::default()
        },
    )
}

fn whole(text: &str, mut filter: Filter) -> String {
    let mut out = String::new();
    filter.push(text, &mut out);
    let removed = filter.removed;
    filter.finish(&mut out);
    if removed { out.trim().to_owned() } else { out }
}

/// What a tag found in the text does.
#[derive(Debug, Clone, Copy)]
enum Tag {
    /// Opens a region.
    Open(Region),
    /// Closes a reasoning region that never opened: what came before was reasoning.
    StrayClose,
    /// A token that is dropped.
    Token,
}

#[derive(Debug, Default)]
struct Filter {
    /// Only reasoning regions are removed (tokens and vendor regions stay).
    reasoning_only: bool,
    /// Every answer may start inside a reasoning block without its opening tag.
    opened: bool,
    /// This answer may still be inside such a block: everything is held.
    implicit: bool,
    /// A closing reasoning tag came without its opening tag.
    stray: bool,
    /// Text received and not yet decided on.
    pending: String,
    /// The region being skipped and how deeply it is nested.
    inside: Option<(Region, usize)>,
    /// Some tag was removed.
    removed: bool,
    /// Visible text other than whitespace went out.
    started: bool,
}

impl Filter {
    fn push(&mut self, delta: &str, out: &mut String) {
        self.pending.push_str(delta);
        if self.implicit {
            let Some(end) = self.implicit_end() else {
                return;
            };
            self.pending.drain(..end);
            self.implicit = false;
            self.removed = true;
        }
        let mut at = 0;
        loop {
            let rest = &self.pending[at..];
            if let Some((region, depth)) = self.inside {
                let Some((offset, len, opens)) = region_tag(rest, region) else {
                    at += partial_start(rest, &[region.open, region.close]);
                    break;
                };
                at += offset + len;
                self.inside = match (opens, depth) {
                    (true, _) => Some((region, depth + 1)),
                    (false, 1) => None,
                    (false, _) => Some((region, depth - 1)),
                };
                continue;
            }
            match self.next_tag(rest) {
                Some((offset, len, tag)) => {
                    emit(out, &mut self.started, self.removed, &rest[..offset]);
                    at += offset + len;
                    self.removed = true;
                    match tag {
                        Tag::Open(region) => self.inside = Some((region, 1)),
                        Tag::StrayClose => {
                            self.stray = true;
                            out.clear();
                            self.started = false;
                        }
                        Tag::Token => {}
                    }
                }
                None => {
                    let keep = self.partial(rest);
                    emit(out, &mut self.started, self.removed, &rest[..keep]);
                    at += keep;
                    break;
                }
            }
        }
        self.pending.drain(..at);
    }

    fn finish(&mut self, out: &mut String) {
        if self.implicit {
            self.implicit = false;
            self.push("", out);
        }
        if self.inside.is_none() {
            let pending = std::mem::take(&mut self.pending);
            emit(out, &mut self.started, self.removed, &pending);
        }
        *self = Filter {
            reasoning_only: self.reasoning_only,
            opened: self.opened,
            implicit: self.opened,
            stray: self.stray,
            ..Filter::default()
        };
    }

    /// The end of the first closing reasoning tag in what is held, if one came.
    fn implicit_end(&self) -> Option<usize> {
        REGIONS
            .iter()
            .filter(|region| region.reasoning)
            .filter_map(|region| {
                self.pending
                    .find(region.close)
                    .map(|at| at + region.close.len())
            })
            .min()
    }

    fn regions(&self) -> impl Iterator<Item = &'static Region> + '_ {
        REGIONS
            .iter()
            .filter(|region| region.reasoning || !self.reasoning_only)
    }

    fn tokens(&self) -> &'static [&'static str] {
        if self.reasoning_only { &[] } else { TOKENS }
    }

    /// The first tag in `text` (the longest one where several start at the same place):
    /// its offset, length and meaning.
    fn next_tag(&self, text: &str) -> Option<(usize, usize, Tag)> {
        tag_starts(text).find_map(|at| {
            let here = &text[at..];
            let opens = self
                .regions()
                .map(|region| (region.open, Tag::Open(*region)));
            let closes = self
                .regions()
                .filter(|region| region.reasoning)
                .map(|region| (region.close, Tag::StrayClose));
            let tokens = self.tokens().iter().map(|token| (*token, Tag::Token));
            opens
                .chain(closes)
                .chain(tokens)
                .filter(|(tag, _)| here.starts_with(tag))
                .max_by_key(|(tag, _)| tag.len())
                .map(|(tag, meaning)| (at, tag.len(), meaning))
        })
    }

    /// Where a possible partial tag at the end of `text` begins (`text.len()` if none).
    fn partial(&self, text: &str) -> usize {
        let tags: Vec<&str> = self
            .regions()
            .flat_map(|region| [region.open, region.close])
            .chain(self.tokens().iter().copied())
            .collect();
        partial_start(text, &tags)
    }
}

/// The next opening or closing tag of `region` in `text`: offset, length, whether it opens.
fn region_tag(text: &str, region: Region) -> Option<(usize, usize, bool)> {
    let open = text
        .find(region.open)
        .map(|at| (at, region.open.len(), true));
    let close = text
        .find(region.close)
        .map(|at| (at, region.close.len(), false));
    match (open, close) {
        (Some(open), Some(close)) => Some(if open.0 < close.0 { open } else { close }),
        (open, close) => open.or(close),
    }
}

/// Offsets in `text` where a tag can begin.
fn tag_starts(text: &str) -> impl Iterator<Item = usize> + '_ {
    text.char_indices()
        .filter(|(_, c)| *c == '<' || *c == '[')
        .map(|(at, _)| at)
}

/// Where the earliest suffix of `text` that is an unfinished prefix of one of `tags` begins.
fn partial_start(text: &str, tags: &[&str]) -> usize {
    let window = text.len().saturating_sub(longest_tag());
    tag_starts(text)
        .filter(|at| *at >= window)
        .find(|at| {
            let tail = &text[*at..];
            tags.iter()
                .any(|tag| tag.len() > tail.len() && tag.starts_with(tail))
        })
        .unwrap_or(text.len())
}

/// Appends visible `text`, without the whitespace that follows removed reasoning at the
/// very start of the answer.
fn emit(out: &mut String, started: &mut bool, removed: bool, text: &str) {
    let text = if !*started && removed {
        text.trim_start()
    } else {
        text
    };
    if !text.trim().is_empty() {
        *started = true;
    }
    out.push_str(text);
}
