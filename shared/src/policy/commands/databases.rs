//! Database clients: sqlite3, psql, mysql/mariadb, mysqladmin, pg_dump, redis-cli.
//! Their SQL or commands are inspected; a bare client is an interactive shell.

use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::sql::{Flavor, sql_writes};
use super::{Cmd, redis};
use crate::policy::options::{self, Class, judge};

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "sqlite3" | "sqlite" => sqlite(cmd),
        "psql" => psql(cmd),
        "mysql" | "mariadb" => mysql(cmd),
        "mysqladmin" | "mariadb-admin" => mysqladmin(cmd),
        // The dump goes to standard output unless -f names a file (their tables).
        "pg_dump" | "pg_dumpall" => {
            let v = cmd.by_table(cmd.name);
            if v.is_write() {
                v
            } else {
                Verdict::read(format!("{} writes the dump to standard output", cmd.name))
            }
        }
        "redis-cli" | "valkey-cli" | "keydb-cli" => redis::redis_cli(cmd),
        _ => return None,
    };
    Some(v)
}

/// mysqladmin: `rules/mysqladmin.toml` checks every option and finds the first command;
/// every further operand is another command, each a read named in full.
fn mysqladmin(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "mysqladmin");
    let v = judge(cmd.name, &w);
    if v.is_write() {
        return v;
    }
    if w.path.is_empty() && !(w.has("version") || w.has("help") || w.has("print-defaults")) {
        return Verdict::unknown(format!("{}: no command", cmd.name));
    }
    let Some(Ok(table)) = options::table("mysqladmin") else {
        return Verdict::unknown("mysqladmin: no option table");
    };
    for (_, o) in &w.operands {
        let read = o
            .fixed()
            .and_then(|t| table.root.subs.get(t))
            .is_some_and(|n| n.class == Class::Read);
        if !read {
            return Verdict::write(
                Risk::High,
                format!("{} {} changes the server", cmd.name, o.src),
            );
        }
    }
    v
}

fn inspected(sql: &[&str], flavor: Flavor, client: &str) -> Verdict {
    for s in sql {
        if let Some(why) = sql_writes(s, flavor) {
            return Verdict::write(Risk::High, format!("{client}: {why}"));
        }
    }
    Verdict::conditional(format!("{client} runs only read-only SQL"))
}

/// sqlite3: `rules/sqlite3.toml` checks every option; each `-cmd` text and each SQL
/// operand is inspected. A read opens the database read-only (`-readonly`, a
/// `file:…?mode=ro` URI, or `:memory:`): a read-write open creates the file when the path
/// does not exist, as the write oracle saw.
fn sqlite(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "sqlite3");
    let v = judge(cmd.name, &w);
    if v.is_write() {
        return v;
    }
    let mut texts: Vec<&str> = Vec::new();
    for occ in w.all("cmd") {
        match occ.fixed() {
            Some(t) => texts.push(t),
            None => return cmd.dynamic_write(),
        }
    }
    let mut operands = w.operands.iter().map(|(_, o)| o.fixed());
    let db = operands.next();
    let mut sql_operands = 0;
    for o in operands {
        match o {
            Some(t) => texts.push(t),
            None => return cmd.dynamic_write(),
        }
        sql_operands += 1;
    }
    if sql_operands == 0 {
        if w.has("version") || w.has("help") {
            return Verdict::read("sqlite3 -version only reports");
        }
        return Verdict::write(
            Risk::Medium,
            "sqlite3 without SQL operands is an interactive shell that runs whatever it reads",
        )
        .unbounded(UnboundedCategory::Repl, None);
    }
    let read_only = w.has("readonly") || db.flatten().is_some_and(sqlite_ro_name);
    if !read_only {
        return Verdict::write(
            Risk::Medium,
            "sqlite3 without -readonly (or a file:…?mode=ro URI) creates the database file \
             when it does not exist",
        );
    }
    let mut statements = Vec::new();
    for s in texts {
        let trimmed = s.trim_start();
        if trimmed.starts_with('.') {
            for line in trimmed.lines() {
                let dot = line.split_whitespace().next().unwrap_or("");
                if !SQLITE_READ_DOTS.contains(&dot) {
                    return Verdict::write(
                        Risk::High,
                        format!("sqlite3 {dot} can write files or run commands"),
                    );
                }
            }
        } else {
            statements.push(s);
        }
    }
    inspected(&statements, Flavor::Sqlite, "sqlite3")
}

/// Dot-commands that only show something. Every other one (`.shell`, `.system`,
/// `.output`, `.once`, `.save`, `.backup`, `.import`, `.load`, `.read`, `.open`, …) may
/// write a file or run a program.
const SQLITE_READ_DOTS: &[&str] = &[
    ".tables",
    ".table",
    ".schema",
    ".indexes",
    ".indices",
    ".databases",
    ".dbinfo",
    ".headers",
    ".header",
    ".mode",
    ".show",
    ".timer",
    ".width",
    ".fullschema",
    ".help",
    ".eqp",
    ".explain",
    ".nullvalue",
    ".separator",
    ".version",
    ".dump",
    ".sha3sum",
    ".stats",
    ".print",
    ".changes",
    ".lint",
    ".bail",
    ".echo",
];

