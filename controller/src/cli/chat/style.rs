//! Terminal colours for the chat: ANSI escapes only when standard output is a terminal and
//! `NO_COLOR` is unset (<https://no-color.org>); plain text otherwise.

use std::io::IsTerminal;

/// Whether to colour, and how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    enabled: bool,
}

impl Style {
    /// Colours when standard output is a terminal and `NO_COLOR` is unset or empty.
    pub fn detect() -> Style {
        Style::detect_for(std::io::stdout().is_terminal())
    }

    /// Colours when `terminal` (the stream written to is one) and `NO_COLOR` is unset.
    pub fn detect_for(terminal: bool) -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            enabled: terminal && !no_color,
        }
    }

    /// No colours.
    pub fn plain() -> Style {
        Style { enabled: false }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.enabled && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Secondary text: tool output, hints.
    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }

    /// Success.
    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    /// Failure.
    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    /// Something that needs the person.
    pub fn yellow(self, text: &str) -> String {
        self.paint("1;33", text)
    }

    /// Prompts and tool names.
    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_style_adds_nothing_and_colour_wraps_whole_text() {
        assert_eq!(Style::plain().red("x"), "x");
        let colour = Style { enabled: true };
        assert_eq!(colour.red("x y"), "\x1b[31mx y\x1b[0m");
        assert_eq!(colour.dim(""), "");
    }
}
