//! The built-in checks: for each, the read-only commands it runs on a resource and what
//! their output means. Pure: no I/O, the output and the time come in, problems go out.
//! Every command here is one the classifier proves read-only (a test runs them all
//! through it), and output is data: a check only compares numbers and states in it.

use serde::{Deserialize, Serialize};
use vigil_shared::resource::{Resource, ResourceKind};

use crate::findings::Severity;

/// A built-in check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// Used space of each filesystem (percent).
    Disk,
    /// Used inodes of each filesystem (percent).
    Inodes,
    /// Memory in use, from `MemAvailable` (percent).
    Memory,
    /// systemd units in the `failed` state.
    SystemdUnits,
    /// Docker containers restarting or unhealthy.
    Containers,
    /// ZFS pools not ONLINE.
    Zfs,
    /// Certificate files close to expiry (days left).
    Certificates,
    /// Certificates served on the host's listening TLS ports close to expiry (days left).
    TlsPorts,
    /// Proxmox guests set to start on boot that are not running.
    ProxmoxOnboot,
    /// Agents that have not been connected for a while (minutes); runs in the controller.
    AgentOffline,
}

impl Check {
    /// Every check.
    pub const ALL: [Check; 10] = [
        Check::Disk,
        Check::Inodes,
        Check::Memory,
        Check::SystemdUnits,
        Check::Containers,
        Check::Zfs,
        Check::Certificates,
        Check::TlsPorts,
        Check::ProxmoxOnboot,
        Check::AgentOffline,
    ];

    /// Its name (a finding's `check`).
    pub fn as_str(self) -> &'static str {
        match self {
            Check::Disk => "disk",
            Check::Inodes => "inodes",
            Check::Memory => "memory",
            Check::SystemdUnits => "systemd_units",
            Check::Containers => "containers",
            Check::Zfs => "zfs",
            Check::Certificates => "certificates",
            Check::TlsPorts => "tls_ports",
            Check::ProxmoxOnboot => "proxmox_onboot",
            Check::AgentOffline => "agent_offline",
        }
    }

    /// Parses a name.
    pub fn parse(text: &str) -> Option<Check> {
        Check::ALL.into_iter().find(|c| c.as_str() == text.trim())
    }

    /// The kinds of resource it runs on by default.
    pub fn default_kinds(self) -> &'static [ResourceKind] {
        match self {
            Check::ProxmoxOnboot => &[ResourceKind::Node],
            Check::AgentOffline => &[],
            _ => &[ResourceKind::Host],
        }
    }

    /// Default (warning, critical) thresholds: percent used, days left for certificates,
    /// minutes offline for agents; unused by the checks of states.
    pub fn default_thresholds(self) -> (f64, f64) {
        match self {
            Check::Disk | Check::Inodes => (90.0, 95.0),
            Check::Memory => (90.0, 95.0),
            Check::Certificates | Check::TlsPorts => (21.0, 7.0),
            Check::AgentOffline => (10.0, 60.0),
            _ => (0.0, 0.0),
        }
    }

    /// The commands it runs on a resource: `files` are the certificate files to look at,
    /// `ports` the resource's listening ports to ask for their certificate.
    pub fn commands(self, files: &[String], ports: &[u16]) -> Vec<String> {
        match self {
            Check::Disk => vec!["df -P -T".into()],
            Check::Inodes => vec!["df -P -T -i".into()],
            Check::Memory => vec!["cat /proc/meminfo".into()],
            Check::SystemdUnits => {
                vec!["systemctl list-units --state=failed --no-legend --plain --no-pager".into()]
            }
            Check::Containers => vec![
                "docker ps --all --no-trunc --format '{{.Names}}\t{{.State}}\t{{.Status}}'".into(),
            ],
            Check::Zfs => vec!["zpool list -H -o name,health".into()],
            Check::Certificates => files
                .iter()
                .filter(|f| is_plain_path(f))
                .map(|f| format!("openssl x509 -noout -enddate -in {f}"))
                .collect(),
            // The pipe's status is the second openssl's: it fails (and the port is
            // skipped) when the port served no certificate.
            Check::TlsPorts => ports
                .iter()
                .map(|port| {
                    format!(
                        "openssl s_client -connect 127.0.0.1:{port} </dev/null 2>/dev/null \
                         | openssl x509 -noout -enddate"
                    )
                })
                .collect(),
            Check::ProxmoxOnboot => vec![
                "grep -s -H '^onboot: *1' /etc/pve/local/qemu-server/*.conf /etc/pve/local/lxc/*.conf"
                    .into(),
            ],
            Check::AgentOffline => Vec::new(),
        }
    }
}

