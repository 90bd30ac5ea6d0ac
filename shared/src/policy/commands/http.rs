//! HTTP clients: curl and wget are reads only for GET/HEAD to standard output.

use super::super::args::Spec;
use super::super::types::Risk;
use super::super::verdict::Verdict;
use super::Cmd;

/// curl is a read only for GET/HEAD to standard output over http(s) or file.
pub(super) fn curl(cmd: &Cmd<'_>) -> Verdict {
    const VALUE_SHORT: &str = "XdFTHouAebcDKEmrwxyYzCUQtP";
    const WRITES_LONG: &[&str] = &[
        "data",
        "data-raw",
        "data-binary",
        "data-urlencode",
        "data-ascii",
        "json",
        "form",
        "form-string",
        "upload-file",
        "output",
        "remote-name",
        "remote-name-all",
        "output-dir",
        "cookie-jar",
        "dump-header",
        "trace",
        "trace-ascii",
        "stderr",
        "config",
        "libcurl",
        "etag-save",
        "hsts",
        "alt-svc",
        "create-dirs",
        "ftp-create-dirs",
        "mail-from",
        "mail-rcpt",
        "quote",
        "post301",
        "post302",
        "post303",
        "remote-header-name",
        "upload-flags",
        "ssl-sessions",
    ];
    const LONG_VALUES: &[&str] = &[
        "data",
        "data-raw",
        "data-binary",
        "data-urlencode",
        "data-ascii",
        "json",
        "form",
        "form-string",
        "upload-file",
        "output",
        "output-dir",
        "cookie-jar",
        "dump-header",
        "trace",
        "trace-ascii",
        "stderr",
        "config",
        "libcurl",
        "etag-save",
        "hsts",
        "alt-svc",
        "request",
        "header",
        "user",
        "user-agent",
        "referer",
        "cookie",
        "max-time",
        "connect-timeout",
        "retry",
        "cacert",
        "cert",
        "key",
        "resolve",
        "connect-to",
        "proxy",
        "unix-socket",
        "write-out",
        "url",
        "interface",
        "limit-rate",
        "max-filesize",
        "range",
        "mail-from",
        "mail-rcpt",
        "quote",
        "retry-delay",
        "retry-max-time",
        "expect100-timeout",
        "keepalive-time",
        "etag-compare",
        "variable",
        "pinnedpubkey",
        "capath",
        "ciphers",
        "dns-servers",
        "aws-sigv4",
        "oauth2-bearer",
        "noproxy",
        "proxy-user",
        "socks5",
        "socks5-hostname",
        "abstract-unix-socket",
        "request-target",
        "ssl-sessions",
    ];
    let p = cmd.parse(Spec {
        short_values: VALUE_SHORT,
        long_values: LONG_VALUES,
        ..Spec::default()
    });
    if p.dynamic {
        return cmd.dynamic_write();
    }
    let get = p.flag('G', "get");
    for (c, why) in [
        ('d', "sends a request body"),
        ('F', "posts a form"),
        ('T', "uploads a file"),
        ('o', "writes a file"),
        ('O', "writes a file"),
        ('c', "writes a cookie jar"),
        ('K', "reads options from a config file"),
        ('J', "writes a file"),
        ('Q', "sends raw FTP commands"),
    ] {
        if p.short(c) {
            let allowed = (matches!(c, 'o')
                && p.value(Some('o'), "output")
                    .is_some_and(|v| v == "/dev/null" || v == "-"))
                || (c == 'd' && get);
            if !allowed {
                return Verdict::write(Risk::Medium, format!("curl -{c} {why}"));
            }
        }
    }
    if p.short('D')
        && p.value(Some('D'), "dump-header")
            .is_some_and(|v| v != "-" && v != "/dev/null" && v != "/dev/stdout")
    {
        return Verdict::write(Risk::Medium, "curl -D writes headers to a file");
    }
    for w in WRITES_LONG {
        if p.long(w) {
            if get && w.starts_with("data") {
                continue;
            }
            let to_null = matches!(
                *w,
                "output" | "dump-header" | "trace" | "trace-ascii" | "stderr"
            ) && p
                .value(None, w)
                .is_some_and(|v| matches!(v, "/dev/null" | "-" | "/dev/stdout" | "/dev/stderr"));
            if !to_null {
                return Verdict::write(
                    Risk::Medium,
                    format!("curl --{w} sends data or writes a file"),
                );
            }
        }
    }
    if p.value(Some('w'), "write-out")
        .is_some_and(|w| w.contains("%output{"))
    {
        return Verdict::write(Risk::Medium, "curl -w %output{FILE} writes a file");
    }
    if let Some(method) = p.value(Some('X'), "request") {
        let m = method.to_ascii_uppercase();
        if !matches!(m.as_str(), "GET" | "HEAD" | "OPTIONS") {
            return Verdict::write(Risk::Medium, format!("curl -X {m} changes remote state"));
        }
    }
    if p.opts.iter().any(|o| matches!(o, super::super::args::Opt::Short('H', Some(h)) | super::super::args::Opt::Long(_, Some(h)) if h.to_ascii_lowercase().contains("method-override") || h.to_ascii_lowercase().starts_with("x-http-method"))) {
        return Verdict::write(Risk::Medium, "curl sends a method-override header");
    }
    let mut urls: Vec<&str> = p.positionals.iter().filter_map(|w| w.fixed()).collect();
    if let Some(u) = p.value(None, "url") {
        urls.push(u);
    }
    for url in &urls {
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
