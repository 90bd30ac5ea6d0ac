//! redis-cli: classified by the Redis command it sends.

use super::super::types::{Risk, UnboundedCategory};
use super::super::verdict::Verdict;
use super::Cmd;
use crate::policy::options::judge;

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

/// redis-cli: `rules/redis-cli.toml` checks every option (up to the command, where
/// redis-cli stops reading them); `--cluster SUB`, the modes and the command are here.
pub(crate) fn redis_cli(cmd: &Cmd<'_>) -> Verdict {
    let w = walk!(cmd, "redis-cli");
    let v = judge(cmd.name, &w);
    if v.is_write() {
        return v;
    }
    if let Some(c) = w.all("cluster").last().map(|o| o.fixed()) {
        let Some(c) = c else {
            return cmd.dynamic_write();
        };
        return if matches!(c.to_ascii_lowercase().as_str(), "check" | "info" | "help") {
            Verdict::read("redis-cli --cluster check only reads")
        } else {
            Verdict::write(
                Risk::High,
                format!("redis-cli --cluster {c} changes the cluster"),
            )
        };
    }
    if ["stat", "latency", "latency-history", "latency-dist"]
        .iter()
        .any(|id| w.has(id))
    {
        return Verdict::read("redis-cli statistics only read")
            .unbounded(UnboundedCategory::Stream, None);
    }
    if ["bigkeys", "memkeys", "hotkeys", "scan", "intrinsic-latency"]
        .iter()
        .any(|id| w.has(id))
    {
        return Verdict::read("redis-cli key scan only reads");
    }
    let repeat_forever = w.all("r").any(|o| {
        o.fixed()
            .is_none_or(|r| r.parse::<i64>().is_ok_and(|n| n < 0))
    });
    let mut words: Vec<String> = Vec::new();
    for (_, word) in &w.operands {
        match word.fixed() {
            Some(t) => words.push(t.to_owned()),
            None => return cmd.dynamic_write(),
        }
    }
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
