//! Which block device nodes hold a hidden file: a read that may open a disk read-only
//! (`blkid` needs to) could otherwise pull a hidden file off the raw device (`debugfs -R
//! cat`, `dd | strings`). For each hidden path this finds the device its filesystem is on
//! (its `st_dev`, or the mount's source for filesystems such as btrfs that report an
//! anonymous device), the whole disk of a partition, and every device beneath a mapper or
//! RAID device (`slaves/` in sysfs), then the nodes under `/dev` with those numbers.
//!
//! Not covered: filesystems without a block device of their own on this host (ZFS
//! datasets, whose vdevs the pool names; network filesystems). `docs/sandbox.md` says so.

use nix::sys::stat::{major, makedev, minor};
use std::collections::BTreeSet;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Directories under `/dev` that never hold block devices.
const SKIP: &[&str] = &["pts", "shm", "mqueue", "hugepages", "fd", "char"];

/// The block device nodes under `/dev` that hold any of `paths`.
pub fn holding(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut devices = BTreeSet::new();
    for path in paths {
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        devices.extend(backing(meta.dev(), &mountinfo));
    }
    let devices = with_parents_and_slaves(devices);
    if devices.is_empty() {
        return Vec::new();
    }
    let mut nodes = Vec::new();
    walk(Path::new("/dev"), 0, &devices, &mut nodes);
    nodes.sort();
    nodes
}

/// The block devices behind a filesystem's device number.
fn backing(dev: u64, mountinfo: &str) -> Vec<u64> {
    let mut out = Vec::new();
    if sysfs(dev).is_some() {
        out.push(dev);
    }
    let id = format!("{}:{}", major(dev), minor(dev));
    for line in mountinfo.lines() {
        let mut fields = line.split(' ');
        if fields.nth(2) != Some(id.as_str()) {
            continue;
        }
        let Some((_, after)) = line.split_once(" - ") else {
            continue;
        };
        let Some(source) = after.split(' ').nth(1) else {
            continue;
        };
        if let Ok(meta) = std::fs::metadata(source)
            && meta.file_type().is_block_device()
        {
            out.push(meta.rdev());
        }
    }
    out
}

/// The sysfs directory of a block device.
fn sysfs(dev: u64) -> Option<PathBuf> {
    let link = format!("/sys/dev/block/{}:{}", major(dev), minor(dev));
    std::fs::canonicalize(link).ok()
}

/// The device number in a sysfs `dev` file (`8:1`).
fn read_dev(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(dir.join("dev")).ok()?;
    let (maj, min) = text.trim().split_once(':')?;
    Some(makedev(maj.parse().ok()?, min.parse().ok()?))
}

/// Add the disk of every partition and every device a mapper or RAID device sits on.
fn with_parents_and_slaves(start: BTreeSet<u64>) -> BTreeSet<u64> {
    let mut done = BTreeSet::new();
    let mut work: Vec<u64> = start.into_iter().collect();
    while let Some(dev) = work.pop() {
        if !done.insert(dev) || done.len() > 4096 {
            continue;
        }
        let Some(dir) = sysfs(dev) else { continue };
        if dir.join("partition").exists()
            && let Some(parent) = dir.parent().and_then(read_dev)
        {
            work.push(parent);
        }
        if let Ok(slaves) = std::fs::read_dir(dir.join("slaves")) {
            for slave in slaves.flatten() {
                if let Some(d) = std::fs::canonicalize(slave.path())
                    .ok()
                    .and_then(|p| read_dev(&p))
                {
                    work.push(d);
                }
            }
        }
    }
    done
}

fn walk(dir: &Path, depth: usize, devices: &BTreeSet<u64>, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let kind = meta.file_type();
        if kind.is_block_device() && devices.contains(&meta.rdev()) {
            out.push(entry.path());
        } else if kind.is_dir()
            && depth < 3
            && !(depth == 0 && SKIP.iter().any(|s| entry.file_name() == *s))
        {
            walk(&entry.path(), depth + 1, devices, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_filesystem_device_is_found_when_it_has_one() {
        // Whatever the machine: never panics, and every node found is a block device.
        for node in holding(&[PathBuf::from("/")]) {
            let meta = node.symlink_metadata().unwrap();
            assert!(meta.file_type().is_block_device(), "{}", node.display());
        }
    }
}
