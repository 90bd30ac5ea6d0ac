use super::*;

fn agent(host: &str, labels: &[(&str, &str)]) -> EnrolledAgent {
    EnrolledAgent {
        id: AgentId::new_random(),
        hostname: host.into(),
        labels: labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    }
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn fleet() -> Vec<EnrolledAgent> {
    vec![
        agent("web1", &[("env", "prod"), ("role", "web")]),
        agent("web2", &[("env", "staging"), ("role", "web")]),
        agent("db1", &[("env", "prod"), ("role", "db")]),
    ]
}

fn no_resources(id: &ResourceId) -> Result<Route> {
    Err(Error::NotFound(format!("no resource {id}")))
}

fn hosts(targets: &[Target]) -> Vec<&str> {
    targets.iter().map(|t| t.host.as_str()).collect()
}

#[test]
fn a_selection_must_name_something() {
    let error = Selection::default().check().unwrap_err();
    assert_eq!(error.api_code(), "INVALID_INPUT");
    assert!(error.to_string().contains("all: true"), "{error}");
    let blank = Selection {
        targets: vec![" ".into()],
        ..Selection::default()
    };
    assert!(blank.check().is_err());
    let all = Selection {
        all: true,
        ..Selection::default()
    };
    assert!(all.check().is_ok());
}

#[test]
fn all_is_every_enrolled_host_in_order() {
    let fleet = fleet();
    let all = Selection {
        all: true,
        ..Selection::default()
    };
    let targets = select(&all, &fleet, no_resources).unwrap();
    assert_eq!(hosts(&targets), ["web1", "web2", "db1"]);
    for (i, (target, agent)) in targets.iter().zip(&fleet).enumerate() {
        assert_eq!(target.index, i);
        assert_eq!(target.name, agent.id.to_string());
        let Plan::Run(route) = &target.plan else {
            panic!("an enrolled agent has a route");
        };
        assert_eq!((route.agent, &route.target), (agent.id, &ExecTarget::Host));
    }
}

#[test]
fn labels_keep_agents_carrying_every_pair() {
    let fleet = fleet();
    let by = |pairs: &[(&str, &str)]| {
        let selection = Selection {
            labels: labels(pairs),
            ..Selection::default()
        };
        let targets = select(&selection, &fleet, no_resources).unwrap();
        hosts(&targets)
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(by(&[("env", "prod")]), ["web1", "db1"]);
    assert_eq!(by(&[("env", "prod"), ("role", "web")]), ["web1"]);
    assert_eq!(by(&[("role", "web")]), ["web1", "web2"]);
    assert!(by(&[("env", "dev")]).is_empty());
    assert!(by(&[("env", "prod"), ("role", "cache")]).is_empty());
}

#[test]
fn targets_add_to_all_run_once_and_labels_filter_them() {
    let fleet = fleet();
    let unknown = AgentId::new_random();
    let selection = Selection {
        all: true,
        targets: vec![fleet[2].id.to_string(), unknown.to_string()],
        ..Selection::default()
    };
    let targets = select(&selection, &fleet, no_resources).unwrap();
    assert_eq!(
        hosts(&targets),
        ["web1", "web2", "db1", ""],
        "db1 runs once"
    );
    let Plan::Unresolved(error) = &targets[3].plan else {
        panic!("an unknown agent is reported");
    };
    assert_eq!(error.api_code(), "NOT_FOUND");

    let filtered = Selection {
        targets: vec![
            fleet[1].id.to_string(),
            fleet[2].id.to_string(),
            unknown.to_string(),
        ],
        labels: labels(&[("env", "prod")]),
        ..Selection::default()
    };
    let targets = select(&filtered, &fleet, no_resources).unwrap();
    assert_eq!(
        hosts(&targets),
        ["db1", ""],
        "web2 is not prod; the unknown id stays reported"
    );
}

#[test]
fn resources_route_along_their_chain_and_bad_ids_are_invalid() {
    let fleet = fleet();
    let node = fleet[0].id;
    let route = |id: &ResourceId| -> Result<Route> {
        match id.to_string().as_str() {
            "lxc:pve:141" => Ok(Route {
                agent: node,
                target: ExecTarget::Lxc(141),
                resource: Some(id.clone()),
            }),
            "node:pve" => Ok(Route {
                agent: node,
                target: ExecTarget::Host,
                resource: Some(id.clone()),
            }),
            _ => Err(Error::ResourceOffline {
                resource: id.to_string(),
                agents: Vec::new(),
            }),
        }
    };
    let selection = Selection {
        targets: vec![
            "lxc:pve:141".into(),
            "lxc:pve:141".into(),
            "node:pve".into(),
            fleet[0].id.to_string(),
            "vm:pve:200".into(),
        ],
        ..Selection::default()
    };
    let targets = select(&selection, &fleet, route).unwrap();
    let names: Vec<&str> = targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["lxc:pve:141", "node:pve", "vm:pve:200"],
        "a repeated route runs once; the node's host and web1's host are the same"
    );
    assert_eq!(hosts(&targets), ["web1", "web1", ""]);
    let Plan::Unresolved(error) = &targets[2].plan else {
        panic!("an offline resource is reported");
    };
    assert_eq!(error.api_code(), "AGENT_OFFLINE");

    let bad = Selection {
        targets: vec!["not an id".into()],
        ..Selection::default()
    };
    let Err(error) = select(&bad, &fleet, route) else {
        panic!("a malformed target is refused");
    };
    assert_eq!(error.api_code(), "INVALID_INPUT");
    assert!(error.to_string().contains("not an id"), "{error}");
}

#[test]
fn the_audit_text_names_the_selection_and_bounds_long_lists() {
    let selection = Selection {
        all: true,
        targets: (0..7).map(|i| format!("t{i}")).collect(),
        labels: labels(&[("env", "prod"), ("role", "db")]),
    };
    assert_eq!(
        selection.describe(),
        "all + targets t0, t1, t2, t3, t4 (+2 more) + labels env=prod,role=db"
    );
}
