//! Direct mode: a chat message that starts with `/` runs one tool without the model,
//! through the same gates and approvals. The forms:
//!
//! - `/query search TEXT`, `/query get @R`, `/query list [KIND]`, `/query topology [@R]`,
//!   `/query health`
//! - `/read @R COMMAND…` (`read exec`), `/read file @R PATH`, `/read tail @R PATH [LINES]`,
//!   `/read logs @R [UNIT]`
//! - `/control @R start|stop|restart|reload SERVICE` (`control service`),
//!   `/control @R start|stop|shutdown|reboot` (`control guest`), `/control @R COMMAND…`
//! - `/docker list|inspect|logs @R`, `/docker start|stop|restart @R`
//! - `/file @R PATH` (`file_edit read`), `/metrics @R`, `/knowledge [QUERY]`
//!
//! `@R` is a resource id, name or alias; the mention counts as the user's explicit choice.

use serde_json::{Value, json};

/// A parsed direct command: the tool, its arguments, and the resource the user named.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectCall {
    pub tool: String,
    pub arguments: Value,
    pub mention: Option<String>,
}

/// The usage text of direct mode.
pub const USAGE: &str = "Direct mode runs one tool without the model: /query search TEXT | /query get @R | \
/query list [KIND] | /query topology [@R] | /query health | /read @R COMMAND | /read file @R PATH | \
/read tail @R PATH [LINES] | /read logs @R [UNIT] | /control @R COMMAND | /control @R restart SERVICE | \
/control @R reboot | /docker list|inspect|logs|start|stop|restart @R | /file @R PATH | /metrics @R | \
/knowledge [QUERY]";

/// Parses a message that starts with `/`; an error is a sentence for the user.
pub fn parse(message: &str) -> Result<DirectCall, String> {
    let text = message.trim();
    let body = text.strip_prefix('/').ok_or_else(|| USAGE.to_owned())?;
    let (tool, rest) = split_word(body);
    let call = |tool: &str, arguments: Value, mention: Option<&str>| DirectCall {
        tool: tool.into(),
        arguments,
        mention: mention.map(str::to_owned),
    };
    match tool {
        "query" => {
            let (action, rest) = split_word(rest);
            match action {
                "search" if !rest.is_empty() => Ok(call(
                    "query",
                    json!({"action": "search", "query": rest}),
                    None,
                )),
                "get" => {
                    let (r, _) = mention(rest)?;
                    Ok(call(
                        "query",
                        json!({"action": "get", "resource_id": r}),
                        Some(r),
                    ))
                }
                "list" if rest.is_empty() => Ok(call("query", json!({"action": "list"}), None)),
                "list" => Ok(call("query", json!({"action": "list", "kind": rest}), None)),
                "topology" if rest.is_empty() => {
                    Ok(call("query", json!({"action": "topology"}), None))
                }
                "topology" => {
                    let (r, _) = mention(rest)?;
                    Ok(call(
                        "query",
                        json!({"action": "topology", "resource_id": r}),
                        Some(r),
                    ))
                }
                "health" => Ok(call("query", json!({"action": "health"}), None)),
                _ => Err(USAGE.into()),
            }
        }
        "read" => {
            let (action, after) = split_word(rest);
            match action {
                "file" | "tail" | "logs" => {
                    let (r, arg) = mention(after)?;
                    let args = match action {
                        "file" => {
                            json!({"action": "file", "resource_id": r, "path": required(arg)?})
                        }
                        "tail" => {
                            let (path, lines) = split_word(arg);
                            let mut args = json!({"action": "tail", "resource_id": r, "path": required(path)?});
                            if !lines.is_empty() {
                                args["lines"] =
                                    json!(lines.parse::<u32>().map_err(|_| format!(
                                        "{lines:?} is not a number of lines"
                                    ))?);
                            }
                            args
                        }
                        _ if arg.is_empty() => json!({"action": "logs", "resource_id": r}),
                        _ => json!({"action": "logs", "resource_id": r, "unit": arg}),
                    };
                    Ok(call("read", args, Some(r)))
                }
                _ => {
                    let (r, command) = mention(rest)?;
                    Ok(call(
                        "read",
                        json!({"action": "exec", "resource_id": r, "command": required(command)?}),
                        Some(r),
                    ))
                }
            }
        }
        "control" => {
            let (r, rest) = mention(rest)?;
            let words: Vec<&str> = rest.split_whitespace().collect();
            let args = match words.as_slice() {
                [op @ ("start" | "stop" | "restart" | "reload"), service] => {
                    json!({"action": "service", "resource_id": r, "service": service, "operation": op})
                }
                [op @ ("start" | "stop" | "shutdown" | "reboot")] => {
                    json!({"action": "guest", "resource_id": r, "operation": op})
                }
                _ => json!({"action": "command", "resource_id": r, "command": required(rest)?}),
            };
            Ok(call("control", args, Some(r)))
        }
        "docker" => {
            let (action, rest) = split_word(rest);
            let (r, rest) = mention(rest)?;
            let args = match action {
                "list" | "inspect" | "logs" => json!({"action": action, "resource_id": r}),
                "start" | "stop" | "restart" => {
                    json!({"action": "control", "resource_id": r, "operation": action})
                }
                _ => return Err(USAGE.into()),
            };
            if !rest.is_empty() {
                return Err(format!("unexpected {rest:?} after the resource"));
            }
            Ok(call("docker", args, Some(r)))
        }
        "file" => {
            let (r, path) = mention(rest)?;
            Ok(call(
                "file_edit",
                json!({"action": "read", "resource_id": r, "path": required(path)?}),
                Some(r),
            ))
        }
        "metrics" => {
            let (r, _) = mention(rest)?;
            Ok(call(
                "metrics",
                json!({"action": "resource", "resource_id": r}),
                Some(r),
            ))
        }
        "knowledge" if rest.is_empty() => Ok(call("knowledge", json!({"action": "recall"}), None)),
        "knowledge" => Ok(call(
            "knowledge",
            json!({"action": "recall", "query": rest}),
            None,
        )),
        _ => Err(USAGE.into()),
    }
}

