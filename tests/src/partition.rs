//! Network partitions for tests: nftables rules that drop every packet to and from one
//! TCP port on this host (needs root and nftables; `.ci/run` installs it).

use std::process::Command;

/// The nftables table that holds one test's partition; removed when dropped.
#[derive(Debug)]
pub struct Partition {
    table: String,
}

fn nft(args: &[&str]) -> bool {
    Command::new("nft")
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

impl Partition {
    /// Drops every packet to and from `port` on this host.
    pub fn cut(port: u16) -> Partition {
        let table = format!("vigil_partition_{port}");
        let partition = Partition { table };
        let t = partition.table.as_str();
        let p = port.to_string();
        assert!(nft(&["add", "table", "inet", t]), "nft add table");
        for (chain, hook) in [("in", "input"), ("out", "output")] {
            let spec = format!("{{ type filter hook {hook} priority 0; policy accept; }}");
            assert!(
                nft(&["add", "chain", "inet", t, chain, &spec]),
                "nft add chain"
            );
            for dir in ["dport", "sport"] {
                assert!(
                    nft(&["add", "rule", "inet", t, chain, "tcp", dir, &p, "drop"]),
                    "nft add rule"
                );
            }
        }
        partition
    }

    /// Lets the packets through again.
    pub fn heal(self) {}
}

impl Drop for Partition {
    fn drop(&mut self) {
        nft(&["delete", "table", "inet", &self.table]);
    }
}

/// Whether this machine can make partitions.
pub fn can_partition() -> bool {
    let ok = is_root() && nft(&["list", "tables"]);
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "the partition tests need root and nftables under CI"
        );
        eprintln!("skipping: partitions need root and nftables");
    }
    ok
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}
