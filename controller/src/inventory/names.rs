//! How a name a person types finds a resource: by id, name or alias exactly, then (for a
//! mention) by a prefix of at least [`MIN_PREFIX`] characters, then by a whole
//! `-`/`_`/`.` separated part ("jellyfin" finds `jellyfin-server`). The best tier that
//! matches decides; several resources in it are ambiguous. Chat's `@NAME`, its prefetch
//! and the API's `target` (`vigil-controller exec --target NAME`) all resolve this way.
//!
//! Pure: the candidates come from the inventory's search.

use vigil_shared::resource::Resource;

/// Shortest prefix that may match a mention.
pub const MIN_PREFIX: usize = 4;

/// A resource's name and aliases, lower-cased.
pub fn lower_names(resource: &Resource) -> impl Iterator<Item = String> + '_ {
    std::iter::once(resource.name.to_lowercase())
        .chain(resource.aliases.iter().map(|a| a.to_lowercase()))
}

fn parts(name: &str) -> impl Iterator<Item = &str> {
    name.split(['-', '_', '.']).filter(|p| !p.is_empty())
}

/// The resources `token` names, by the best tier that matches (`prefix`: allow prefixes).
pub fn match_token(token: &str, candidates: &[Resource], prefix: bool) -> Vec<Resource> {
    let token = token.to_lowercase();
    let exact: Vec<Resource> = candidates
        .iter()
        .filter(|r| r.id.to_string().to_lowercase() == token || lower_names(r).any(|n| n == token))
        .cloned()
        .collect();
    if !exact.is_empty() {
        return exact;
    }
    if prefix && token.chars().count() >= MIN_PREFIX {
        let prefixed: Vec<Resource> = candidates
            .iter()
            .filter(|r| lower_names(r).any(|n| n.starts_with(&token)))
            .cloned()
            .collect();
        if !prefixed.is_empty() {
            return prefixed;
        }
    }
    candidates
        .iter()
        .filter(|r| lower_names(r).any(|n| parts(&n).any(|p| p == token)))
        .cloned()
        .collect()
}

/// How a person reads a resource: `name (kind)`, as the candidates of an ambiguous name
/// are listed.
pub fn describe(resource: &Resource) -> String {
    format!(
        "{} ({}, {})",
        resource.name,
        resource.kind.as_str(),
        resource.id
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(id: &str, name: &str, aliases: &[&str]) -> Resource {
        let id: vigil_shared::resource::ResourceId = id.parse().unwrap();
        Resource {
            kind: id.kind(),
            id,
            name: name.to_owned(),
            aliases: aliases.iter().map(|a| (*a).to_owned()).collect(),
            parent: None,
            status: "running".into(),
            paths: Vec::new(),
            facts: Default::default(),
        }
    }

    #[test]
    fn the_best_tier_decides() {
        let all = vec![
            resource("lxc:pve1:101", "jellyfin-server", &[]),
            resource("lxc:pve1:102", "jelly", &["media"]),
            resource("vm:pve1:200", "web-frontend", &[]),
            resource("vm:pve1:201", "web-backend", &[]),
        ];
        let names =
            |found: Vec<Resource>| -> Vec<String> { found.into_iter().map(|r| r.name).collect() };
        assert_eq!(names(match_token("JELLY", &all, true)), ["jelly"]);
        assert_eq!(names(match_token("media", &all, true)), ["jelly"]);
        assert_eq!(
            names(match_token("lxc:pve1:101", &all, true)),
            ["jellyfin-server"]
        );
        assert_eq!(
            names(match_token("jellyf", &all, true)),
            ["jellyfin-server"]
        );
        assert!(match_token("jellyf", &all, false).is_empty());
        assert_eq!(names(match_token("web", &all, true)).len(), 2);
        assert_eq!(
            names(match_token("frontend", &all, false)),
            ["web-frontend"]
        );
        assert!(match_token("nothing", &all, true).is_empty());
    }
}