/// A path that can stand in a command as it is: absolute, no shell characters.
pub fn is_plain_path(path: &str) -> bool {
    path.starts_with('/')
        && path.len() <= 512
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+@".contains(c))
}

/// The output of one command a check ran.
#[derive(Debug, Clone, Default)]
pub struct Output {
    pub command: String,
    pub stdout: String,
    pub exit_code: Option<i32>,
}

/// One problem a check found.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// What in the resource (a mount point, a unit, a container).
    pub item: String,
    pub severity: Severity,
    pub summary: String,
    /// The command and the lines of its output that show the problem.
    pub evidence: String,
    /// A resource more precise than the checked one (a container of a host).
    pub resource: Option<(String, String)>,
}

/// What a check's run says.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// It ran: these are the problems (none: everything passes).
    Checked(Vec<Problem>),
    /// It does not apply here (no Docker, no systemd, no ZFS): nothing is resolved either.
    Skipped(String),
}

/// What a check knows besides its output.
#[derive(Debug, Clone, Default)]
pub struct Context<'a> {
    /// The checked resource's children in the inventory (containers, guests).
    pub children: &'a [Resource],
    /// (warning, critical) thresholds.
    pub thresholds: (f64, f64),
    /// Unix seconds.
    pub now: i64,
}

/// File system types whose use says nothing (read-only images, pseudo file systems).
const SKIP_FS_TYPES: [&str; 9] = [
    "squashfs", "iso9660", "udf", "devtmpfs", "overlay", "proc", "sysfs", "nsfs", "cgroup2",
];
/// Mount points under these are the system's or another tool's business.
const SKIP_MOUNTS: [&str; 6] = [
    "/proc",
    "/sys",
    "/dev",
    "/snap",
    "/var/lib/docker",
    "/run/docker",
];

/// Judges what `check` ran.
pub fn evaluate(check: Check, outputs: &[Output], ctx: &Context<'_>) -> Verdict {
    let Some(first) = outputs.first() else {
        return Verdict::Skipped("nothing to run".into());
    };
    match check {
        Check::Disk => filesystems(first, ctx, "full"),
        Check::Inodes => filesystems(first, ctx, "of its inodes used"),
        Check::Memory => memory(first, ctx),
        Check::SystemdUnits => failed_units(first),
        Check::Containers => containers(first, ctx),
        Check::Zfs => pools(first),
        Check::Certificates => certificates(outputs, ctx, |command| {
            command
                .rsplit(' ')
                .next()
                .map(|file| format!("certificate {file}"))
        }),
        Check::TlsPorts => certificates(outputs, ctx, |command| {
            let port = command.split("127.0.0.1:").nth(1)?.split(' ').next()?;
            Some(format!("port {port}"))
        }),
        Check::ProxmoxOnboot => onboot(first, ctx),
        Check::AgentOffline => Verdict::Skipped("runs in the controller".into()),
    }
}

