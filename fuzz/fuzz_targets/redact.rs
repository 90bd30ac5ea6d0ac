//! Fuzz target: `redact` never panics on arbitrary UTF-8, is idempotent (redacting its own
//! output changes nothing and counts nothing), and `StreamRedactor` gives the same text and
//! count as `redact` for a chunking derived from the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vigil_shared::redact::{StreamRedactor, redact};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let whole = redact(&text);
    let again = redact(&whole.text);
    assert_eq!(again.text, whole.text);
    assert_eq!(again.count, 0);

    // Chunk lengths come from the input's own bytes (1..=64), snapped to char boundaries.
    let mut stream = StreamRedactor::new();
    let mut out = String::new();
    let (mut at, mut step) = (0, 0);
    while at < text.len() {
        let mut end = (at + 1 + usize::from(data[step % data.len()] % 64)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push_str(&stream.push(&text[at..end]));
        at = end;
        step += 1;
    }
    out.push_str(&stream.finish());
    assert_eq!(out, whole.text);
    assert_eq!(stream.count(), whole.count);
});
