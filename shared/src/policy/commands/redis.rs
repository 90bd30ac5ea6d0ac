//! redis-cli: classified by the Redis command it sends.

use super::super::args::Spec;
use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;

/// Read-only Redis commands (first word; two-word containers are checked below).
const READS: &[&str] = &[
    "GET",
    "MGET",
    "EXISTS",
    "TTL",
    "PTTL",
    "EXPIRETIME",
    "PEXPIRETIME",
    "TYPE",
    "KEYS",
    "SCAN",
    "HGET",
    "HGETALL",
    "HKEYS",
    "HVALS",
    "HLEN",
    "HEXISTS",
    "HMGET",
    "HSCAN",
    "HSTRLEN",
    "HRANDFIELD",
    "LRANGE",
    "LLEN",
    "LINDEX",
    "LPOS",
    "SMEMBERS",
    "SISMEMBER",
    "SMISMEMBER",
    "SCARD",
    "SSCAN",
    "SRANDMEMBER",
    "SINTER",
    "SUNION",
    "SDIFF",
    "SINTERCARD",
    "ZRANGE",
    "ZRANGEBYSCORE",
    "ZRANGEBYLEX",
    "ZREVRANGE",
    "ZREVRANGEBYSCORE",
    "ZREVRANGEBYLEX",
    "ZCARD",
    "ZSCORE",
    "ZMSCORE",
    "ZRANK",
    "ZREVRANK",
    "ZCOUNT",
    "ZLEXCOUNT",
    "ZSCAN",
    "ZRANDMEMBER",
    "ZINTER",
    "ZUNION",
    "ZDIFF",
    "ZINTERCARD",
    "STRLEN",
    "GETRANGE",
    "SUBSTR",
    "DBSIZE",
    "INFO",
    "PING",
    "TIME",
    "ECHO",
    "ROLE",
    "LASTSAVE",
    "XLEN",
    "XRANGE",
    "XREVRANGE",
    "XPENDING",
    "PFCOUNT",
    "BITCOUNT",
    "GETBIT",
    "BITPOS",
    "LOLWUT",
    "DUMP",
    "RANDOMKEY",
    "GEOPOS",
    "GEODIST",
    "GEOHASH",
    "GEORADIUS_RO",
    "GEORADIUSBYMEMBER_RO",
    "GEOSEARCH",
    "LCS",
    "OBJECT",
    "MEMORY",
    "LATENCY",
    "SLOWLOG",
    "CLIENT",
    "CONFIG",
    "COMMAND",
    "CLUSTER",
    "MODULE",
    "ACL",
    "FUNCTION",
    "SCRIPT",
    "XINFO",
    "PUBSUB",
    "SENTINEL",
    "JSON.GET",
    "JSON.TYPE",
    "JSON.MGET",
    "FT.INFO",
    "FT._LIST",
    "FT.SEARCH",
    "TS.GET",
    "TS.RANGE",
    "TS.INFO",
    "HELLO-X",
    "READONLY-X",
];

/// For container commands, the read-only subcommands.
fn sub_reads(cmd: &str) -> Option<&'static [&'static str]> {
    Some(match cmd {
        "OBJECT" => &["ENCODING", "FREQ", "IDLETIME", "REFCOUNT", "HELP"],
        "MEMORY" => &["USAGE", "STATS", "DOCTOR", "MALLOC-STATS", "HELP"],
        "LATENCY" => &["LATEST", "HISTORY", "DOCTOR", "GRAPH", "HISTOGRAM", "HELP"],
        "SLOWLOG" => &["GET", "LEN", "HELP"],
        "CLIENT" => &[
            "LIST",
            "INFO",
            "GETNAME",
            "ID",
            "GETREDIR",
            "TRACKINGINFO",
            "HELP",
        ],
        "CONFIG" => &["GET", "HELP"],
        "COMMAND" => &[
            "COUNT",
            "INFO",
            "DOCS",
            "LIST",
            "GETKEYS",
            "GETKEYSANDFLAGS",
            "HELP",
        ],
        "CLUSTER" => &[
            "INFO",
            "NODES",
            "SLOTS",
            "SHARDS",
            "MYID",
            "MYSHARDID",
            "KEYSLOT",
            "COUNTKEYSINSLOT",
            "GETKEYSINSLOT",
            "LINKS",
            "REPLICAS",
            "SLAVES",
            "HELP",
            "COUNT-FAILURE-REPORTS",
        ],
        "MODULE" => &["LIST", "HELP"],
        "ACL" => &[
            "LIST", "WHOAMI", "USERS", "CAT", "GETUSER", "LOG", "DRYRUN", "HELP",
        ],
        "FUNCTION" => &["LIST", "STATS", "DUMP", "HELP"],
        "SCRIPT" => &["EXISTS", "HELP"],
        "XINFO" => &["STREAM", "GROUPS", "CONSUMERS", "HELP"],
        "PUBSUB" => &[
            "CHANNELS",
            "NUMSUB",
            "NUMPAT",
            "SHARDCHANNELS",
            "SHARDNUMSUB",
            "HELP",
        ],
        "SENTINEL" => &[
            "MASTERS",
            "MASTER",
            "REPLICAS",
            "SLAVES",
            "SENTINELS",
            "GET-MASTER-ADDR-BY-NAME",
            "CKQUORUM",
            "INFO-CACHE",
            "MYID",
            "CONFIG-X",
        ],
        _ => return None,
    })
}