fn evidence(output: &Output, lines: &[&str]) -> String {
    let mut text = format!("$ {}\n", output.command);
    for line in lines {
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// The severity of `value` against (warning, critical) thresholds that rise with it.
pub fn level(value: f64, (warning, critical): (f64, f64)) -> Option<Severity> {
    if value >= critical {
        Some(Severity::Critical)
    } else if value >= warning {
        Some(Severity::Warning)
    } else {
        None
    }
}

fn not_run(output: &Output) -> Option<Verdict> {
    (output.exit_code != Some(0) && output.stdout.trim().is_empty()).then(|| {
        Verdict::Skipped(format!(
            "`{}` exited with {:?}",
            output.command, output.exit_code
        ))
    })
}

/// `df -P -T [-i]`: Filesystem Type Size Used Avail Use% Mounted-on.
fn filesystems(output: &Output, ctx: &Context<'_>, what: &str) -> Verdict {
    if let Some(skipped) = not_run(output) {
        return skipped;
    }
    let mut lines = output.stdout.lines();
    let header = lines.next().unwrap_or("");
    let mut problems = Vec::new();
    for line in lines {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < 7 {
            continue;
        }
        let (source, fs_type, used, mount) =
            (fields[0], fields[1], fields[5], fields[6..].join(" "));
        // The read sandbox's masks over hidden paths are empty and full by design.
        if source == vigil_shared::hide::MASK_SOURCE
            || SKIP_FS_TYPES.contains(&fs_type)
            || fs_type.starts_with("fuse.")
        {
            continue;
        }
        if SKIP_MOUNTS
            .iter()
            .any(|m| mount == *m || mount.starts_with(&format!("{m}/")))
        {
            continue;
        }
        let Some(percent) = used.strip_suffix('%').and_then(|p| p.parse::<f64>().ok()) else {
            continue;
        };
        if let Some(severity) = level(percent, ctx.thresholds) {
            problems.push(Problem {
                summary: format!("{mount} is {percent}% {what}"),
                item: mount,
                severity,
                evidence: evidence(output, &[header, line]),
                resource: None,
            });
        }
    }
    Verdict::Checked(problems)
}

/// `/proc/meminfo`: the share of MemTotal not available.
fn memory(output: &Output, ctx: &Context<'_>) -> Verdict {
    let field = |name: &str| {
        output.stdout.lines().find_map(|line| {
            let rest = line.strip_prefix(name)?.strip_prefix(':')?;
            let value = rest.split_whitespace().next()?.parse::<f64>().ok()?;
            Some((value, line))
        })
    };
    let (Some((total, total_line)), Some((available, available_line))) =
        (field("MemTotal"), field("MemAvailable"))
    else {
        return Verdict::Skipped("no MemTotal or MemAvailable in /proc/meminfo".into());
    };
    if total <= 0.0 {
        return Verdict::Skipped("MemTotal is 0".into());
    }
    let used = ((1.0 - available / total) * 1000.0).round() / 10.0;
    let problems = level(used, ctx.thresholds)
        .map(|severity| Problem {
            item: "memory".into(),
            severity,
            summary: format!("{used}% of memory is in use"),
            evidence: evidence(output, &[total_line, available_line]),
            resource: None,
        })
        .into_iter()
        .collect();
    Verdict::Checked(problems)
}

/// `systemctl list-units --state=failed --plain --no-legend`: one failed unit per line.
fn failed_units(output: &Output) -> Verdict {
    if let Some(skipped) = not_run(output) {
        return skipped;
    }
    let problems = output
        .stdout
        .lines()
        .filter_map(|line| {
            let unit = line.split_whitespace().next()?;
            Some(Problem {
                item: unit.to_owned(),
                severity: Severity::Warning,
                summary: format!("systemd unit {unit} failed"),
                evidence: evidence(output, &[line]),
                resource: None,
            })
        })
        .collect();
    Verdict::Checked(problems)
}

/// `docker ps --all --format '{{.Names}}\t{{.State}}\t{{.Status}}'`.
fn containers(output: &Output, ctx: &Context<'_>) -> Verdict {
    if output.exit_code != Some(0) {
        return Verdict::Skipped(format!("`{}` did not run", output.command));
    }
    let mut problems = Vec::new();
    for line in output.stdout.lines() {
        let mut fields = line.split('\t');
        let (Some(name), Some(state), status) = (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let status = status.unwrap_or("");
        let (severity, summary) = if state == "restarting" {
            (
                Severity::Critical,
                format!("container {name} is restarting over and over"),
            )
        } else if status.contains("(unhealthy)") {
            (Severity::Warning, format!("container {name} is unhealthy"))
        } else {
            continue;
        };
        let resource = ctx
            .children
            .iter()
            .find(|r| r.kind == ResourceKind::DockerContainer && r.name == name)
            .map(|r| (r.id.to_string(), r.name.clone()));
        problems.push(Problem {
            item: format!("container {name}"),
            severity,
            summary,
            evidence: evidence(output, &[line]),
            resource,
        });
    }
    Verdict::Checked(problems)
}

/// `zpool list -H -o name,health`.
fn pools(output: &Output) -> Verdict {
    if output.exit_code != Some(0) {
        return Verdict::Skipped("no ZFS here".into());
    }
    let problems = output
        .stdout
        .lines()
        .filter_map(|line| {
            let (name, health) = line.split_once('\t')?;
            let health = health.trim();
            let severity = match health {
                "ONLINE" => return None,
                "DEGRADED" => Severity::Warning,
                _ => Severity::Critical,
            };
            Some(Problem {
                item: format!("pool {name}"),
                severity,
                summary: format!("ZFS pool {name} is {health}"),
                evidence: evidence(output, &[line]),
                resource: None,
            })
        })
        .collect();
    Verdict::Checked(problems)
}

/// `… openssl x509 -noout -enddate …`: `notAfter=Nov  7 01:02:03 2026 GMT`; `item` names
/// what a command looked at (`certificate FILE`, `port N`).
fn certificates(
    outputs: &[Output],
    ctx: &Context<'_>,
    item: impl Fn(&str) -> Option<String>,
) -> Verdict {
    let (warning_days, critical_days) = ctx.thresholds;
    let mut problems = Vec::new();
    for output in outputs {
        let Some(what) = item(&output.command) else {
            continue;
        };
        let Some((line, not_after)) = output.stdout.lines().find_map(|line| {
            let text = line.strip_prefix("notAfter=")?;
            Some((line, parse_openssl_time(text)?))
        }) else {
            continue;
        };
        let days = (not_after - ctx.now) as f64 / 86_400.0;
        let severity = if days <= critical_days {
            Severity::Critical
        } else if days <= warning_days {
            Severity::Warning
        } else {
            continue;
        };
        let label = if what.starts_with("port ") {
            format!("the certificate on {what}")
        } else {
            what.clone()
        };
        let summary = if days < 0.0 {
            format!("{label} has expired")
        } else {
            format!("{label} expires in {} days", days.floor())
        };
        problems.push(Problem {
            item: what,
            severity,
            summary,
            evidence: evidence(output, &[line]),
            resource: None,
        });
    }
    Verdict::Checked(problems)
}

/// `Nov  7 01:02:03 2026 GMT` as unix seconds.
pub fn parse_openssl_time(text: &str) -> Option<i64> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    let [month, day, clock, year, "GMT"] = fields.as_slice() else {
        return None;
    };
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| m == month)?;
    let month = time::Month::try_from(u8::try_from(month + 1).ok()?).ok()?;
    let mut hms = clock.split(':').map(|p| p.parse::<u8>().ok());
    let (h, m, s) = (hms.next()??, hms.next()??, hms.next()??);
    let date = time::Date::from_calendar_date(year.parse().ok()?, month, day.parse().ok()?).ok()?;
    let at = date.with_hms(h, m, s).ok()?.assume_utc();
    Some(at.unix_timestamp())
}

/// `grep -H '^onboot: *1' …/qemu-server/*.conf …/lxc/*.conf`: guests set to start on
/// boot, against the inventory's guests of this node and their states.
fn onboot(output: &Output, ctx: &Context<'_>) -> Verdict {
    if !matches!(output.exit_code, Some(0 | 1)) {
        return Verdict::Skipped("no Proxmox guest configuration here".into());
    }
    let mut problems = Vec::new();
    for line in output.stdout.lines() {
        let Some((path, _)) = line.split_once(':') else {
            continue;
        };
        let kind = if path.contains("/qemu-server/") {
            ResourceKind::Vm
        } else if path.contains("/lxc/") {
            ResourceKind::Lxc
        } else {
            continue;
        };
        let Some(vmid) = path
            .rsplit('/')
            .next()
            .and_then(|f| f.strip_suffix(".conf"))
        else {
            continue;
        };
        let guest = ctx
            .children
            .iter()
            .find(|r| r.kind == kind && r.id.to_string().rsplit(':').next() == Some(vmid));
        let Some(guest) = guest.filter(|g| g.status != "running") else {
            continue;
        };
        problems.push(Problem {
            item: format!("{} {vmid}", kind.as_str()),
            severity: Severity::Warning,
            summary: format!(
                "{} {} ({vmid}) is {} but set to start on boot",
                kind.as_str(),
                guest.name,
                guest.status
            ),
            evidence: evidence(output, &[line]),
            resource: Some((guest.id.to_string(), guest.name.clone())),
        });
    }
    Verdict::Checked(problems)
}

#[cfg(test)]
mod tests;
