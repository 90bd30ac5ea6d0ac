//! `pct config <vmid>` / `qm config <vmid>`: `key: value` lines, with comma-separated
//! `key=value` properties in the values.

use std::net::IpAddr;
use vigil_shared::resource::Mount;

/// What `pct config` / `qm config` says that the inventory uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GuestConfig {
    pub hostname: Option<String>,
    pub name: Option<String>,
    pub ostype: Option<String>,
    pub features: Option<String>,
    /// Lower case, sorted, once each.
    pub macs: Vec<String>,
    /// Static addresses without their prefix length, sorted, once each.
    pub ips: Vec<String>,
    /// `rootfs` first, then `mp0`, `mp1`, … in number order.
    pub mounts: Vec<Mount>,
    /// `features: nesting=1`.
    pub nesting: bool,
    /// `agent: 1` or `agent: enabled=1,…`.
    pub agent: bool,
}

/// The comma-separated properties of a config value: `(key, value)`, key `None` for the
/// leading keyless one (`local-lvm:vm-141-disk-0,size=8G`, `1,fstrim_cloned_disks=1`).
fn props(value: &str) -> impl Iterator<Item = (Option<&str>, &str)> {
    value
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (Some(k.trim()), v.trim()),
            None => (None, p),
        })
}

fn prop<'a>(value: &'a str, key: &str) -> Option<&'a str> {
    props(value).find_map(|(k, v)| (k == Some(key)).then_some(v))
}

/// Proxmox's booleans: `1`, `yes`, `on`, `true` (any case).
fn truthy(value: &str) -> bool {
    matches!(
        value.to_ascii_lowercase().as_str(),
        "1" | "yes" | "on" | "true"
    )
}

/// A MAC address as `aa:bb:cc:dd:ee:ff`, or `None`.
pub fn mac(value: &str) -> Option<String> {
    let parts: Vec<&str> = value.split(':').collect();
    (parts.len() == 6
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit())))
    .then(|| value.to_ascii_lowercase())
}

/// `192.168.1.41/24` → `192.168.1.41`; `dhcp`, `auto`, `manual` and junk → `None`.
fn ip(value: &str) -> Option<String> {
    let address = value.split_once('/').map_or(value, |(a, _)| a);
    address.parse::<IpAddr>().ok().map(|a| a.to_string())
}

/// `mp3` → `Some(3)` for prefix `mp`.
fn index_of(key: &str, prefix: &str) -> Option<u32> {
    key.strip_prefix(prefix)?.parse().ok()
}

/// A mount point (`rootfs`, `mpN`): the volume or host path and where it appears inside.
fn mount(value: &str, path: Option<&str>) -> Option<Mount> {
    let host_path = props(value).find_map(|(k, v)| match k {
        None | Some("volume") => Some(v),
        _ => None,
    })?;
    let path = path.or_else(|| prop(value, "mp"))?;
    Some(Mount {
        host_path: host_path.to_owned(),
        path: path.to_owned(),
        read_only: prop(value, "ro").is_some_and(truthy),
    })
}

