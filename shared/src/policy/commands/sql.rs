//! SQL content inspection with `sqlparser`: only statements that cannot change anything
//! count as reads.

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

/// Functions that change state or reach outside the database.
const SIDE_EFFECT_FUNCTIONS: &[&str] = &[
    "pg_terminate_backend",
    "pg_cancel_backend",
    "pg_reload_conf",
    "pg_rotate_logfile",
    "pg_switch_wal",
    "pg_switch_xlog",
    "pg_promote",
    "pg_start_backup",
    "pg_stop_backup",
    "pg_backup_start",
    "pg_backup_stop",
    "pg_logical_emit_message",
    "pg_import_system_collations",
    "set_config",
    "nextval",
    "setval",
    "pg_notify",
    "lowrite",
    "load_extension",
    "writefile",
    "edit",
    "fts3_tokenizer",
    "get_lock",
    "release_lock",
    "release_all_locks",
    "master_pos_wait",
    "source_pos_wait",
    "query_to_xml_x",
    "pg_read_binary_file_x",
    "txid_current",
    "pg_current_xact_id",
    "sqlite_dbpage",
    "pg_sequence_last_value_x",
    "currval_x",
    "pg_log_backend_memory_contexts",
];

const SIDE_EFFECT_PREFIXES: &[&str] = &[
    "pg_create_",
    "pg_drop_",
    "pg_copy_",
    "pg_stat_reset",
    "pg_replication_origin",
    "lo_",
    "dblink",
    "pg_advisory",
    "pg_try_advisory",
    "pg_file_",
    "pg_wal_replay",
    "sys_",
    "pg_replication_slot_advance",
];

const READ_PRAGMAS: &[&str] = &[
    "table_info",
    "table_xinfo",
    "index_list",
    "index_info",
    "index_xinfo",
    "foreign_key_list",
    "foreign_key_check",
    "integrity_check",
    "quick_check",
    "database_list",
    "compile_options",
    "page_count",
    "page_size",
    "freelist_count",
    "user_version",
    "schema_version",
    "journal_mode",
    "synchronous",
    "encoding",
    "collation_list",
    "function_list",
    "module_list",
    "pragma_list",
    "table_list",
    "application_id",
    "auto_vacuum",
    "cache_size",
    "busy_timeout",
    "foreign_keys",
    "max_page_count",
    "data_version",
    "cell_size_check",
    "mmap_size",
    "locking_mode",
    "temp_store",
    "wal_autocheckpoint",
    "secure_delete",
    "recursive_triggers",
];

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

