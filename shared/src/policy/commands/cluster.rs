//! Status forms of cluster and virtualization tools a self-hosting operator meets: libvirt's
//! `virsh`, HashiCorp's `consul`, `vault` and `nomad`, and `etcdctl`. Each is read with its
//! option table (`rules/TOOL.toml`): only a listed subcommand (or subcommand path) with
//! declared options is a read; everything else, a subcommand computed at run time, or an
//! undeclared option (it may take a value that would then be taken for the subcommand) is
//! not. Interactive shells (`virsh` alone) and followers (`consul monitor`, `etcdctl
//! watch`) are not reads.

use super::super::verdict::Verdict;
use super::Cmd;

pub(crate) fn classify(cmd: &Cmd<'_>) -> Option<Verdict> {
    let v = match cmd.name {
        "virsh" | "consul" | "vault" | "nomad" | "etcdctl" => cmd.by_table(cmd.name),
        _ => return None,
    };
    Some(v)
}
