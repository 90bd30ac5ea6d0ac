//! Detection, cluster naming and object mapping (the API is exercised in
//! `tests/kubernetes.rs`).

use super::convert::{owner_alias, pod_resource, valid_name};
use super::*;
use crate::config::Toggle;
use crate::kube_api::types::Pod;
use crate::platform::kubernetes::detect;
use serde_json::json;

const KUBECONFIG: &str = r#"apiVersion: v1
kind: Config
current-context: admin@home lab
clusters:
- name: "home lab:1"
  cluster:
    server: http://127.0.0.1:9
- name: other
  cluster:
    server: http://127.0.0.1:10
contexts:
- name: admin@home lab
  context:
    cluster: "home lab:1"
    user: admin
- name: other
  context:
    cluster: other
    user: admin
users:
- name: admin
  user:
    token: not-a-real-token
"#;

fn kubeconfig_file() -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(file.path(), KUBECONFIG).unwrap_or_else(|e| panic!("{e}"));
    file
}

#[test]
fn cluster_names_come_from_config_then_context_then_in_cluster() {
    let file = kubeconfig_file();
    let kc = Kubeconfig::read_from(file.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(cluster_name(Some("lab"), Some(&kc)), "lab");
    assert_eq!(cluster_name(None, Some(&kc)), "home-lab-1");
    assert_eq!(cluster_name(None, None), IN_CLUSTER);
    let mut no_current = kc.clone();
    no_current.current_context = Some("missing".into());
    assert_eq!(cluster_name(None, Some(&no_current)), IN_CLUSTER);
    assert_eq!(sanitize("  "), IN_CLUSTER);
    assert_eq!(sanitize("a b\tc:d"), "a-b-c-d");
}

#[tokio::test]
async fn a_kubeconfig_that_loads_is_detected_without_calling_the_api() {
    let file = kubeconfig_file();
    let config = Discovery {
        kubeconfig: Some(file.path().to_owned()),
        ..Discovery::default()
    };
    // The server (port 9, discard) never answers an API call; detection must not need one.
    let found = detect(&config).await.unwrap_or_else(|| panic!("detected"));
    assert_eq!(found.capabilities, ["pod"]);
    assert_eq!(found.source.name(), "kubernetes");
    let debug = format!("{:?}", found.source);
    assert!(debug.contains("home-lab-1"), "{debug}");

    let named = Discovery {
        cluster_name: Some("lab".into()),
        ..config.clone()
    };
    let found = detect(&named).await.unwrap_or_else(|| panic!("detected"));
    assert!(format!("{:?}", found.source).contains("\"lab\""));

    let off = Discovery {
        kubernetes: Toggle::Off,
        ..config
    };
    assert!(detect(&off).await.is_none());
}

#[tokio::test]
async fn a_missing_or_broken_kubeconfig_is_not_detected() {
    let missing = Discovery {
        kubeconfig: Some("/nonexistent/vigil/kubeconfig".into()),
        kubernetes: Toggle::On,
        ..Discovery::default()
    };
    assert!(detect(&missing).await.is_none());
    let file = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(file.path(), "clusters: [ this is : not yaml").unwrap_or_else(|e| panic!("{e}"));
    let broken = Discovery {
        kubeconfig: Some(file.path().to_owned()),
        ..Discovery::default()
    };
    assert!(detect(&broken).await.is_none());
}

#[tokio::test]
async fn a_kubeconfig_whose_user_needs_an_exec_plugin_is_not_detected() {
    let file = tempfile::NamedTempFile::new().unwrap_or_else(|e| panic!("{e}"));
    let text = KUBECONFIG.replace(
        "    token: not-a-real-token\n",
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/touch\n      args: [/tmp/vigil-kube-plugin-ran]\n",
    );
    assert_ne!(text, KUBECONFIG);
    std::fs::write(file.path(), text).unwrap_or_else(|e| panic!("{e}"));
    let config = Discovery {
        kubeconfig: Some(file.path().to_owned()),
        ..Discovery::default()
    };
    let loaded = load(&config).err().unwrap_or_else(|| panic!("loaded"));
    assert!(loaded.1, "refusals are loud: {loaded:?}");
    assert!(loaded.0.contains("\"admin\""), "{loaded:?}");
    assert!(detect(&config).await.is_none());
}

fn pod(value: serde_json::Value) -> Pod {
    serde_json::from_value(value).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn names_that_cannot_be_id_parts_are_refused() {
    for bad in ["", "a:b", "a b", "a/b", "a\tb", "a\u{7}"] {
        assert!(!valid_name(bad), "{bad:?}");
    }
    assert!(valid_name("web-5d9f7c-x2x9k"));
}

#[test]
fn replica_set_pods_get_the_deployment_name_as_alias() {
    let rs = pod(
        json!({"metadata": {"name": "web-5d9f7c6b8-x2x9k", "namespace": "media",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d9f7c6b8", "uid": "u", "controller": true}]}}),
    );
    assert_eq!(owner_alias(&rs).as_deref(), Some("web"));
    let sts = pod(json!({"metadata": {"name": "db-0", "namespace": "media",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "u", "controller": true}]}}));
    assert_eq!(owner_alias(&sts), None);
    let ds = pod(
        json!({"metadata": {"name": "agent-x2x9k", "namespace": "kube-system",
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u", "controller": true}]}}),
    );
    assert_eq!(owner_alias(&ds).as_deref(), Some("agent"));
    let bare = pod(json!({"metadata": {"name": "debug", "namespace": "default"}}));
    assert_eq!(owner_alias(&bare), None);
}

#[test]
fn a_pod_without_spec_or_status_is_still_a_resource_without_a_path() {
    let p = pod(json!({"metadata": {"name": "odd", "namespace": "default"}}));
    let r = pod_resource("lab", "a1", &p).unwrap_or_else(|| panic!("resource"));
    assert_eq!(r.id.to_string(), "pod:lab:default:odd");
    assert_eq!(r.status, "Unknown");
    assert_eq!(r.facts.details["ready"], "0/0");
    assert!(r.paths.is_empty());
    let hostile = pod(json!({"metadata": {"name": "a:b", "namespace": "default"}}));
    assert!(pod_resource("lab", "a1", &hostile).is_none());
    let no_ns = pod(json!({"metadata": {"name": "x"}}));
    assert!(pod_resource("lab", "a1", &no_ns).is_none());
}
