//! SQL content inspection with `sqlparser`: only statements that cannot change anything
//! count as reads.

use super::sql_functions::{
    READ_FUNCTIONS, READ_PRAGMAS, READ_PREFIXES, SIDE_EFFECT_FUNCTIONS, SIDE_EFFECT_PREFIXES,
};
use sqlparser::ast::{
    CopySource, CopyTarget, Expr, ObjectName, SetExpr, Statement, visit_expressions,
    visit_relations, visit_statements,
};
use sqlparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

/// Which SQL dialect a client speaks.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Flavor {
    Sqlite,
    Postgres,
    MySql,
}

/// `None` when every statement only reads; otherwise why not.
pub(crate) fn sql_writes(sql: &str, flavor: Flavor) -> Option<String> {
    let dialect: Box<dyn Dialect> = match flavor {
        Flavor::Sqlite => Box::new(SQLiteDialect {}),
        Flavor::Postgres => Box::new(PostgreSqlDialect {}),
        Flavor::MySql => Box::new(MySqlDialect {}),
    };
    let statements = match Parser::parse_sql(dialect.as_ref(), sql) {
        Ok(s) => s,
        Err(_) if matches!(flavor, Flavor::Sqlite) && is_read_pragma(sql) => return None,
        Err(e) => return Some(format!("SQL could not be parsed ({e})")),
    };
    if statements.is_empty() {
        return Some("no SQL statement".into());
    }
    for s in &statements {
        if let Some(why) = statement_writes(s) {
            return Some(why);
        }
    }
    // Nested statements (data-modifying CTEs, EXPLAIN of statements) and functions.
    let mut why = None;
    let _ = visit_statements(&statements, |s| match statement_writes(s) {
        Some(w) => {
            why = Some(w);
            ControlFlow::Break(())
        }
        None => ControlFlow::Continue(()),
    });
    if why.is_some() {
        return why;
    }
    let _ = visit_expressions(&statements, |e| {
        if let Expr::Function(f) = e
            && let Some(w) = function_writes(&f.name)
        {
            why = Some(w);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    if why.is_some() {
        return why;
    }
    let _ = visit_relations(&statements, |r| {
        if let Some(w) = relation_writes(r) {
            why = Some(w);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    why
}

/// SQLite's `PRAGMA name(argument)` form, which the SQL parser does not take.
fn is_read_pragma(sql: &str) -> bool {
    let s = sql.trim().trim_end_matches(';').trim();
    let Some(rest) = s
        .get(..7)
        .filter(|p| p.eq_ignore_ascii_case("pragma "))
        .map(|_| s[7..].trim())
    else {
        return false;
    };
    let (name, arg) = match rest.split_once('(') {
        Some((n, a)) => (n.trim(), a.strip_suffix(')').map(str::trim)),
        None => (rest, Some("")),
    };
    let name = name.rsplit('.').next().unwrap_or(name).to_ascii_lowercase();
    let plain = |t: &str| {
        t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '\'' | '"' | '.'))
    };
    READ_PRAGMAS.contains(&name.as_str()) && arg.is_some_and(plain) && plain(&name)
}

fn function_writes(name: &ObjectName) -> Option<String> {
    let full = name.to_string().to_ascii_lowercase();
    let last = full
        .rsplit('.')
        .next()
        .unwrap_or(&full)
        .trim_matches(['"', '`']);
    if SIDE_EFFECT_FUNCTIONS.contains(&last)
        || SIDE_EFFECT_PREFIXES.iter().any(|p| last.starts_with(p))
    {
        return Some(format!("SQL function {last}() has side effects"));
    }
    if READ_FUNCTIONS.contains(&last) || READ_PREFIXES.iter().any(|p| last.starts_with(p)) {
        return None;
    }
    Some(format!(
        "SQL function {last}() is not known to be free of side effects"
    ))
}

/// Table-valued sources that are relations, not calls: any name not known to be a
/// function is a table.
fn relation_writes(name: &ObjectName) -> Option<String> {
    let full = name.to_string().to_ascii_lowercase();
    let last = full
        .rsplit('.')
        .next()
        .unwrap_or(&full)
        .trim_matches(['"', '`']);
    (SIDE_EFFECT_FUNCTIONS.contains(&last)
        || SIDE_EFFECT_PREFIXES.iter().any(|p| last.starts_with(p)))
    .then(|| format!("SQL function {last}() has side effects"))
}

fn statement_writes(s: &Statement) -> Option<String> {
    match s {
        Statement::Query(q) => {
            if !q.locks.is_empty() {
                return Some("SELECT … FOR UPDATE/SHARE takes row locks".into());
            }
            set_expr_writes(&q.body)
        }
        Statement::Explain {
            analyze, options, ..
        } => {
            let analyze_option = options.as_ref().is_some_and(|opts| {
                opts.iter().any(|o| {
                    o.name.value.eq_ignore_ascii_case("analyze")
                        && o.arg.as_ref().is_none_or(|a| {
                            !matches!(
                                a.to_string().to_ascii_lowercase().as_str(),
                                "false" | "off" | "0"
                            )
                        })
                })
            });
            (*analyze || analyze_option)
                .then(|| "EXPLAIN ANALYZE executes the statement".to_owned())
        }
        Statement::ExplainTable { .. } | Statement::Use(_) => None,
        Statement::StartTransaction { .. }
        | Statement::Commit { .. }
        | Statement::Rollback { .. } => None,
        Statement::Copy {
            source: CopySource::Query(q),
            to: true,
            target: CopyTarget::Stdout,
            ..
        } => statement_writes(&Statement::Query(q.clone())),
        Statement::Pragma { name, value, .. } => {
            let n = name.to_string().to_ascii_lowercase();
            let n = n.rsplit('.').next().unwrap_or(&n).to_owned();
            if value.is_none() && READ_PRAGMAS.contains(&n.as_str()) {
                None
            } else {
                Some(format!("PRAGMA {n} can change the database"))
            }
        }
        other => {
            let text = other.to_string();
            let head = text
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_ascii_uppercase();
            if head == "SHOW" || head == "DESCRIBE" || head == "DESC" {
                None
            } else {
                let words: Vec<&str> = text.split_whitespace().take(2).collect();
                Some(format!(
                    "SQL {} changes the database",
                    words.join(" ").to_ascii_uppercase()
                ))
            }
        }
    }
}

fn set_expr_writes(body: &SetExpr) -> Option<String> {
    match body {
        SetExpr::Select(sel) => sel
            .into
            .as_ref()
            .map(|_| "SELECT … INTO creates or writes a table or file".to_owned()),
        SetExpr::Query(q) => statement_writes(&Statement::Query(q.clone())),
        SetExpr::SetOperation { left, right, .. } => {
            set_expr_writes(left).or_else(|| set_expr_writes(right))
        }
        SetExpr::Values(_) | SetExpr::Table(_) => None,
        _ => Some("data-modifying statement inside a query".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads() {
        for (q, f) in [
            ("SELECT COUNT(*) FROM metadata_items", Flavor::Sqlite),
            (
                "SELECT pid, state, query FROM pg_stat_activity",
                Flavor::Postgres,
            ),
            ("SHOW PROCESSLIST", Flavor::MySql),
            ("EXPLAIN SELECT 1", Flavor::Postgres),
            ("PRAGMA table_info(users)", Flavor::Sqlite),
            ("SELECT 1; SELECT 2", Flavor::Postgres),
            ("WITH t AS (SELECT 1) SELECT * FROM t", Flavor::Postgres),
            ("PRAGMA table_info(dashboard)", Flavor::Sqlite),
            ("USE app; SELECT COUNT(*) FROM users", Flavor::MySql),
            (
                "COPY (SELECT * FROM pg_stat_activity) TO STDOUT WITH CSV HEADER",
                Flavor::Postgres,
            ),
            ("BEGIN; SELECT 1; COMMIT", Flavor::Postgres),
        ] {
            assert_eq!(sql_writes(q, f), None, "{q}");
        }
    }

    #[test]
    fn writes() {
        for (q, f) in [
            ("UPDATE settings SET value='1'", Flavor::Sqlite),
            ("VACUUM FULL", Flavor::Postgres),
            ("TRUNCATE audit", Flavor::Postgres),
            ("EXPLAIN ANALYZE SELECT 1", Flavor::Postgres),
            ("SELECT * INTO t2 FROM t", Flavor::Postgres),
            ("COPY t TO PROGRAM 'rm x'", Flavor::Postgres),
            ("SELECT pg_terminate_backend(123)", Flavor::Postgres),
            ("select writefile('/tmp/x','y')", Flavor::Sqlite),
            (
                "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
                Flavor::Postgres,
            ),
            ("SELECT 1; DROP TABLE t", Flavor::MySql),
            ("SELECT * FROM t FOR UPDATE", Flavor::Postgres),
            ("PRAGMA journal_mode=WAL", Flavor::Sqlite),
            (
                "SELECT * FROM dblink('x', 'DELETE FROM t') AS r(a int)",
                Flavor::Postgres,
            ),
            ("SELECT cleanup_expired_sessions()", Flavor::Postgres),
            ("EXPLAIN (ANALYZE, BUFFERS) SELECT 1", Flavor::Postgres),
            ("SELECT pg_stat_statements_reset()", Flavor::Postgres),
            ("not sql at all", Flavor::Sqlite),
            ("PRAGMA writable_schema(1)", Flavor::Sqlite),
            ("COPY t TO '/tmp/x'", Flavor::Postgres),
            ("COPY (SELECT 1) TO PROGRAM 'id'", Flavor::Postgres),
        ] {
            assert!(sql_writes(q, f).is_some(), "{q}");
        }
    }
}
