//! Property tests: no combination of a corpus read with a corpus write is ever read-only,
//! and `classify` never panics on arbitrary input.

use crate::support;
use proptest::prelude::*;
use std::sync::OnceLock;
use vigil_shared::policy::{Intent, classify};

fn split() -> &'static (Vec<String>, Vec<String>) {
    static SPLIT: OnceLock<(Vec<String>, Vec<String>)> = OnceLock::new();
    SPLIT.get_or_init(|| {
        let cases = support::all_cases();
        let pick = |label: &str| {
            cases
                .iter()
                .filter(|c| c.expected == label)
                .map(|c| c.command.clone())
                .collect::<Vec<_>>()
        };
        (pick("read"), pick("write"))
    })
}

fn single_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Every way of putting a write next to a read that the issue lists. A read that ends in a
/// comment (`ls # note`) comments out whatever follows on its line, for the shell as for
/// us, so it is only combined across a line break.
fn combinations(r: &str, w: &str) -> Vec<String> {
    if r.contains(" #") || r.contains("\n#") || r.starts_with('#') {
        return vec![format!("{r}\n{w}"), format!("{w} & {r}")];
    }
    vec![
        format!("{r}; {w}"),
        format!("{r} && {w}"),
        format!("{r} || {w}"),
        format!("{r} | {w}"),
        format!("{r}\n{w}"),
        format!("{w} & {r}"),
        format!("{r} $({w})"),
        format!("bash -c {}", single_quote(&format!("{r}; {w}"))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("VIGIL_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000), ..ProptestConfig::default() })]

    #[test]
    fn read_combined_with_write_is_never_read(ri in any::<prop::sample::Index>(), wi in any::<prop::sample::Index>()) {
        let (reads, writes) = split();
        let r = ri.get(reads);
        let w = wi.get(writes);
        for cmd in combinations(r, w) {
            let c = classify(&cmd);
            prop_assert_eq!(c.intent, Intent::WriteOrUnknown, "{:?} classified {:?}: {:?}", cmd, c.intent, c.reasons);
        }
    }

    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = classify(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn never_panics_on_shell_like_text(s in "[a-z$(){};|&<>'\"\\\\ \n=*?\\[\\]#!~`-]{0,200}") {
        let c = classify(&s);
        // Anything that reads must also survive a re-run with the same answer.
        prop_assert_eq!(classify(&s), c);
    }
}

#[test]
fn every_pair_of_the_handbook_floor() {
    // Exhaustive over the handbook's own reads and writes (small enough to try all pairs).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/handbook/corpus/commands.tsv");
    if !root.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "handbook corpus missing under CI"
        );
        return;
    }
    let cases = support::load(&root);
    let reads: Vec<_> = cases.iter().filter(|c| c.expected == "read").collect();
    let writes: Vec<_> = cases.iter().filter(|c| c.expected == "write").collect();
    let mut leaks = Vec::new();
    for r in &reads {
        for w in &writes {
            for cmd in combinations(&r.command, &w.command) {
                if classify(&cmd).intent != Intent::WriteOrUnknown {
                    leaks.push(cmd);
                }
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "{} combinations classified read, e.g. {:?}",
        leaks.len(),
        leaks.first()
    );
}

proptest! {
    #[test]
    fn resource_ids_round_trip(kind in 0usize..10, a in "[a-z0-9][a-z0-9._-]{0,20}", b in "[a-z0-9][a-z0-9._-]{0,20}", c in "[a-z0-9][a-z0-9._-]{0,20}", vmid in 100u32..999_999) {
        use vigil_shared::resource::ResourceId;
        let id = match kind {
            0 => ResourceId::Node(a),
            1 => ResourceId::Host(a),
            2 => ResourceId::Lxc { node: a, vmid },
            3 => ResourceId::Vm { node: a, vmid },
            4 => ResourceId::DockerContainer { host: a, id: b },
            5 => ResourceId::Pod { cluster: a, namespace: b, name: c },
            6 => ResourceId::Cluster(a),
            7 => ResourceId::Namespace { cluster: a, namespace: b },
            8 => ResourceId::KubeNode { cluster: a, name: b },
            _ => ResourceId::Deployment { cluster: a, namespace: b, name: c },
        };
        prop_assert_eq!(id.to_string().parse::<ResourceId>(), Ok(id));
    }
}