/// `pct config <vmid>` or `qm config <vmid>`: `key: value` lines up to the first snapshot
/// section (`[name]`). Lines that are not `key: value` are skipped.
pub fn config(text: &str) -> GuestConfig {
    let mut config = GuestConfig::default();
    let mut mounts: Vec<(i64, Mount)> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            break;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            continue;
        }
        let some = || Some(value.to_owned()).filter(|v| !v.is_empty());
        match key {
            "hostname" => config.hostname = some(),
            "name" => config.name = some(),
            "ostype" => config.ostype = some(),
            "features" => {
                config.features = some();
                config.nesting = prop(value, "nesting").is_some_and(truthy);
            }
            "agent" => {
                config.agent = props(value)
                    .find_map(|(k, v)| matches!(k, None | Some("enabled")).then_some(v))
                    .is_some_and(truthy);
            }
            "rootfs" => mounts.extend(mount(value, Some("/")).map(|m| (-1, m))),
            _ if index_of(key, "net").is_some() => {
                for (k, v) in props(value) {
                    if k.is_some_and(|k| k == "ip" || k == "ip6") {
                        config.ips.extend(ip(v));
                    } else if k.is_some() {
                        config.macs.extend(mac(v));
                    }
                }
            }
            _ if index_of(key, "ipconfig").is_some() => {
                for (k, v) in props(value) {
                    if k.is_some_and(|k| k == "ip" || k == "ip6") {
                        config.ips.extend(ip(v));
                    }
                }
            }
            _ => {
                if let Some(n) = index_of(key, "mp") {
                    mounts.extend(mount(value, None).map(|m| (i64::from(n), m)));
                }
            }
        }
    }
    mounts.sort_by_key(|(n, _)| *n);
    config.mounts = mounts.into_iter().map(|(_, m)| m).collect();
    config.macs.sort();
    config.macs.dedup();
    config.ips.sort();
    config.ips.dedup();
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lxc_config_gives_hostname_network_mounts_and_nesting() {
        let c = config(
            "arch: amd64\n\
             features: keyctl=1,nesting=1\n\
             hostname: media\n\
             mp1: local-lvm:vm-141-disk-1,mp=/srv/config,backup=1,size=16G\n\
             mp0: /tank/media,mp=/media,ro=1\n\
             mp2: volume=/tank/dl,mp=/downloads,ro=0\n\
             mp3: /no/target\n\
             net0: name=eth0,bridge=vmbr0,gw=192.168.1.1,hwaddr=BC:24:11:5E:7D:2A,ip=192.168.1.41/24,ip6=fd00::41/64,type=veth\n\
             net1: name=eth1,hwaddr=not-a-mac,ip=dhcp,ip6=auto\n\
             rootfs: local-lvm:vm-141-disk-0,size=8G\n\
             garbage line without a colon\n\
             : empty key\n\
             [snapshot]\n\
             hostname: old\n\
             net0: name=eth0,hwaddr=00:00:00:00:00:01\n",
        );
        assert_eq!(c.hostname.as_deref(), Some("media"));
        assert!(c.nesting);
        assert_eq!(c.features.as_deref(), Some("keyctl=1,nesting=1"));
        assert_eq!(c.macs, ["bc:24:11:5e:7d:2a"]);
        assert_eq!(c.ips, ["192.168.1.41", "fd00::41"]);
        let mounts: Vec<(&str, &str, bool)> = c
            .mounts
            .iter()
            .map(|m| (m.host_path.as_str(), m.path.as_str(), m.read_only))
            .collect();
        assert_eq!(
            mounts,
            [
                ("local-lvm:vm-141-disk-0", "/", false),
                ("/tank/media", "/media", true),
                ("local-lvm:vm-141-disk-1", "/srv/config", false),
                ("/tank/dl", "/downloads", false),
            ]
        );
        assert!(!config("features: nesting=0\n").nesting);
        assert!(!config("features: keyctl=1\n").nesting);
    }

    #[test]
    fn vm_config_gives_macs_of_every_model_and_the_agent_flag() {
        let c = config(
            "agent: 1\nname: haos\nnet0: virtio=02:A1:B2:C3:D4:E5,bridge=vmbr0\n\
             net1: e1000=BC:24:11:77:88:99,bridge=vmbr1\nnet2: model=vmxnet3,macaddr=aa:bb:cc:dd:ee:0f\n\
             ipconfig0: ip=192.168.1.64/24,gw=192.168.1.1\nipconfig1: ip=dhcp\n",
        );
        assert!(c.agent);
        assert_eq!(c.name.as_deref(), Some("haos"));
        assert_eq!(
            c.macs,
            [
                "02:a1:b2:c3:d4:e5",
                "aa:bb:cc:dd:ee:0f",
                "bc:24:11:77:88:99"
            ]
        );
        assert_eq!(c.ips, ["192.168.1.64"]);
        for (line, enabled) in [
            ("agent: 1", true),
            ("agent: enabled=1,fstrim_cloned_disks=1", true),
            ("agent: 1,type=virtio", true),
            ("agent: yes", true),
            ("agent: 0", false),
            ("agent: enabled=0,fstrim_cloned_disks=1", false),
            ("agent: fstrim_cloned_disks=1", false),
            ("agent:", false),
            ("name: x", false),
            ("[snap]\nagent: 1", false),
        ] {
            assert_eq!(config(line).agent, enabled, "{line}");
        }
    }

    #[test]
    fn macs_and_ips_are_validated() {
        assert_eq!(
            mac("BC:24:11:5E:7D:2A").as_deref(),
            Some("bc:24:11:5e:7d:2a")
        );
        for bad in [
            "",
            "bc:24:11:5e:7d",
            "bc:24:11:5e:7d:2a:00",
            "bc-24-11-5e-7d-2a",
            "gg:24:11:5e:7d:2a",
            "b:24:11:5e:7d:2aa",
        ] {
            assert_eq!(mac(bad), None, "{bad}");
        }
        assert_eq!(ip("10.0.0.1/8").as_deref(), Some("10.0.0.1"));
        assert_eq!(ip("10.0.0.1").as_deref(), Some("10.0.0.1"));
        for bad in ["dhcp", "auto", "manual", "", "10.0.0/8"] {
            assert_eq!(ip(bad), None, "{bad}");
        }
    }
}
