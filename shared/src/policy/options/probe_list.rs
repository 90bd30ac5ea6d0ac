//! The probe's data: which help command checks which table, how each help writes its
//! options, and the arities that differ from a help text on purpose (with why).

/// (table tool, subcommand path, help command). The help command runs without a shell.
pub(super) const PROBES: &[(&str, &[&str], &[&str])] = &[
    ("curl", &[], &["curl", "--help", "all"]),
    ("systemctl", &[], &["systemctl", "--help"]),
    ("journalctl", &[], &["journalctl", "--help"]),
    ("systemd-analyze", &[], &["systemd-analyze", "--help"]),
    ("hostnamectl", &[], &["hostnamectl", "--help"]),
    ("timedatectl", &[], &["timedatectl", "--help"]),
    ("localectl", &[], &["localectl", "--help"]),
    ("loginctl", &[], &["loginctl", "--help"]),
    ("networkctl", &[], &["networkctl", "--help"]),
    ("resolvectl", &[], &["resolvectl", "--help"]),
    ("coredumpctl", &[], &["coredumpctl", "--help"]),
    ("busctl", &[], &["busctl", "--help"]),
    ("systemd-cgls", &[], &["systemd-cgls", "--help"]),
    ("systemd-cgtop", &[], &["systemd-cgtop", "--help"]),
    ("psql", &[], &["psql", "--help"]),
    ("xargs", &[], &["xargs", "--help"]),
    ("watch", &[], &["watch", "--help"]),
    ("gzip", &[], &["gzip", "--help"]),
    ("xz", &[], &["xz", "--long-help"]),
    ("uniq", &[], &["uniq", "--help"]),
    ("sort", &[], &["sort", "--help"]),
    ("tar", &[], &["tar", "--help"]),
    ("bzip2", &[], &["bzip2", "--help"]),
    ("pigz", &[], &["pigz", "--help"]),
    ("lz4", &[], &["lz4", "-H"]),
    ("tshark", &[], &["tshark", "--help"]),
    ("dumpcap", &[], &["dumpcap", "--help"]),
    ("nmap", &[], &["nmap", "--help"]),
    ("fdisk", &[], &["fdisk", "--help"]),
    ("sfdisk", &[], &["sfdisk", "--help"]),
    ("parted", &[], &["parted", "--help"]),
    ("zstd", &[], &["zstd", "-H"]),
    ("sgdisk", &[], &["sgdisk", "--help"]),
    ("kubectl", &[], &["kubectl", "options"]),
    ("kubectl", &["get"], &["kubectl", "get", "--help"]),
    ("kubectl", &["logs"], &["kubectl", "logs", "--help"]),
    ("kubectl", &["exec"], &["kubectl", "exec", "--help"]),
    (
        "kubectl",
        &["rollout", "status"],
        &["kubectl", "rollout", "status", "--help"],
    ),
    ("docker", &[], &["docker", "--help"]),
    ("docker", &["ps"], &["docker", "ps", "--help"]),
    ("docker", &["logs"], &["docker", "logs", "--help"]),
    ("docker", &["inspect"], &["docker", "inspect", "--help"]),
    ("docker", &["stats"], &["docker", "stats", "--help"]),
    ("docker", &["events"], &["docker", "events", "--help"]),
    ("docker", &["exec"], &["docker", "exec", "--help"]),
    ("docker", &["save"], &["docker", "save", "--help"]),
    ("docker", &["images"], &["docker", "images", "--help"]),
    (
        "docker",
        &["system", "df"],
        &["docker", "system", "df", "--help"],
    ),
    (
        "docker",
        &["swarm", "ca"],
        &["docker", "swarm", "ca", "--help"],
    ),
    ("git", &["ls-files"], &["git", "ls-files", "-h"]),
    ("git", &["ls-tree"], &["git", "ls-tree", "-h"]),
    ("git", &["ls-remote"], &["git", "ls-remote", "-h"]),
    ("git", &["cat-file"], &["git", "cat-file", "-h"]),
    ("git", &["describe"], &["git", "describe", "-h"]),
    ("git", &["grep"], &["git", "grep", "-h"]),
    ("git", &["for-each-ref"], &["git", "for-each-ref", "-h"]),
    ("git", &["show-ref"], &["git", "show-ref", "-h"]),
    ("git", &["archive"], &["git", "archive", "-h"]),
    ("git", &["fsck"], &["git", "fsck", "-h"]),
    ("git", &["help"], &["git", "help", "-h"]),
    ("git", &["branch"], &["git", "branch", "-h"]),
    ("git", &["tag"], &["git", "tag", "-h"]),
    ("git", &["blame"], &["git", "blame", "-h"]),
    ("git", &["shortlog"], &["git", "shortlog", "-h"]),
    ("git", &["count-objects"], &["git", "count-objects", "-h"]),
    ("git", &["name-rev"], &["git", "name-rev", "-h"]),
    ("git", &["merge-base"], &["git", "merge-base", "-h"]),
    ("git", &["check-ignore"], &["git", "check-ignore", "-h"]),
    ("git", &["cherry"], &["git", "cherry", "-h"]),
    ("git", &["show-branch"], &["git", "show-branch", "-h"]),
    ("wget", &[], &["wget", "--help"]),
    ("pg_dump", &[], &["pg_dump", "--help"]),
    ("pg_dumpall", &[], &["pg_dumpall", "--help"]),
    ("mysql", &[], &["mysql", "--help"]),
    ("mysqladmin", &[], &["mysqladmin", "--help"]),
    ("sqlite3", &[], &["sqlite3", "-help"]),
    ("ceph", &[], &["ceph", "--help"]),
    // `git config -h` shows only the usage; after `--list` it shows every option.
    ("git", &["config"], &["git", "config", "--list", "-h"]),
    ("git", &["config", "get"], &["git", "config", "get", "-h"]),
    ("git", &["config", "list"], &["git", "config", "list", "-h"]),
    ("docker-compose", &[], &["docker-compose", "--help"]),
    (
        "docker-compose",
        &["ps"],
        &["docker-compose", "ps", "--help"],
    ),
    (
        "docker-compose",
        &["config"],
        &["docker-compose", "config", "--help"],
    ),
    (
        "docker-compose",
        &["images"],
        &["docker-compose", "images", "--help"],
    ),
    (
        "docker-compose",
        &["logs"],
        &["docker-compose", "logs", "--help"],
    ),
    (
        "docker-compose",
        &["version"],
        &["docker-compose", "version", "--help"],
    ),
    (
        "docker-compose",
        &["port"],
        &["docker-compose", "port", "--help"],
    ),
    (
        "docker-compose",
        &["exec"],
        &["docker-compose", "exec", "--help"],
    ),
    ("redis-cli", &[], &["redis-cli", "--help"]),
    ("podman", &[], &["podman", "--help"]),
    ("podman", &["ps"], &["podman", "ps", "--help"]),
    ("podman", &["logs"], &["podman", "logs", "--help"]),
    ("podman", &["exec"], &["podman", "exec", "--help"]),
    ("podman", &["inspect"], &["podman", "inspect", "--help"]),
    ("podman", &["pod", "ps"], &["podman", "pod", "ps", "--help"]),
    ("ss", &[], &["ss", "--help"]),
    ("netstat", &[], &["netstat", "--help"]),
    ("ping", &[], &["ping", "-h"]),
    ("arping", &[], &["arping", "-h"]),
    ("fping", &[], &["fping", "-h"]),
    ("traceroute", &[], &["traceroute", "--help"]),
    ("tracepath", &[], &["tracepath", "-h"]),
    ("mtr", &[], &["mtr", "-h"]),
    ("nft", &[], &["nft", "--help"]),
    ("arp", &[], &["arp", "--help"]),
    ("route", &[], &["route", "--help"]),
    ("conntrack", &[], &["conntrack", "--help"]),
    ("showmount", &[], &["showmount", "--help"]),
    ("nfsstat", &[], &["nfsstat", "--help"]),
    ("ncat", &[], &["ncat", "-h"]),
    ("telnet", &[], &["telnet", "--help"]),
    ("iptables", &[], &["iptables", "-h"]),
    ("ebtables", &[], &["ebtables", "-h"]),
    ("arptables", &[], &["arptables", "-h"]),
    ("firewall-cmd", &[], &["firewall-cmd", "--help"]),
    ("ipmitool", &[], &["ipmitool", "-h"]),
];