/// Built-in functions that only compute or read (PostgreSQL, MySQL, SQLite).
const READ_FUNCTIONS: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "coalesce",
    "nullif",
    "greatest",
    "least",
    "abs",
    "round",
    "ceil",
    "ceiling",
    "floor",
    "trunc",
    "truncate",
    "mod",
    "power",
    "pow",
    "sqrt",
    "exp",
    "ln",
    "log",
    "log10",
    "log2",
    "sign",
    "random",
    "rand",
    "pi",
    "length",
    "char_length",
    "character_length",
    "octet_length",
    "bit_length",
    "lower",
    "upper",
    "initcap",
    "trim",
    "ltrim",
    "rtrim",
    "btrim",
    "substr",
    "substring",
    "replace",
    "concat",
    "concat_ws",
    "left",
    "right",
    "lpad",
    "rpad",
    "repeat",
    "reverse",
    "position",
    "strpos",
    "instr",
    "locate",
    "split_part",
    "string_agg",
    "group_concat",
    "array_agg",
    "json_agg",
    "jsonb_agg",
    "json_object_agg",
    "jsonb_object_agg",
    "json_build_object",
    "jsonb_build_object",
    "json_extract",
    "json_extract_path",
    "json_extract_path_text",
    "jsonb_extract_path",
    "jsonb_extract_path_text",
    "jsonb_pretty",
    "json_array_length",
    "jsonb_array_length",
    "json_each",
    "jsonb_each",
    "json_object_keys",
    "jsonb_object_keys",
    "to_json",
    "to_jsonb",
    "row_to_json",
    "json_typeof",
    "jsonb_typeof",
    "json_valid",
    "json",
    "json_array",
    "json_object",
    "json_group_array",
    "json_group_object",
    "unnest",
    "generate_series",
    "array_length",
    "cardinality",
    "array_to_string",
    "string_to_array",
    "regexp_replace",
    "regexp_matches",
    "regexp_match",
    "regexp_substr",
    "regexp_like",
    "like",
    "glob",
    "printf",
    "format",
    "quote_ident",
    "quote_literal",
    "quote",
    "md5",
    "sha1",
    "sha2",
    "encode",
    "decode",
    "hex",
    "unhex",
    "to_hex",
    "ascii",
    "chr",
    "char",
    "now",
    "current_timestamp",
    "current_date",
    "current_time",
    "localtime",
    "localtimestamp",
    "clock_timestamp",
    "statement_timestamp",
    "transaction_timestamp",
    "timeofday",
    "date_trunc",
    "date_part",
    "extract",
    "age",
    "to_char",
    "to_date",
    "to_timestamp",
    "to_number",
    "make_interval",
    "make_date",
    "justify_interval",
    "date",
    "time",
    "datetime",
    "julianday",
    "strftime",
    "unixepoch",
    "date_format",
    "from_unixtime",
    "unix_timestamp",
    "datediff",
    "timestampdiff",
    "date_add",
    "date_sub",
    "curdate",
    "curtime",
    "sysdate",
    "utc_timestamp",
    "year",
    "month",
    "day",
    "hour",
    "minute",
    "second",
    "dayofweek",
    "week",
    "cast",
    "convert",
    "typeof",
    "ifnull",
    "nvl",
    "iif",
    "if",
    "isnull",
    "version",
    "current_user",
    "session_user",
    "user",
    "current_database",
    "current_schema",
    "current_schemas",
    "database",
    "schema",
    "current_setting",
    "inet_server_addr",
    "inet_server_port",
    "inet_client_addr",
    "connection_id",
    "last_insert_id",
    "row_count",
    "found_rows",
    "changes",
    "total_changes",
    "last_insert_rowid",
    "sqlite_version",
    "sqlite_source_id",
    "row_number",
    "rank",
    "dense_rank",
    "percent_rank",
    "cume_dist",
    "ntile",
    "lag",
    "lead",
    "first_value",
    "last_value",
    "nth_value",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "variance",
    "var_pop",
    "var_samp",
    "percentile_cont",
    "percentile_disc",
    "mode",
    "bool_and",
    "bool_or",
    "every",
    "bit_and",
    "bit_or",
    "bit_xor",
    "total",
    "has_table_privilege",
    "has_database_privilege",
    "has_schema_privilege",
    "has_column_privilege",
    "obj_description",
    "col_description",
    "format_type",
    "to_regclass",
    "txid_current_snapshot",
    "inet_aton",
    "inet_ntoa",
    "host",
    "masklen",
    "family",
    "uuid",
    "gen_random_uuid",
    "uuid_generate_v4",
    "sleep",
    "pg_sleep",
    "load_file",
    "readfile",
    "array_position",
    "any_value",
    "char_length",
    "coalesce",
    "exists",
    "plainto_tsquery",
    "to_tsvector",
    "to_tsquery",
    "ts_rank",
    "st_astext",
];

/// Families of read-only catalogue and statistics functions.
const READ_PREFIXES: &[&str] = &[
    "pg_size_",
    "pg_database_size",
    "pg_relation_size",
    "pg_total_relation_size",
    "pg_table_size",
    "pg_indexes_size",
    "pg_column_size",
    "pg_get_",
    "pg_is_",
    "pg_last_",
    "pg_current_wal",
    "pg_wal_lsn_diff",
    "pg_walfile_name",
    "pg_postmaster_start_time",
    "pg_conf_load_time",
    "pg_backend_pid",
    "pg_blocking_pids",
    "pg_stat_get_",
    "pg_stat_file",
    "pg_ls_",
    "pg_read_file",
    "pg_tablespace_",
    "pg_xact_",
    "pg_encoding",
    "pg_typeof",
    "pg_table_is_visible",
    "pg_has_role",
    "pg_jit_available",
    "pg_trigger_depth",
    "pg_notification_queue_usage",
    "pg_relation_filenode",
    "pg_relation_filepath",
    "pg_filenode_relation",
    "pg_control_",
    "pg_snapshot_",
    "pg_visible_in_snapshot",
    "pg_options_to_table",
    "pg_describe_object",
    "pg_identify_object",
    "pg_sequence_parameters",
    "to_char",
    "json_",
    "jsonb_",
    "array_",
    "st_",
    "ts_",
    "regexp_",
    "date_",
    "time_",
];

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
