//! [`Utf8Carry`]: UTF-8 decoding of a byte stream chunk by chunk.

/// Decodes a byte stream as UTF-8 chunk by chunk, holding back a character split between
/// two chunks and replacing invalid bytes with U+FFFD.
#[derive(Debug, Default)]
pub struct Utf8Carry {
    pending: Vec<u8>,
}

impl Utf8Carry {
    /// The text of `chunk` (plus what was held back), holding back an incomplete tail.
    pub fn push(&mut self, chunk: &[u8]) -> String {
        self.pending.extend_from_slice(chunk);
        let mut out = String::new();
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    out.push_str(text);
                    rest = &[];
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match error.error_len() {
                        Some(len) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[len..];
                        }
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        let tail = rest.to_vec();
        self.pending = tail;
        out
    }

    /// Whatever is still held back, lossily.
    pub fn finish(&mut self) -> String {
        let out = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_characters_are_joined_and_invalid_bytes_replaced() {
        let mut carry = Utf8Carry::default();
        let euro = "€".as_bytes();
        assert_eq!(carry.push(&[b'a', euro[0]]), "a");
        assert_eq!(carry.push(&euro[1..]), "€");
        assert_eq!(carry.push(&[0xff, b'b']), "\u{FFFD}b");
        assert_eq!(carry.push(&[euro[0]]), "");
        assert_eq!(carry.finish(), "\u{FFFD}");
    }
}