/// Tools whose help is cobra's: `-f, --filter filter   Filter…`, a lowercase type word
/// after the name for an option that takes a value (pigz writes its values `xxx`, Wireshark's tools
/// `pdml|ps|…` and `tap_name`).
pub(super) const COBRA: &[&str] = &["docker", "podman", "helm", "pigz", "tshark", "dumpcap"];

/// Arities that differ from the help text on purpose, with why.
pub(super) const KNOWN: &[(&str, &str, &str)] = &[
    // curl's help shows `--help <category>`, but the category is optional: declared as a
    // flag, so an option after it is seen (the help request ends curl before any write).
    ("curl", "help", "help's category is optional"),
    // The brackets are part of the value (`[protocol://]host[:port]`), which is required.
    ("curl", "proxy", "a required value shown with brackets"),
    ("curl", "preproxy", "a required value shown with brackets"),
    // `--help=commands` and `--help=variables` are listed as examples of `--help[=TOPIC]`.
    ("psql", "help", "optional topic, shown as examples"),
    // zstd's own parser takes a long option's value only after `=` (`--format=xz`), so
    // they are declared optional (attached only); its help writes them `--format=zstd`.
    ("zstd", "*", "values only after ="),
    // pflag shows every option as `--name=default:`; these three have a NoOptDefVal, so
    // a bare `--dry-run` is valid and the value must be attached.
    ("kubectl", "dry-run", "pflag NoOptDefVal"),
    ("kubectl", "validate", "pflag NoOptDefVal"),
    ("kubectl", "cascade", "pflag NoOptDefVal"),
    // wget's help shows `--hsts-file` bare; its option table (OPT_VALUE) takes a FILE.
    ("wget", "hsts-file", "help omits the value"),
    // redis-cli's help shows `-X` bare; its parser takes the tag that follows.
    ("redis-cli", "X", "help omits the tag"),
    // sqlite3 `-A ARGS...` takes every word after it as archive arguments; it is a write,
    // declared as a flag with that effect.
    ("sqlite3", "A", "a write whatever follows"),
    // docker-compose v1 shows the value as a choice: `--ansi (never|always|auto)`.
    ("docker-compose", "ansi", "a required choice in parentheses"),
    // systemd-cgls parses `-u`/`--unit` and `--user-unit` with an optional value (getopt
    // "u::"); its help shows them bare.
    ("systemd-cgls", "unit", "optional value, help shows it bare"),
    (
        "systemd-cgls",
        "user-unit",
        "optional value, help shows it bare",
    ),
    // sort's help shows `-c, --check, --check=diagnose-first`: `--check`'s value is
    // optional.
    ("sort", "check", "optional value, shown as examples"),
    // pigz's help shows the levels as a range, `-0 to -9, -11`.
    ("pigz", "0", "a range of levels"),
    // lz4's help shows `--list FILE`: the files are operands, `--list` a mode.
    ("lz4", "list", "the files are operands"),
    // nmap's help shows `-O:`, `-v:`, `-d:` bare; its getopt string gives them an optional
    // attached value (`-O2`, `-v3`, `-d9`).
    ("nmap", "O", "optional attached value, help shows it bare"),
    ("nmap", "v", "optional attached value, help shows it bare"),
    (
        "nmap",
        "debug",
        "optional attached value, help shows it bare",
    ),
    // ss's help shows `-N, --net` without its NAME; ss.c declares it `N:` (required).
    ("ss", "net", "help omits the value"),
    // traceroute's help writes its placeholders in lowercase (`-f first_ttl`,
    // `--first=first_ttl`), which the probe does not read as values; the short forms take
    // the next word, the long forms a value after `=` only.
    ("traceroute", "*", "lowercase placeholders"),
    // arp's and conntrack's helps write their values in lowercase or not at all (`-i,
    // --device`, `-s, --src ip`); the arities are their getopt strings' ("A:H:…i:…",
    // conntrack's "…s:d:r:q:…n::g::…").
    ("arp", "*", "help omits or lowercases the values"),
    ("conntrack", "*", "help lowercases the values"),
    // nfsstat's help shows `-o [facility]`, but its getopt string has "o:" (required);
    // `--since file` is lowercase.
    ("nfsstat", "o", "required, help shows brackets"),
    ("nfsstat", "since", "lowercase placeholder"),
    // ncat's help omits or lowercases most values (`--allow`, `-p, --source-port port`);
    // the arities are its getopt string's and long options table's.
    ("ncat", "*", "help omits or lowercases the values"),
    // iptables', arptables' and ipmitool's helps write their values in lowercase after
    // the names (`--append  -A chain`, `-H hostname`); the arities are their getopt
    // strings' ("-:A:C:D:E:F::I:L::…", ipmitool's "I:46hVvc…H:d:P:f:…").
    ("iptables", "*", "help lowercases the values"),
    ("arptables", "*", "help lowercases the values"),
    ("ipmitool", "*", "help lowercases the values"),
    // sfdisk's help shows each command option with its operands (`-d, --dump <dev>`);
    // the command options take no value.
    (
        "sfdisk",
        "activate",
        "operands shown after a command option",
    ),
    ("sfdisk", "dump", "operands shown after a command option"),
    ("sfdisk", "json", "operands shown after a command option"),
    (
        "sfdisk",
        "backup-pt-sectors",
        "operands shown after a command option",
    ),
    (
        "sfdisk",
        "show-geometry",
        "operands shown after a command option",
    ),
    ("sfdisk", "list", "operands shown after a command option"),
    (
        "sfdisk",
        "list-free",
        "operands shown after a command option",
    ),
    ("sfdisk", "reorder", "operands shown after a command option"),
    (
        "sfdisk",
        "show-size",
        "operands shown after a command option",
    ),
    ("sfdisk", "verify", "operands shown after a command option"),
    ("sfdisk", "delete", "operands shown after a command option"),
    (
        "sfdisk",
        "part-label",
        "operands shown after a command option",
    ),
    (
        "sfdisk",
        "part-type",
        "operands shown after a command option",
    ),
    (
        "sfdisk",
        "part-uuid",
        "operands shown after a command option",
    ),
    (
        "sfdisk",
        "part-attrs",
        "operands shown after a command option",
    ),
    ("sfdisk", "disk-id", "operands shown after a command option"),
    (
        "sfdisk",
        "relocate",
        "operands shown after a command option",
    ),
];

/// Tools that parse with getopt_long_only, whose help writes long options with one dash
/// (`-iL <file>:`, `-oN/-oX <file>:`, `--min-rate <number>:`).
pub(super) const LONG_ONLY: &[&str] = &["nmap"];

/// Long-only tools whose help is otherwise getopt-like, one option a line with its
/// placeholder (`-readonly`, `-cmd COMMAND`): sqlite3.
pub(super) const SINGLE_DASH: &[&str] = &["sqlite3"];
