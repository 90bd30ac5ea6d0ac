//! Killing a command that runs in a container: the engine gives the host pid of the
//! exec'd process; it and every descendant are stopped first (so none can fork away
//! while the tree is walked), then SIGKILLed.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::fs;
use tracing::{debug, warn};

/// Most rounds of looking for new descendants before killing what was found.
const MAX_ROUNDS: usize = 10;

/// Direct children of `pid`: from `/proc/<pid>/task/*/children`, or, where the kernel
/// lacks that file, from the parent field of every `/proc/*/stat`.
fn children(pid: i32) -> Vec<i32> {
    let tasks = fs::read_dir(format!("/proc/{pid}/task"));
    let mut found = Vec::new();
    let mut have_children_files = false;
    if let Ok(tasks) = tasks {
        for task in tasks.flatten() {
            if let Ok(list) = fs::read_to_string(task.path().join("children")) {
                have_children_files = true;
                found.extend(
                    list.split_whitespace()
                        .filter_map(|p| p.parse::<i32>().ok()),
                );
            }
        }
    }
    if !have_children_files {
        found = children_from_stat(pid);
    }
    found
}

fn children_from_stat(parent: i32) -> Vec<i32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| parent_of(&stat))
                == Some(parent)
        })
        .collect()
}

/// The parent pid in a `/proc/<pid>/stat` line (after the parenthesised command name,
/// which may itself contain spaces and parentheses).
pub fn parent_of(stat: &str) -> Option<i32> {
    let (_, rest) = stat.rsplit_once(')')?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// `pid` and all its descendants, stopped with SIGSTOP so the set cannot grow.
fn stop_tree(pid: i32) -> BTreeSet<i32> {
    let mut tree = BTreeSet::new();
    for _ in 0..MAX_ROUNDS {
        let mut frontier = vec![pid];
        let mut grew = false;
        while let Some(p) = frontier.pop() {
            if tree.insert(p) {
                grew = true;
                let _ = kill(Pid::from_raw(p), Signal::SIGSTOP);
            }
            frontier.extend(children(p));
        }
        if !grew {
            break;
        }
    }
    tree
}

/// Whether `pid` (a host pid the engine reported) is, to this agent, a process of the
/// container `container_id` whose main process is `container_pid`: its cgroup names the
/// container, or it shares the main process's pid namespace and that namespace is not
/// the agent's own. An agent that sees other pids than the engine (it runs in a pid
/// namespace of its own) never signals a stranger.
pub fn belongs_to(pid: i32, container_id: &str, container_pid: Option<i32>) -> bool {
    if container_id.len() >= 32
        && fs::read_to_string(format!("/proc/{pid}/cgroup")).is_ok_and(|c| c.contains(container_id))
    {
        return true;
    }
    let ns = |p: String| fs::read_link(format!("/proc/{p}/ns/pid")).ok();
    match (
        ns(pid.to_string()),
        container_pid.and_then(|c| ns(c.to_string())),
        ns("self".to_owned()),
    ) {
        (Some(a), Some(b), Some(own)) => a == b && a != own,
        _ => false,
    }
}

/// SIGKILL `pid` and its descendants. Returns how many processes were signalled; 0 when
/// the process was already gone.
pub fn kill_tree(pid: i32) -> usize {
    if pid <= 1 {
        warn!(pid, "refusing to kill a pid that is not a command's");
        return 0;
    }
    if kill(Pid::from_raw(pid), None).is_err() {
        return 0;
    }
    let tree = stop_tree(pid);
    let killed = tree
        .iter()
        .filter(|p| kill(Pid::from_raw(**p), Signal::SIGKILL).is_ok())
        .count();
    if killed < tree.len() {
        warn!(
            pid,
            processes = tree.len(),
            killed,
            "could not kill all of a container command's processes"
        );
    } else {
        debug!(
            pid,
            processes = killed,
            "killed a container command's processes"
        );
    }
    killed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_pid_is_read_after_the_command_name() {
        assert_eq!(parent_of("42 (sleep) S 7 42 42 0 -1"), Some(7));
        assert_eq!(parent_of("42 (a) b) (c) R 9 1 1"), Some(9));
        assert_eq!(parent_of("garbage"), None);
        assert_eq!(parent_of("1 (x)"), None);
    }

    #[test]
    fn a_process_tree_is_killed_whole() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 300 & sleep 300 & wait"])
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while children(pid).len() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let kids = children(pid);
        assert_eq!(kids.len(), 2, "{kids:?}");
        // A process of the agent's own namespace is nobody's container process.
        let me = i32::try_from(std::process::id()).unwrap();
        assert!(!belongs_to(pid, "", Some(me)));
        assert!(!belongs_to(pid, &"ab".repeat(32), Some(me)));
        assert_eq!(kill_tree(pid), 3);
        let status = child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        for kid in kids {
            // Reaped by init or a subreaper; either way no longer running.
            let gone = (0..200).any(|_| {
                let state = fs::read_to_string(format!("/proc/{kid}/stat"))
                    .ok()
                    .and_then(|s| s.rsplit_once(')').map(|(_, r)| r.trim().chars().next()));
                let dead = matches!(state, None | Some(Some('Z' | 'X')));
                if !dead {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                dead
            });
            assert!(gone, "child {kid} still runs");
        }
        assert_eq!(kill_tree(pid), 0);
    }
}
