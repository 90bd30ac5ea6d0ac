//! Unit tests per phase of the classification contract.

use super::{Intent, Risk, UnboundedCategory, classify};

fn read(cmd: &str) {
    let c = classify(cmd);
    assert!(c.allowed_as_read(), "expected read: {cmd:?} → {c:?}");
}

fn write(cmd: &str) {
    let c = classify(cmd);
    assert_eq!(
        c.intent,
        Intent::WriteOrUnknown,
        "expected write: {cmd:?} → {c:?}"
    );
}

fn reason(cmd: &str, needle: &str) {
    let c = classify(cmd);
    assert!(
        c.reasons.iter().any(|r| r.contains(needle)),
        "{cmd:?}: no reason containing {needle:?} in {:?}",
        c.reasons
    );
}

#[test]
fn phase1_parse_errors_and_unknown_syntax_are_writes() {
    for cmd in [
        "cat 'unterminated",
        "ls )",
        "if true; then",
        "ls <<<",
        "case x in a) ls;; esac",
        "while true; do ls; done",
        "for ((i=0;;i++)); do ls; done",
    ] {
        write(cmd);
    }
    reason("cat 'x", "syntax");
}

#[test]
fn phase1_guards() {
    reason("sudo -u postgres psql -c 'SELECT 1'", "sudo");
    reason("echo hi > /etc/motd", "output redirection to /etc/motd");
    reason("ls >> /tmp/out", "output redirection to /tmp/out");
    reason("ls &> /tmp/out", "output redirection");
    reason("echo $(id)", "command substitution");
    reason("cat <(ls)", "process substitution");
    reason("eval ls", "eval");
    reason("source ~/.bashrc", "source");
    reason("X=1 ls", "assignment");
    reason("export X=1", "environment");
    reason("f() { ls; }; f", "function");
    reason("ls & rm x", "background");
    reason("bash <<EOF\nls\nEOF", "here-document feeds a shell");
    reason("cat < /dev/tcp/10.0.0.1/80", "/dev/tcp");
    assert_eq!(classify("echo hi > /etc/motd").risk, Risk::High);
}

#[test]
fn phase1_harmless_redirections_are_allowed() {
    read("ls >/dev/null 2>&1");
    read("grep -r x /etc 2>/dev/null");
    read("echo done >&2");
    read("wc -l < /etc/passwd");
    read("grep root <<< 'root:x:0'");
}

#[test]
fn phase2_known_write_patterns() {
    reason("find /srv -name '*.tmp' -delete", "find -delete");
    reason("sed -i 's/a/b/' f", "sed -i");
    reason("sort -o out in", "sort -o");
    reason("git log --output=/tmp/x", "git log");
    reason("sysctl kernel.panic=1", "sysctl kernel.panic=1");
    reason("hostname evil", "hostname evil");
    reason("dmesg -c", "dmesg -c");
    reason("curl -o /tmp/x http://a", "curl -o");
    reason("systemctl restart nginx", "systemctl restart");
    reason("rm -rf /var/lib/x", "rm");
    assert_eq!(classify("rm -rf /etc/nginx").risk, Risk::High);
}

#[test]
fn phase3_read_only_by_construction() {
    for cmd in [
        "systemctl status nginx",
        "zpool status",
        "mount",
        "cat /etc/hosts",
        "docker ps",
        "kubectl get pods -A",
        "ip -br a",
        "ss -tlnp",
        "journalctl -u ssh -n 50 --no-pager",
        "uptime; who",
        "free -h && swapon --show",
    ] {
        read(cmd);
        assert_eq!(classify(cmd).intent, Intent::ReadOnlyCertain, "{cmd}");
    }
}

#[test]
fn phase4_content_inspection() {
    let c = classify("sqlite3 -readonly /var/lib/db.sqlite \"SELECT COUNT(*) FROM t\"");
    assert_eq!(c.intent, Intent::ReadOnlyConditional);
    read("psql -c 'SELECT 1' -c 'SELECT 2'");
    read("mysql -e 'SHOW PROCESSLIST'");
    read("redis-cli -n 0 DBSIZE");
    read("curl -fsS http://127.0.0.1:8096/health");
    write("psql -c 'SELECT 1' -c 'TRUNCATE audit'");
    write("psql -c 'EXPLAIN ANALYZE SELECT 1'");
    write("sqlite3 db .shell");
    write("sqlite3 db \".output /tmp/x\"");
    write("redis-cli FLUSHALL");
    write("curl -X DELETE http://a/b");
    write("curl --data-binary @f http://a");
    write("wget http://a/tool.tar.gz");
    reason(
        "psql -c 'SELECT pg_terminate_backend(1)'",
        "pg_terminate_backend",
    );
}

#[test]
fn phase5_fallback_is_write() {
    reason("frobnicate --status", "not a known read-only command");
    reason("/opt/tools/cat /etc/hosts", "by path");
    write("./deploy.sh");
    read("/usr/bin/cat /etc/hosts");
}

