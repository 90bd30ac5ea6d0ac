//! HTTP clients: curl and wget are reads only for GET/HEAD to standard output.

use super::super::types::Risk;
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::judge;

/// curl is a read only for GET/HEAD to standard output over http(s) or file. Its options
/// are `rules/curl.toml`; each request after `--next` is judged with its own options.
pub(super) fn curl(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "curl");
    let v = judge("curl", &w);
    if v.is_write() {
        return v;
    }
    if w.all("write-out")
        .any(|o| o.fixed().is_none_or(|f| f.contains("%output{")))
    {
        return Verdict::write(Risk::Medium, "curl -w %output{FILE} writes a file");
    }
    let overrides = |h: &str| {
        let h = h.to_ascii_lowercase();
        h.contains("method-override") || h.starts_with("x-http-method")
    };
    if w.all("header")
        .chain(w.all("proxy-header"))
        .any(|o| o.fixed().is_none_or(overrides))
    {
        return Verdict::write(Risk::Medium, "curl sends a method-override header");
    }
    let urls = w
        .operands
        .iter()
        .map(|(_, u)| u.fixed())
        .chain(w.all("url").map(|o| o.fixed()));
    for url in urls {
        let Some(url) = url else {
            continue;
        };
        let lower = url.to_ascii_lowercase();
        if let Some((scheme, _)) = lower.split_once("://")
            && !matches!(scheme, "http" | "https" | "file")
        {
            return Verdict::write(
                Risk::High,
                format!("curl {scheme}:// can send arbitrary commands to a service"),
            );
        }
    }
    Verdict::read("curl GET to standard output only reads")
}

/// wget is a read only when it writes the page to standard output (or only checks it):
/// `rules/wget.toml` declares every option and what it writes.
pub(super) fn wget(cmd: &Cmd<'_>) -> Verdict {
    cmd.by_table("wget")
}
