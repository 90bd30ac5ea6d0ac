//! Concrete figures (percentages, sizes) of an answer and whether a successful output of
//! the turn holds them.

use super::text::Parsed;
use super::words::{ADVICE, USAGE, has};
use super::{Executed, Unsupported};

/// Most numbers read from one output.
const MAX_NUMBERS: usize = 4000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Unit {
    Plain,
    Percent,
    /// A size: the power of 1024 (or 1000).
    Size(i32),
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Figure {
    value: f64,
    decimals: i32,
    unit: Unit,
}

/// Figures of the prose that no successful output of the turn holds.
pub(super) fn check(parsed: &Parsed, executed: &[Executed]) -> Vec<Unsupported> {
    let outputs: Vec<Vec<Vec<Figure>>> = executed
        .iter()
        .filter(|e| e.ok)
        .map(|e| {
            e.output
                .lines()
                .take(MAX_NUMBERS)
                .map(|line| figures(line, true))
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    for clause in parsed.clauses.iter().filter(|c| !c.question) {
        let words = &clause.tokens;
        if words.iter().any(|w| has(ADVICE, w)) {
            continue;
        }
        let usage = words.iter().any(|w| has(USAGE, w));
        for figure in figures(&clause.text, false) {
            let claimed = match figure.unit {
                Unit::Percent => usage,
                Unit::Size(_) => true,
                Unit::Plain => false,
            };
            if claimed && !grounded(figure, &outputs) {
                out.push(Unsupported {
                    reason: "it gives figures that no tool output of this turn contains",
                    claim: clause.text.clone(),
                });
                break;
            }
        }
    }
    out
}

fn grounded(figure: Figure, outputs: &[Vec<Vec<Figure>>]) -> bool {
    let lines = || outputs.iter().flatten();
    match figure.unit {
        Unit::Percent => {
            let tol = 0.5 * 10f64.powi(-figure.decimals) + 1e-9;
            let near = |v: f64| (v - figure.value).abs() <= tol;
            lines().any(|line| {
                line.iter().any(|f| near(f.value))
                    || line.iter().take(40).any(|a| {
                        line.iter().take(40).any(|b| {
                            b.value > 0.0 && a.value <= b.value && near(100.0 * a.value / b.value)
                        })
                    })
            })
        }
        Unit::Size(power) => {
            let answers = [1024f64, 1000f64].map(|base| {
                let unit = base.powi(power);
                let bytes = figure.value * unit;
                (
                    bytes,
                    0.5 * 10f64.powi(-figure.decimals) * unit + 0.02 * bytes + 1e-9,
                )
            });
            lines().flatten().any(|f| {
                let powers: &[i32] = match f.unit {
                    Unit::Size(p) => &[p][..],
                    Unit::Plain => &[0, 1, 2, 3],
                    Unit::Percent => &[],
                };
                powers.iter().any(|&p| {
                    [1024f64, 1000f64].iter().any(|base| {
                        let bytes = f.value * base.powi(p);
                        answers
                            .iter()
                            .any(|(want, tol)| (bytes - want).abs() <= *tol)
                    })
                })
            })
        }
        Unit::Plain => true,
    }
}

/// The unit a suffix names; single letters only when `loose` (output) or upper case.
fn unit(suffix: &str, attached: bool, loose: bool) -> Option<Unit> {
    let lower = suffix.to_lowercase();
    if lower == "%" || lower == "percent" {
        return Some(Unit::Percent);
    }
    let single = lower.len() == 1;
    if single && !(loose || (attached && suffix.chars().all(|c| c.is_ascii_uppercase()))) {
        return None;
    }
    let power = match lower.as_str() {
        "b" | "byte" | "bytes" => 0,
        "k" | "kb" | "kib" | "ki" => 1,
        "m" | "mb" | "mib" | "mi" => 2,
        "g" | "gb" | "gib" | "gi" => 3,
        "t" | "tb" | "tib" | "ti" => 4,
        _ => return None,
    };
    Some(Unit::Size(power))
}

/// Numbers of `text` with their units. `loose` accepts single-letter units anywhere.
fn figures(text: &str, loose: bool) -> Vec<Figure> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || "(),[]{}\"'=:;/|<>*".contains(c))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, raw) in words.iter().enumerate() {
        let word = raw.trim_end_matches(['.', '!', '?']);
        let digits = word
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(word.len());
        let (number, suffix) = word.split_at(digits);
        if number.is_empty() || !number.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let Ok(value) = number.parse::<f64>() else {
            continue;
        };
        let decimals = number
            .split_once('.')
            .map_or(0, |(_, d)| i32::try_from(d.len()).unwrap_or(0));
        let unit = if suffix.is_empty() {
            words
                .get(i + 1)
                .and_then(|next| unit(next.trim_end_matches(['.', ',']), false, loose))
                .unwrap_or(Unit::Plain)
        } else if suffix.starts_with(|c: char| c.is_alphabetic() || c == '%') {
            unit(suffix, true, loose).unwrap_or(Unit::Plain)
        } else {
            continue;
        };
        out.push(Figure {
            value,
            decimals,
            unit,
        });
    }
    out
}
