//! HTTP clients: curl and wget are reads only for GET/HEAD to standard output.

use super::super::args::Spec;
use super::super::types::Risk;
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::judge;

/// curl is a read only for GET/HEAD to standard output over http(s) or file. Its options
/// are `rules/curl.toml`; each request after `--next` is judged with its own options.
pub(super) fn curl(cmd: &Cmd<'_>) -> Verdict {
    let w = match cmd.walk("curl") {
        Ok(w) => w,
        Err(v) => return v,
    };
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

/// wget is a read only when it writes the page to standard output.
pub(super) fn wget(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "OoaPeiBtTwUYQlADRIXH",
        long_values: &[
            "output-document",
            "output-file",
            "rejected-log",
            "hsts-file",
            "use-askpass",
            "config",
            "append-output",
            "directory-prefix",
            "post-data",
            "post-file",
            "body-data",
            "body-file",
            "method",
            "header",
            "user-agent",
            "execute",
            "input-file",
            "tries",
            "timeout",
            "user",
            "password",
            "level",
            "accept",
            "reject",
            "domains",
            "load-cookies",
            "save-cookies",
            "ca-certificate",
            "certificate",
            "private-key",
        ],
        ..Spec::default()
    });
    if p.dynamic {
        return cmd.dynamic_write();
    }
    for w in [
        "post-data",
        "post-file",
        "body-data",
        "body-file",
        "save-cookies",
        "execute",
        "input-file",
        "warc-file",
        "save-headers",
        "backups",
        "rejected-log",
        "hsts-file",
        "use-askpass",
        "config",
    ] {
        if p.long(w) {
            return Verdict::write(
                Risk::Medium,
                format!("wget --{w} sends data or writes files"),
            );
        }
    }
    if p.flag('r', "recursive") || p.flag('m', "mirror") {
        return Verdict::write(
            Risk::Medium,
            "wget -r saves pages to follow their links, even with --spider",
        );
    }
    if p.short('e') || p.short('i') {
        return Verdict::write(Risk::Medium, "wget -e/-i runs commands or reads a URL list");
    }
    if let Some(m) = p.value(None, "method")
        && !matches!(m.to_ascii_uppercase().as_str(), "GET" | "HEAD")
    {
        return Verdict::write(
            Risk::Medium,
            format!("wget --method {m} changes remote state"),
        );
    }
    if p.flag('o', "output-file") || p.flag('a', "append-output") {
        return Verdict::write(Risk::Low, "wget -o writes a log file");
    }
    if p.long("spider") {
        return Verdict::read("wget --spider only checks");
    }
    match p.value(Some('O'), "output-document") {
        Some("-" | "/dev/null" | "/dev/stdout") => {
            Verdict::read("wget -O - writes to standard output only")
        }
        Some(f) => Verdict::write(Risk::Medium, format!("wget -O writes {f}")),
        None => Verdict::write(Risk::Medium, "wget saves the download to a file"),
    }
}