pub(crate) fn redis_cli(cmd: &Cmd<'_>) -> Verdict {
    let p = cmd.parse(Spec {
        short_values: "hpsaunridDec",
        long_values: &[
            "user",
            "pass",
            "sni",
            "cacert",
            "cacertdir",
            "cert",
            "key",
            "tls-ciphers",
            "tls-ciphersuites",
            "rdb",
            "functions-rdb",
            "eval",
            "pattern",
            "count",
            "quoted-pattern",
            "memkeys-samples",
            "intrinsic-latency",
            "cluster",
            "lru-test",
            "i",
        ],
        ..Spec::default()
    });
    if p.dynamic {
        return cmd.dynamic_write();
    }
    for (long, why) in [
        ("eval", "runs a Lua script file"),
        ("pipe", "sends raw protocol from input"),
        ("rdb", "writes an RDB file"),
        ("functions-rdb", "writes an RDB file"),
        ("ldb", "debugs Lua scripts"),
        ("ldb-sync-mode", "debugs Lua scripts"),
        ("replica", "acts as a replica"),
        ("lru-test", "writes test keys"),
    ] {
        if p.long(long) {
            return Verdict::write(Risk::High, format!("redis-cli --{long} {why}"));
        }
    }
    if p.short('x') {
        return Verdict::write(
            Risk::Medium,
            "redis-cli -x takes the last argument from input we cannot see",
        );
    }
    if let Some(c) = p.value(None, "cluster") {
        return if matches!(c.to_ascii_lowercase().as_str(), "check" | "info" | "help") {
            Verdict::read("redis-cli --cluster check only reads")
        } else {
            Verdict::write(
                Risk::High,
                format!("redis-cli --cluster {c} changes the cluster"),
            )
        };
    }
    if p.long("stat") || p.long("latency") || p.long("latency-history") || p.long("latency-dist") {
        return Verdict::read("redis-cli statistics only read")
            .unbounded(UnboundedCategory::Stream, None);
    }
    if p.long("bigkeys")
        || p.long("memkeys")
        || p.long("hotkeys")
        || p.long("keystats")
        || p.long("scan")
        || p.long("intrinsic-latency")
    {
        return Verdict::read("redis-cli key scan only reads");
    }
    let repeat_forever = p
        .value(Some('r'), "repeat")
        .is_some_and(|r| r.parse::<i64>().is_ok_and(|n| n < 0));
    let words: Vec<String> = p
        .positionals
        .iter()
        .filter_map(|w| w.fixed())
        .map(str::to_owned)
        .collect();
    let Some(first) = words.first() else {
        return Verdict::write(Risk::Medium, "bare redis-cli is an interactive shell")
            .unbounded(UnboundedCategory::Repl, None);
    };
    let name = first.to_ascii_uppercase();
    let v = if matches!(
        name.as_str(),
        "MONITOR" | "SUBSCRIBE" | "PSUBSCRIBE" | "SSUBSCRIBE"
    ) {
        return Verdict::read(format!("redis-cli {name} only reads"))
            .unbounded(UnboundedCategory::Stream, None);
    } else if !READS.contains(&name.as_str()) {
        Verdict::write(
            Risk::High,
            format!("Redis {name} changes data or the server"),
        )
    } else if let Some(subs) = sub_reads(&name) {
        let sub = words
            .get(1)
            .map(|s| s.to_ascii_uppercase())
            .unwrap_or_default();
        // ACL LOG reads, but ACL LOG RESET clears the log.
        let resets = name == "ACL"
            && sub == "LOG"
            && words
                .get(2)
                .is_some_and(|w| w.eq_ignore_ascii_case("RESET"));
        if resets {
            Verdict::write(Risk::Medium, "Redis ACL LOG RESET clears the ACL log")
        } else if subs.contains(&sub.as_str()) {
            Verdict::conditional(format!("Redis {name} {sub} only reads"))
        } else {
            Verdict::write(Risk::High, format!("Redis {name} {sub} changes the server"))
        }
    } else {
        Verdict::conditional(format!("Redis {name} only reads"))
    };
    if repeat_forever && !v.is_write() {
        return v.unbounded(UnboundedCategory::Stream, None);
    }
    v
}