fn split_word(text: &str) -> (&str, &str) {
    let text = text.trim_start();
    match text.find(char::is_whitespace) {
        Some(at) => (&text[..at], text[at..].trim()),
        None => (text, ""),
    }
}

/// `@R rest` (the `@` is optional) → `(R, rest)`.
fn mention(text: &str) -> Result<(&str, &str), String> {
    let (word, rest) = split_word(text);
    let name = word.strip_prefix('@').unwrap_or(word);
    if name.is_empty() {
        return Err(format!("name a resource with @NAME. {USAGE}"));
    }
    Ok((name, rest))
}

fn required(text: &str) -> Result<&str, String> {
    if text.trim().is_empty() {
        Err(format!("something is missing. {USAGE}"))
    } else {
        Ok(text.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_forms_parse() {
        let read = parse("/read @jellyfin tail -n 50 /config/log/log.txt").unwrap();
        assert_eq!(read.tool, "read");
        assert_eq!(
            read.arguments,
            json!({"action": "exec", "resource_id": "jellyfin", "command": "tail -n 50 /config/log/log.txt"})
        );
        assert_eq!(read.mention.as_deref(), Some("jellyfin"));
        let control = parse("/control @homepage-docker restart nginx").unwrap();
        assert_eq!(
            control.arguments,
            json!({"action": "service", "resource_id": "homepage-docker", "service": "nginx", "operation": "restart"})
        );
        let search = parse("/query search jellyfin").unwrap();
        assert_eq!(
            search.arguments,
            json!({"action": "search", "query": "jellyfin"})
        );
        assert_eq!(
            parse("/control @x docker compose up -d").unwrap().arguments["action"],
            "command"
        );
        assert_eq!(
            parse("/docker restart @web").unwrap().arguments,
            json!({"action": "control", "resource_id": "web", "operation": "restart"})
        );
        assert_eq!(
            parse("/read tail @h /var/log/syslog 20").unwrap().arguments["lines"],
            20
        );
    }

    #[test]
    fn bad_forms_say_how() {
        for bad in [
            "/",
            "/nope",
            "/read",
            "/read @x",
            "/query search",
            "/docker frob @x",
            "/read tail @h /f many",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
