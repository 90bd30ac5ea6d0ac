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
    // Fifth round, system tools.
    ("dmesg", &[], &["dmesg", "--help"]),
    ("sysctl", &[], &["sysctl", "--help"]),
    ("hostname", &[], &["hostname", "--help"]),
    ("date", &[], &["date", "--help"]),
    ("kill", &[], &["kill", "--help"]),
    ("top", &[], &["top", "-h"]),
    ("udevadm", &["info"], &["udevadm", "info", "--help"]),
    ("udevadm", &["monitor"], &["udevadm", "monitor", "--help"]),
    ("inotifywait", &[], &["inotifywait", "--help"]),
    ("inotifywatch", &[], &["inotifywatch", "--help"]),
    ("strace", &[], &["strace", "-h"]),
    ("ltrace", &[], &["ltrace", "--help"]),
    ("perf", &["list"], &["perf", "list", "-h"]),
    ("perf", &["top"], &["perf", "top", "-h"]),
    ("perf", &["version"], &["perf", "version", "-h"]),
    ("iperf3", &[], &["iperf3", "--help"]),
    ("iperf", &[], &["iperf", "--help"]),
    ("iotop", &[], &["iotop", "--help"]),
    ("iotop-c", &[], &["iotop-c", "--help"]),
    ("modprobe", &[], &["modprobe", "--help"]),
    ("passwd", &[], &["passwd", "--help"]),
    ("chage", &[], &["chage", "--help"]),
    ("killall", &[], &["killall", "--help"]),
    ("nvidia-smi", &[], &["nvidia-smi", "-h"]),
    ("chronyc", &[], &["chronyc", "--help"]),
    ("hwclock", &[], &["hwclock", "--help"]),
    ("taskset", &[], &["taskset", "--help"]),
    ("chrt", &[], &["chrt", "--help"]),
    ("prlimit", &[], &["prlimit", "--help"]),
    (
        "update-alternatives",
        &[],
        &["update-alternatives", "--help"],
    ),
    ("ldconfig", &[], &["ldconfig", "--help"]),
    ("debsums", &[], &["debsums", "--help"]),
    ("wipefs", &[], &["wipefs", "--help"]),
    ("yq", &[], &["yq", "--help"]),
    ("7z", &[], &["7z", "--help"]),
    ("openssl", &["x509"], &["openssl", "x509", "-help"]),
    ("openssl", &["req"], &["openssl", "req", "-help"]),
    ("openssl", &["crl"], &["openssl", "crl", "-help"]),
    (
        "openssl",
        &["crl2pkcs7"],
        &["openssl", "crl2pkcs7", "-help"],
    ),
    ("openssl", &["rsa"], &["openssl", "rsa", "-help"]),
    ("openssl", &["ec"], &["openssl", "ec", "-help"]),
    ("openssl", &["pkey"], &["openssl", "pkey", "-help"]),
    ("openssl", &["pkcs7"], &["openssl", "pkcs7", "-help"]),
    ("openssl", &["pkcs12"], &["openssl", "pkcs12", "-help"]),
    (
        "openssl",
        &["asn1parse"],
        &["openssl", "asn1parse", "-help"],
    ),
    ("openssl", &["verify"], &["openssl", "verify", "-help"]),
    ("openssl", &["dgst"], &["openssl", "dgst", "-help"]),
    ("openssl", &["version"], &["openssl", "version", "-help"]),
    ("openssl", &["ciphers"], &["openssl", "ciphers", "-help"]),
    ("openssl", &["list"], &["openssl", "list", "-help"]),
    ("openssl", &["rand"], &["openssl", "rand", "-help"]),
    ("openssl", &["errstr"], &["openssl", "errstr", "-help"]),
    ("openssl", &["enc"], &["openssl", "enc", "-help"]),
    ("openssl", &["s_client"], &["openssl", "s_client", "-help"]),
    ("openssl", &["sess_id"], &["openssl", "sess_id", "-help"]),
    ("openssl", &["storeutl"], &["openssl", "storeutl", "-help"]),
    ("openssl", &["prime"], &["openssl", "prime", "-help"]),
    ("openssl", &["passwd"], &["openssl", "passwd", "-help"]),
    ("openssl", &["kdf"], &["openssl", "kdf", "-help"]),
    ("openssl", &["mac"], &["openssl", "mac", "-help"]),
    ("smartctl", &[], &["smartctl", "--help"]),
    ("mount", &[], &["mount", "--help"]),
    ("swapon", &[], &["swapon", "--help"]),
    ("hdparm", &[], &["hdparm", "-h"]),
    ("multipath", &[], &["multipath", "-h"]),
    ("vmstat", &[], &["vmstat", "--help"]),
    ("free", &[], &["free", "--help"]),
    ("sar", &[], &["sar", "--help"]),
    ("dstat", &[], &["dstat", "--help"]),
    ("arcstat", &[], &["arcstat", "-h"]),
    ("btrfs", &[], &["btrfs", "--help"]),
    (
        "btrfs",
        &["filesystem", "show"],
        &["btrfs", "filesystem", "show", "--help"],
    ),
    (
        "btrfs",
        &["filesystem", "usage"],
        &["btrfs", "filesystem", "usage", "--help"],
    ),
    (
        "btrfs",
        &["subvolume", "list"],
        &["btrfs", "subvolume", "list", "--help"],
    ),
    (
        "btrfs",
        &["device", "stats"],
        &["btrfs", "device", "stats", "--help"],
    ),
    (
        "btrfs",
        &["qgroup", "show"],
        &["btrfs", "qgroup", "show", "--help"],
    ),
    ("rbd", &[], &["rbd", "--help"]),
    ("rbd", &["list"], &["rbd", "help", "ls"]),
    ("rbd", &["info"], &["rbd", "help", "info"]),
    ("rbd", &["snap", "list"], &["rbd", "help", "snap", "ls"]),
    ("rbd", &["disk-usage"], &["rbd", "help", "du"]),
    ("nvme", &["smart-log"], &["nvme", "smart-log", "--help"]),
    ("nvme", &["id-ctrl"], &["nvme", "id-ctrl", "--help"]),
    ("nvme", &["get-log"], &["nvme", "get-log", "--help"]),
    ("nvme", &["get-feature"], &["nvme", "get-feature", "--help"]),
    ("flatpak", &["list"], &["flatpak", "list", "--help"]),
    ("flatpak", &["info"], &["flatpak", "info", "--help"]),
    ("flatpak", &["remotes"], &["flatpak", "remotes", "--help"]),
    ("flatpak", &["history"], &["flatpak", "history", "--help"]),
    ("pip", &["list"], &["pip", "list", "--help"]),
    ("pip", &["freeze"], &["pip", "freeze", "--help"]),
    ("pip", &["show"], &["pip", "show", "--help"]),
    ("snap", &["list"], &["snap", "list", "--help"]),
    ("snap", &["info"], &["snap", "info", "--help"]),
    ("snap", &["find"], &["snap", "find", "--help"]),
    ("rpm", &[], &["rpm", "--help"]),
    ("dnf", &[], &["dnf", "--help"]),
    ("pacman", &[], &["pacman", "-Q", "-h"]),
    ("pacman", &[], &["pacman", "-S", "-h"]),
    ("timeout", &[], &["timeout", "--help"]),
    ("nice", &[], &["nice", "--help"]),
    ("stdbuf", &[], &["stdbuf", "--help"]),
    ("time", &[], &["time", "--help"]),
    ("ionice", &[], &["ionice", "--help"]),
    ("env", &[], &["env", "--help"]),
    ("nsenter", &[], &["nsenter", "--help"]),
    ("chroot", &[], &["chroot", "--help"]),
    ("shuf", &[], &["shuf", "--help"]),
    ("head", &[], &["head", "--help"]),
    ("tail", &[], &["tail", "--help"]),
    ("tee", &[], &["tee", "--help"]),
    ("dd", &[], &["dd", "--help"]),
    ("rg", &[], &["rg", "--help"]),
    ("ag", &[], &["ag", "--help"]),
    ("tree", &[], &["tree", "--help"]),
    ("hwinfo", &[], &["hwinfo", "--help"]),
    ("sensors", &[], &["sensors", "--help"]),
    ("file", &[], &["file", "--help"]),
    ("faillog", &[], &["faillog", "--help"]),
    ("lastlog", &[], &["lastlog", "--help"]),
    ("blkid", &[], &["blkid", "--help"]),
    ("findmnt", &[], &["findmnt", "--help"]),
    ("diff", &[], &["diff", "--help"]),
    ("hexdump", &[], &["hexdump", "--help"]),
    ("base64", &[], &["base64", "--help"]),
    ("dmidecode", &[], &["dmidecode", "--help"]),
    ("testparm", &[], &["testparm", "--help"]),
    ("lxc-ls", &[], &["lxc-ls", "--help"]),
    ("lxc-info", &[], &["lxc-info", "--help"]),
    ("promtool", &[], &["promtool", "--help"]),
    (
        "promtool",
        &["check", "config"],
        &["promtool", "check", "config", "--help"],
    ),
    (
        "promtool",
        &["check", "rules"],
        &["promtool", "check", "rules", "--help"],
    ),
    ("amtool", &[], &["amtool", "--help"]),
    ("virsh", &[], &["virsh", "--help"]),
    ("etcdctl", &[], &["etcdctl", "--help"]),
    ("etcdctl", &["get"], &["etcdctl", "get", "--help"]),
    ("visudo", &[], &["visudo", "--help"]),
    // bash's builtins: `help NAME` lists the options of printf and command (wait's and
    // builtin's helps list none; tmux and screen have no help in a form the probe reads).
    ("printf", &[], &["bash", "-c", "help printf"]),
    ("command", &[], &["bash", "-c", "help command"]),
    ("iptables", &[], &["iptables", "-h"]),
    ("ebtables", &[], &["ebtables", "-h"]),
    ("arptables", &[], &["arptables", "-h"]),
    ("firewall-cmd", &[], &["firewall-cmd", "--help"]),
    ("ipmitool", &[], &["ipmitool", "-h"]),
];