#[test]
fn boundedness_and_rewrites() {
    let cases = [
        (
            "journalctl -f",
            UnboundedCategory::Stream,
            Some("journalctl -n 200 --since \"10 min ago\""),
        ),
        (
            "docker logs -f x",
            UnboundedCategory::Stream,
            Some("docker logs --tail=200 x"),
        ),
        (
            "tail -f /var/log/syslog",
            UnboundedCategory::Stream,
            Some("tail -n 200 /var/log/syslog"),
        ),
        (
            "kubectl logs -f web",
            UnboundedCategory::Stream,
            Some("kubectl logs --tail=200 --since=10m web"),
        ),
        ("top", UnboundedCategory::Stream, Some("top -b -n 1")),
        (
            "ping 10.0.0.1",
            UnboundedCategory::Stream,
            Some("ping -c 4 10.0.0.1"),
        ),
        (
            "docker stats",
            UnboundedCategory::Stream,
            Some("docker stats --no-stream"),
        ),
        (
            "watch -n 2 'zpool status'",
            UnboundedCategory::Stream,
            Some("zpool status"),
        ),
        (
            "less /etc/hosts",
            UnboundedCategory::Pager,
            Some("cat /etc/hosts"),
        ),
        ("mysql -u root", UnboundedCategory::Repl, None),
        (
            "docker exec -it web cat /etc/hosts",
            UnboundedCategory::Tty,
            Some("docker exec web cat /etc/hosts"),
        ),
        (
            "uptime && tail -f /var/log/syslog",
            UnboundedCategory::Stream,
            Some("uptime && tail -n 200 /var/log/syslog"),
        ),
    ];
    for (cmd, category, rewrite) in cases {
        let c = classify(cmd);
        assert_eq!(c.category(), Some(category), "{cmd}: {c:?}");
        assert_eq!(c.rewrite(), rewrite, "{cmd}");
        assert!(!c.allowed_as_read(), "{cmd}");
        if let Some(r) = rewrite {
            assert!(
                classify(r).allowed_as_read(),
                "rewrite of {cmd} is not a bounded read: {r}"
            );
        }
    }
    read("timeout 10 tail -f /var/log/syslog");
    read("yes | head -n 3");
    assert!(!classify("timeout 0 tail -f x").boundedness.is_bounded());
}

#[test]
fn classification_serializes() {
    let json = serde_json::to_value(classify("tail -f x")).expect("serialize");
    assert_eq!(json["intent"], "read_only_certain");
    assert_eq!(json["risk"], "read_only");
    assert_eq!(json["boundedness"]["kind"], "unbounded");
    assert_eq!(json["boundedness"]["category"], "stream");
}

#[test]
fn deterministic() {
    for cmd in ["ls -la", "rm x", "tail -f y", "psql -c 'SELECT 1'"] {
        assert_eq!(classify(cmd), classify(cmd));
    }
}

#[test]
fn characters_that_crash_the_parser_are_refused_before_parsing() {
    for cmd in [
        "{\u{109168}",
        "ls {\u{4221f}",
        "echo \u{7}",
        "ls\u{1b}[2J",
        "ls\u{0}rm",
    ] {
        let c = classify(cmd);
        assert_eq!(c.intent, Intent::WriteOrUnknown, "{cmd:?}");
        assert!(c.reasons[0].contains("U+"), "{:?}", c.reasons);
    }
    read("echo 'caf\u{e9} \u{1f600}'");
}

#[test]
fn git_listing_flags_do_not_hide_modifying_flags() {
    for cmd in [
        "git branch -d old --list",
        "git branch -D x -a",
        "git tag -d v1 -l",
        "git tag -a v2 -m x --list",
        "git config --unset x --get y",
        "git config user.name evil",
        "git branch new-branch",
    ] {
        write(cmd);
    }
    for cmd in [
        "git branch -a",
        "git branch --list 'feat*'",
        "git tag -l 'v1.*'",
        "git config --get user.email",
        "git config -l",
        "git branch --contains HEAD",
    ] {
        read(cmd);
    }
}

/// Every pure reader is one: no family rule (with its table) shadows an entry of
/// `PURE_READERS`, so the list holds only tools that are judged by it.
#[test]
fn pure_readers_are_not_shadowed_by_a_rule() {
    for name in super::commands::catalog::PURE_READERS {
        // `test` and `[` are judged by the shell layer's own parser (test_expr.rs).
        if matches!(*name, "[" | "test") {
            continue;
        }
        let cmd = format!("{name} --an-option-no-tool-has");
        let c = classify(&cmd);
        assert!(
            c.allowed_as_read() && c.reasons.iter().any(|r| r.ends_with("only reads")),
            "{name} is in PURE_READERS but a rule judges it: {c:?}"
        );
    }
}
