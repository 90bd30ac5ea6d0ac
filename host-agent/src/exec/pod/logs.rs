//! `kubectl logs …` payloads served as pod-logs API calls instead of running in the pod
//! (docs/inventory.md). Only plain words are understood: a payload with quotes, escapes or
//! shell metacharacters is not a logs call and runs in the pod like any other command.

use crate::exec::ExecError;
use crate::kube_api::LogParams;

/// Lines returned when the call names neither `--tail` nor `--since`.
pub const DEFAULT_TAIL: i64 = 200;

/// Characters that make a payload more than plain words.
const SHELL_CHARS: &[char] = &[
    '\'', '"', '\\', '$', '`', ';', '|', '&', '<', '>', '(', ')', '{', '}', '*', '?', '[', ']',
    '~', '#', '!', '\n', '\r',
];

/// A `kubectl logs` call, checked against the target pod.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogsCall {
    pub container: Option<String>,
    pub tail_lines: Option<i64>,
    pub since_seconds: Option<i64>,
    pub previous: bool,
    pub timestamps: bool,
}

impl LogsCall {
    /// The API parameters, with [`DEFAULT_TAIL`] when neither tail nor since was given (a
    /// negative tail is every line, as for kubectl) and at most `limit_bytes` bytes.
    pub fn params(&self, limit_bytes: u64) -> LogParams {
        let tail_lines = match (self.tail_lines, self.since_seconds) {
            (None, None) => Some(DEFAULT_TAIL),
            (Some(n), _) if n < 0 => None,
            (tail, _) => tail,
        };
        LogParams {
            container: self.container.clone(),
            tail_lines,
            since_seconds: self.since_seconds,
            previous: self.previous,
            timestamps: self.timestamps,
            limit_bytes: i64::try_from(limit_bytes).ok(),
        }
    }
}

/// A duration like `10s`, `5m`, `2h`, `1d` or `1h30m`, in seconds (more than zero).
pub fn parse_duration(text: &str) -> Option<i64> {
    let mut total: i64 = 0;
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit: i64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return None,
        };
        let n: i64 = digits.parse().ok()?;
        digits.clear();
        total = total.checked_add(n.checked_mul(unit)?)?;
    }
    (digits.is_empty() && total > 0).then_some(total)
}

/// Read a `kubectl logs` payload for the pod `namespace/pod` whose default container is
/// `container` (empty: the pod's default). `None`: not a logs call; `Some(Err)`: a logs
/// call that this target cannot serve, with the reason.
pub fn parse(
    command: &str,
    namespace: &str,
    pod: &str,
    container: &str,
) -> Option<Result<LogsCall, ExecError>> {
    if command.contains(SHELL_CHARS) {
        return None;
    }
    let mut words = command.split_whitespace();
    if (words.next(), words.next()) != (Some("kubectl"), Some("logs")) {
        return None;
    }
    Some(parse_args(words, namespace, pod, container))
}

fn parse_args<'a>(
    mut words: impl Iterator<Item = &'a str>,
    namespace: &str,
    pod: &str,
    container: &str,
) -> Result<LogsCall, ExecError> {
    let mut call = LogsCall {
        container: (!container.is_empty()).then(|| container.to_owned()),
        ..LogsCall::default()
    };
    let mut named_pod = false;
    while let Some(word) = words.next() {
        let (flag, inline) = match word.split_once('=') {
            Some((f, v)) if f.starts_with('-') => (f, Some(v)),
            _ => (word, None),
        };
        let mut value = |name: &str| {
            inline
                .map(str::to_owned)
                .or_else(|| words.next().map(str::to_owned))
                .ok_or_else(|| {
                    ExecError::Unsupported(format!("kubectl logs: {name} needs a value"))
                })
        };
        match flag {
            "-c" | "--container" => call.container = Some(value(flag)?),
            "-n" | "--namespace" => {
                let ns = value(flag)?;
                if ns != namespace {
                    return Err(ExecError::Unsupported(format!(
                        "kubectl logs names namespace {ns:?}, but the target pod is in {namespace:?}"
                    )));
                }
            }
            "--tail" => {
                let n: i64 = value(flag)?.parse().map_err(|_| {
                    ExecError::Unsupported("kubectl logs: --tail needs a number".to_owned())
                })?;
                call.tail_lines = Some(n);
            }
            "--since" => {
                let text = value(flag)?;
                call.since_seconds = Some(parse_duration(&text).ok_or_else(|| {
                    ExecError::Unsupported(format!(
                        "kubectl logs: --since {text:?} is not a duration like 10s, 5m, 2h or 1d"
                    ))
                })?);
            }
            "-p" | "--previous" => call.previous = inline.is_none_or(|v| v == "true"),
            "--timestamps" => call.timestamps = inline.is_none_or(|v| v == "true"),
            f if f.starts_with('-') => {
                return Err(ExecError::Unsupported(format!(
                    "kubectl logs: option {f} is not supported here"
                )));
            }
            name => {
                let name = name.strip_prefix("pod/").unwrap_or(name);
                if named_pod || name != pod {
                    return Err(ExecError::Unsupported(format!(
                        "kubectl logs names pod {name:?}, but the target is pod {namespace}/{pod}"
                    )));
                }
                named_pod = true;
            }
        }
    }
    Ok(call)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(command: &str) -> LogsCall {
        match parse(command, "media", "web-0", "server") {
            Some(Ok(call)) => call,
            other => panic!("{command}: {other:?}"),
        }
    }

    #[test]
    fn logs_calls_are_parsed_with_their_options() {
        let call = ok("kubectl logs web-0 -c sidecar --tail 50 --since=5m -p -n media");
        assert_eq!(call.container.as_deref(), Some("sidecar"));
        assert_eq!(
            (call.tail_lines, call.since_seconds, call.previous),
            (Some(50), Some(300), true)
        );
        let plain = ok("kubectl   logs");
        assert_eq!(plain.container.as_deref(), Some("server"));
        assert_eq!(plain.params(100).tail_lines, Some(DEFAULT_TAIL));
        assert_eq!(plain.params(100).limit_bytes, Some(100));
        let since = ok("kubectl logs pod/web-0 --since 2h --container=x --namespace=media");
        assert_eq!(since.params(1).tail_lines, None);
        assert_eq!(since.params(1).since_seconds, Some(7200));
        assert_eq!(ok("kubectl logs --tail=-1").params(1).tail_lines, None);
    }

    #[test]
    fn other_payloads_are_not_logs_calls_and_mismatches_are_refused() {
        for other in [
            "ls -l",
            "kubectl get pods",
            "kubectl logs web-0 | grep x",
            "kubectl logs 'web-0'",
            "",
        ] {
            assert_eq!(parse(other, "media", "web-0", "server"), None, "{other}");
        }
        for bad in [
            "kubectl logs other",
            "kubectl logs web-0 web-0",
            "kubectl logs -n kube-system",
            "kubectl logs --tail",
            "kubectl logs --tail x",
            "kubectl logs --since 5y",
            "kubectl logs -f",
        ] {
            assert!(
                matches!(parse(bad, "media", "web-0", "server"), Some(Err(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Some(10));
        assert_eq!(parse_duration("1h30m"), Some(5400));
        assert_eq!(parse_duration("1d"), Some(86_400));
        for bad in ["", "10", "0s", "s", "5y", "99999999999999999999d"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