/// A help text rewritten into the form `probe::parse_help` reads: btrfs writes `-d|--all`,
/// rbd (boost) `-p [ --pool ] arg`, nvme `[  --namespace-id=<NUM>, -n <NUM> ]` in colour.
pub(super) fn normalize(tool: &str, text: &str) -> String {
    match tool {
        "btrfs" => text.replace("|--", ", --"),
        // argparse with metavars in brackets (`--repo [repo]`): the value is required.
        "dnf" => text.replace('[', "<").replace(']', ">"),
        "rbd" => text
            .lines()
            .map(|l| {
                l.replace(" [ --", ", --")
                    .replace(" ] arg", " ARG")
                    .replace(" ]", "")
                    .replacen(" arg ", " ARG ", 1)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "nvme" => {
            let mut plain = String::new();
            let mut esc = false;
            for c in text.chars() {
                match c {
                    '\u{1b}' => esc = true,
                    'm' if esc => esc = false,
                    _ if esc => {}
                    _ => plain.push(c),
                }
            }
            plain
                .lines()
                .map(|l| match l.trim_start().strip_prefix("[  ") {
                    Some(rest) => format!("  {}", rest.replacen(" ]", "  ", 1)),
                    None => l.to_owned(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        }
        _ => text.to_owned(),
    }
}

/// Tools whose help is cobra's: `-f, --filter filter   Filter…`, a lowercase type word
/// after the name for an option that takes a value (pigz writes its values `xxx`, Wireshark's tools
/// `pdml|ps|…` and `tap_name`, bash's `help printf` `-v var`).
pub(super) const COBRA: &[&str] = &[
    "docker", "podman", "helm", "pigz", "tshark", "dumpcap", "openssl", "printf",
];

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
    // Fifth round. Helps that show a value bare, or a getopt_long optional value as an
    // example (`--quiet=attach,personality`), or a value after a wide gap.
    (
        "hostname",
        "file",
        "help shows -F bare; getopt \"F:\" takes the file",
    ),
    ("kill", "list", "optional value shown as =[<signal>]"),
    (
        "udevadm",
        "export-prefix",
        "help shows -P bare; getopt \"P:\" takes the prefix",
    ),
    (
        "strace",
        "e",
        "-e is shown once with EXPR and again per qualifier",
    ),
    (
        "strace",
        "detach-on",
        "the value is shown as the word execve",
    ),
    ("strace", "quiet", "optional value, shown as examples"),
    (
        "strace",
        "absolute-timestamps",
        "optional value, shown as examples",
    ),
    (
        "strace",
        "strings-in-hex",
        "optional value, shown as examples",
    ),
    (
        "strace",
        "decode-pids",
        "shown with -Y, which takes no value",
    ),
    // iperf's helps put the placeholder after a wide gap (`-p, --port      #`) and
    // write required values with brackets (`-x [CDMSV]`).
    ("iperf3", "*", "placeholders after a wide gap"),
    ("iperf", "*", "placeholders after a wide gap or in brackets"),
    // prlimit's resource options take an optional attached value; the help shows them bare.
    ("prlimit", "*", "resource options: optional attached value"),
    // update-alternatives' commands take names and paths as operands (declared flags).
    ("update-alternatives", "*", "commands take their operands"),
    // debsums' help shows `--generate=[all][,keep[,nocheck]]`: optional.
    ("debsums", "generate", "optional value shown after ="),
    // yq's table is the union of Python yq, jq and Go yq: values are taken attached only.
    (
        "yq",
        "*",
        "values only attached, so argparse's options after them are seen",
    ),
    // 7-Zip's switch suffixes (`-bb3`, `-spf2`, `-ssc-`) are declared as separate names.
    ("7z", "*", "switch suffixes are separate names"),
    // smartctl's help shows `-B [+]FILE`: the `+` is part of the required value.
    (
        "smartctl",
        "drivedb",
        "a required value shown with brackets",
    ),
    // smartctl's help writes these values with commas (`-n MODE[,STATUS]`, `-v N,OPTION`),
    // and `-s` twice (`--smart=VALUE`, then `--set=NAME[,VALUE]`).
    ("smartctl", "nocheck", "a value written with commas"),
    ("smartctl", "vendorattribute", "a value written with commas"),
    (
        "smartctl",
        "smart",
        "shown twice, the second time with commas",
    ),
    // sar's help follows `-y` with a description in capitals (`TTY devices`).
    ("sar", "y", "a description in capitals"),
    // sar's `-F [MOUNT]`, `-I [SUM|ALL]`, `-o [FILE]`, …: the word is taken only when it is
    // a keyword or a file, never attached; declared as flags, the word is an operand.
    ("sar", "F", "an optional next word, never attached"),
    ("sar", "I", "an optional next word, never attached"),
    ("sar", "q", "an optional next word, never attached"),
    ("sar", "r", "an optional next word, never attached"),
    ("sar", "u", "an optional next word, never attached"),
    ("sar", "s", "an optional next word, never attached"),
    ("sar", "e", "an optional next word, never attached"),
    ("sar", "f", "an optional next word, never attached"),
    ("sar", "o", "an optional next word, never attached"),
    // btrfs subvolume list shows `-G [+|-]value`: the value is required, the sign optional.
    ("btrfs", "G", "a required value with an optional sign"),
    ("btrfs", "C", "a required value with an optional sign"),
    // snap (go-flags) shows an optional value as `--color=[auto|never|always]`.
    ("snap", "color", "go-flags optional value"),
    ("snap", "unicode", "go-flags optional value"),
    ("snap", "section", "go-flags optional value"),
    // rpm (popt) shows the packages after the mode (`-e, --erase=<package>+`).
    ("rpm", "erase", "operands shown after a mode option"),
    ("rpm", "upgrade", "operands shown after a mode option"),
    ("rpm", "setperms", "operands shown after a mode option"),
    // pacman shows the operand after the option (`-s, --search <regex>`, `-o, --owns <file>`).
    ("pacman", "owns", "operands shown after the option"),
    ("pacman", "file", "operands shown after the option"),
    ("pacman", "search", "operands shown after the option"),
    ("pacman", "list", "operands shown after the option"),
    // hdparm's help shows its value options bare or with a lowercase placeholder.
    ("hdparm", "offset", "help omits the value"),
    ("hdparm", "fibmap", "help omits the value"),
    ("hdparm", "read-sector", "help omits the value"),
    ("hdparm", "Iraw", "a lowercase placeholder"),
    // multipath's help writes its values in lowercase (`-v lvl`, `-b fil`).
    ("multipath", "v", "a lowercase placeholder"),
    ("multipath", "b", "a lowercase placeholder"),
    ("multipath", "R", "a lowercase placeholder"),
    ("multipath", "p", "a lowercase placeholder"),
    // dstat's help shows the list options by example (`-C 0,3,total`) and `--output file`.
    ("dstat", "C", "a value shown by example"),
    ("dstat", "D", "a value shown by example"),
    ("dstat", "I", "a value shown by example"),
    ("dstat", "N", "a value shown by example"),
    ("dstat", "S", "a value shown by example"),
    ("dstat", "output", "a lowercase placeholder"),
    // ripgrep's help starts description lines with these names bare (`--color flag
    // changes to 'never'`); their option lines show the value (`--color <WHEN>`).
    ("rg", "color", "description lines name it bare"),
    ("rg", "max-filesize", "description lines name it bare"),
    ("rg", "pre-glob", "description lines name it bare"),
    ("rg", "type-add", "description lines name it bare"),
    // ag's help shows the color options without their value, and `-G` with its
    // PATTERN after two spaces.
    ("ag", "color-line-number", "help omits the value"),
    ("ag", "color-match", "help omits the value"),
    ("ag", "color-path", "help omits the value"),
    ("ag", "file-search-regex", "placeholder after two spaces"),
    // lxc-ls's help shows `-F, --fancy-format` and `-g --groups` without their values;
    // `--nesting` is declared attached only: if it took the next word, `--nesting -o F`
    // would hide the log file.
    ("lxc-ls", "fancy-format", "help omits the value"),
    ("lxc-ls", "groups", "help omits the value"),
    (
        "lxc-ls",
        "nesting",
        "declared attached only, the safe reading",
    ),
    // virsh's help writes `-c | --connect=URI`, which the parser does not read.
    ("virsh", "*", "help writes the names with a bar"),
    // tree writes its placeholders in lowercase (`-L level`, `-o filename`).
    ("tree", "*", "lowercase placeholders"),
    // sensors' help shows `-c, --config-file` without its FILE.
    ("sensors", "config-file", "help omits the value"),
    // file's help shows `-P, --parameter` without its NAME=VALUE.
    ("file", "parameter", "help omits the value"),
    // faillog's placeholder `LOGIN/RANGE` has a slash.
    ("faillog", "user", "placeholder with a slash"),
];

/// Tools that parse with getopt_long_only, whose help writes long options with one dash
/// (`-iL <file>:`, `-oN/-oX <file>:`, `--min-rate <number>:`).
pub(super) const LONG_ONLY: &[&str] = &["nmap", "7z"];

/// Long-only tools whose help is otherwise getopt-like, one option a line with its
/// placeholder (`-readonly`, `-cmd COMMAND`): sqlite3.
pub(super) const SINGLE_DASH: &[&str] = &["sqlite3", "openssl"];