/// A database name sqlite3 opens without creating it: `:memory:`, or a `file:` URI whose
/// one `mode` parameter is `ro` (no percent escapes, which SQLite decodes in names and
/// values, and no `vfs`).
fn sqlite_ro_name(db: &str) -> bool {
    if db == ":memory:" {
        return true;
    }
    let Some(uri) = db.strip_prefix("file:") else {
        return false;
    };
    let query = uri.split('#').next().unwrap_or("");
    let Some((_, query)) = query.split_once('?') else {
        return false;
    };
    if query.contains('%') {
        return false;
    }
    let params: Vec<(&str, &str)> = query
        .split('&')
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect();
    let modes: Vec<&str> = params
        .iter()
        .filter(|(k, _)| *k == "mode")
        .map(|(_, v)| *v)
        .collect();
    modes == ["ro"] && !params.iter().any(|(k, _)| *k == "vfs")
}

/// psql: `rules/psql.toml` decides the options; the SQL of every `-c` is inspected.
fn psql(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "psql");
    let v = judge("psql", &w);
    if v.is_write() {
        return v;
    }
    let mut commands = Vec::new();
    for occ in w.all("command") {
        match occ.fixed() {
            Some(c) => commands.push(c),
            None => return cmd.dynamic_write(),
        }
    }
    if commands.is_empty() {
        if w.has("list") || w.has("version") || w.has("help") || w.has("?") {
            return Verdict::read("psql -l only lists databases");
        }
        return Verdict::write(
            Risk::Medium,
            "bare psql is an interactive shell that runs whatever it reads",
        )
        .unbounded(UnboundedCategory::Repl, None);
    }
    let mut sql = Vec::new();
    for c in commands {
        let t = c.trim();
        if t.starts_with('\\') {
            if let Some(why) = psql_meta_writes(t) {
                return Verdict::write(Risk::High, why);
            }
        } else {
            sql.push(c);
        }
    }
    if sql.is_empty() {
        return Verdict::read("psql describe commands only read");
    }
    inspected(&sql, Flavor::Postgres, "psql")
}

/// psql backslash commands: only the describe and list families are reads.
fn psql_meta_writes(meta: &str) -> Option<String> {
    if meta.contains('`') || meta[1..].contains('\\') {
        return Some("psql meta-command runs a shell command or another meta-command".into());
    }
    let name = meta[1..].split_whitespace().next().unwrap_or("");
    let ok = (name.starts_with('d')
        && name[1..]
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '+' || c == 'S'))
        || matches!(
            name,
            "l" | "l+"
                | "list"
                | "list+"
                | "conninfo"
                | "encoding"
                | "sf"
                | "sf+"
                | "sv"
                | "sv+"
                | "z"
                | "du"
                | "dconfig"
                | "drds"
        );
    if ok && !(name == "encoding" && meta.split_whitespace().count() > 1) {
        None
    } else {
        Some(format!("psql \\{name} is not a read-only meta-command"))
    }
}

/// mysql/mariadb: `rules/mysql.toml` checks every option; each `-e` text is inspected.
fn mysql(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, cmd.name);
    let v = judge(cmd.name, &w);
    if v.is_write() {
        return v;
    }
    let mut sql: Vec<String> = Vec::new();
    for occ in w.all("execute") {
        match occ.fixed() {
            Some(s) => sql.push(s.to_owned()),
            None => return cmd.dynamic_write(),
        }
    }
    if sql.is_empty() {
        if w.has("version") || w.has("help") || w.has("I") || w.has("print-defaults") {
            return Verdict::read(format!("{} --version only reports", cmd.name));
        }
        return Verdict::write(
            Risk::Medium,
            format!(
                "bare {} is an interactive shell that runs whatever it reads",
                cmd.name
            ),
        )
        .unbounded(UnboundedCategory::Repl, None);
    }
    let mut cleaned = Vec::new();
    for s in &sql {
        match mysql_clean(s) {
            Ok(c) => cleaned.push(c),
            Err(why) => return Verdict::write(Risk::High, format!("{}: {why}", cmd.name)),
        }
    }
    let refs: Vec<&str> = cleaned.iter().map(String::as_str).collect();
    inspected(&refs, Flavor::MySql, cmd.name)
}

/// Turn mysql's `\G`/`\g` terminators into `;` and refuse any other client command.
fn mysql_clean(sql: &str) -> Result<String, String> {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), '\\') => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
                let _ = q;
            }
            (Some(q), c) if c == q => {
                quote = None;
                out.push(c);
            }
            (None, '\'' | '"' | '`') => {
                quote = Some(c);
                out.push(c);
            }
            (None, '\\') => match chars.next() {
                Some('G' | 'g') => out.push(';'),
                other => {
                    return Err(format!(
                        "client command \\{} can run programs or write files",
                        other.unwrap_or(' ')
                    ));
                }
            },
            _ => out.push(c),
        }
    }
    Ok(out)
}
