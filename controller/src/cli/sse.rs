//! A parser of `text/event-stream` for the CLI: bytes in, complete events out. Lines end
//! with LF, CRLF or CR; comment lines (`:`) are skipped; `data` lines are joined with LF.

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field (`message` when absent).
    pub event: String,
    /// The `data` lines joined with LF.
    pub data: String,
}

/// An incremental event-stream parser.
#[derive(Debug, Default)]
pub struct SseParser {
    line: Vec<u8>,
    after_cr: bool,
    event: String,
    data: Vec<String>,
}

impl SseParser {
    /// Feeds `bytes`; returns the events they completed.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in bytes {
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            match byte {
                b'\n' => self.end_line(&mut events),
                b'\r' => {
                    self.end_line(&mut events);
                    self.after_cr = true;
                }
                _ => self.line.push(byte),
            }
        }
        events
    }

    fn end_line(&mut self, events: &mut Vec<SseEvent>) {
        let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            if !self.data.is_empty() {
                events.push(SseEvent {
                    event: if event.is_empty() {
                        "message".into()
                    } else {
                        event
                    },
                    data: std::mem::take(&mut self.data).join("\n"),
                });
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = value.to_owned(),
            "data" => self.data.push(value.to_owned()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_multi_line_data() {
        let mut parser = SseParser::default();
        assert!(parser.push(b"event: stdout\r\ndata: a").is_empty());
        let events =
            parser.push(b"\ndata: \n\n: keep-alive\n\nevent: exit\ndata: {\"exit_code\":0}\r");
        assert_eq!(
            events,
            vec![SseEvent {
                event: "stdout".into(),
                data: "a\n".into()
            }]
        );
        let events = parser.push(b"\r\n");
        assert_eq!(events[0].event, "exit");
        assert_eq!(events[0].data, "{\"exit_code\":0}");
    }
}
