//! Kubeconfig parsing and client configuration; the client against local servers is in
//! `client_tests.rs`.

use super::config::Auth;
use super::*;
use base64::Engine;
use std::path::Path;

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    path
}

fn config_err(kc: &Kubeconfig) -> String {
    match Config::from_kubeconfig(kc) {
        Ok(c) => panic!("expected an error, got {c:?}"),
        Err(e) => e.to_string(),
    }
}

const TWO_CONTEXTS: &str = r#"apiVersion: v1
kind: Config
current-context: prod
preferences: {}
clusters:
- name: lab
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: VU5VU0VE
- name: prod
  cluster:
    server: https://prod.example:443/k8s/clusters/c-1
    insecure-skip-tls-verify: true
    tls-server-name: api.prod
contexts:
- name: lab
  context: {cluster: lab, user: lab-admin}
- name: prod
  context:
    cluster: prod
    user: robot
    namespace: ops
users:
- name: lab-admin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: aws
      args: [eks, get-token]
- name: robot
  user:
    token: abc.def
"#;

#[test]
fn the_current_context_picks_cluster_and_user() {
    let kc = Kubeconfig::parse(TWO_CONTEXTS).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(kc.current_context.as_deref(), Some("prod"));
    assert_eq!(kc.contexts.len(), 2);
    let config = Config::from_kubeconfig(&kc).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        config.url.to_string(),
        "https://prod.example:443/k8s/clusters/c-1"
    );
    assert!(config.insecure);
    assert_eq!(config.tls_server_name.as_deref(), Some("api.prod"));
    assert!(matches!(&config.auth, Auth::Bearer(t) if t == "abc.def"));
    assert!(config.identity.is_none());
    let debug = format!("{config:?}");
    assert!(!debug.contains("abc.def"), "{debug}");
}

#[test]
fn exec_plugins_and_auth_providers_are_refused_by_user_name() {
    let mut kc = Kubeconfig::parse(TWO_CONTEXTS).unwrap_or_else(|e| panic!("{e}"));
    kc.current_context = Some("lab".into());
    let e = config_err(&kc);
    assert!(e.contains("\"lab-admin\""), "{e}");
    assert!(e.contains("exec credential plugin"), "{e}");

    let provider = r#"{"current-context": "c", "clusters": [{"name": "k", "cluster": {"server": "https://k:6443"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "gke"}}],
        "users": [{"name": "gke", "user": {"auth-provider": {"name": "gcp"}}}]}"#;
    let kc = Kubeconfig::parse(provider).unwrap_or_else(|e| panic!("{e}"));
    let e = config_err(&kc);
    assert!(e.contains("\"gke\"") && e.contains("auth-provider"), "{e}");
}

#[test]
fn data_fields_win_over_files_and_relative_files_follow_the_kubeconfig() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    write(dir.path(), "ca.pem", "CA FROM FILE");
    write(dir.path(), "client.pem", "CERT FROM FILE");
    write(dir.path(), "client.key", "KEY FROM FILE");
    write(dir.path(), "token", "  file-token\n");
    let text = format!(
        r#"current-context: a
clusters:
- name: files
  cluster: {{server: "https://files:6443", certificate-authority: ca.pem}}
- name: data
  cluster:
    server: https://data:6443
    certificate-authority: ca.pem
    certificate-authority-data: {ca}
contexts:
- name: a
  context: {{cluster: files, user: files}}
- name: b
  context: {{cluster: data, user: data}}
- name: c
  context: {{cluster: files, user: tokenfile}}
users:
- name: files
  user: {{client-certificate: client.pem, client-key: client.key}}
- name: data
  user:
    client-certificate-data: {cert}
    client-key-data: {key}
    client-key: client.key
- name: tokenfile
  user: {{tokenFile: token}}
"#,
        ca = b64(b"CA FROM DATA"),
        cert = b64(b"CERT FROM DATA"),
        key = b64(b"KEY FROM DATA"),
    );
    let path = write(dir.path(), "config", &text);
    let mut kc = Kubeconfig::read_from(&path).unwrap_or_else(|e| panic!("{e}"));

    let files = Config::from_kubeconfig(&kc).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(files.ca_pem.as_deref(), Some(&b"CA FROM FILE"[..]));
    let id = files.identity.unwrap_or_else(|| panic!("identity"));
    assert_eq!(
        (id.cert_pem.as_slice(), id.key_pem.as_slice()),
        (&b"CERT FROM FILE"[..], &b"KEY FROM FILE"[..])
    );

    kc.current_context = Some("b".into());
    let data = Config::from_kubeconfig(&kc).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(data.ca_pem.as_deref(), Some(&b"CA FROM DATA"[..]));
    let id = data.identity.unwrap_or_else(|| panic!("identity"));
    assert_eq!(id.key_pem, b"KEY FROM DATA");

    kc.current_context = Some("c".into());
    let token = Config::from_kubeconfig(&kc).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(&token.auth, Auth::TokenFile(p) if p == &dir.path().join("token")),
        "{:?}",
        token.auth
    );
    let mut plain = Config::new(
        "http://127.0.0.1:9"
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    plain.auth = token.auth;
    let client = Client::new(plain).unwrap_or_else(|e| panic!("{e}"));
    let header = client.authorization().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        header.as_ref().and_then(|h| h.to_str().ok()),
        Some("Bearer file-token")
    );
}

#[test]
fn broken_kubeconfigs_give_clear_errors() {
    let e = Kubeconfig::parse("clusters: [ this is : not yaml")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("not valid YAML"), "{e}");
    let e = Kubeconfig::parse("{\"clusters\": [")
        .err()
        .map(|e| e.to_string());
    assert!(e.is_some_and(|e| e.contains("not valid JSON")));
    let e = Kubeconfig::parse("clusters: 7")
        .err()
        .map(|e| e.to_string());
    assert!(e.is_some_and(|e| e.contains("not valid YAML")));

    let empty = Kubeconfig::parse("").unwrap_or_else(|e| panic!("{e}"));
    assert!(config_err(&empty).contains("no current-context"));
    let nulls = Kubeconfig::parse("current-context: x\nclusters:\ncontexts: null\nusers: ~\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(config_err(&nulls).contains("no context \"x\""));

    let missing_cluster = "current-context: a\ncontexts:\n- name: a\n  context: {cluster: gone}\n";
    let kc = Kubeconfig::parse(missing_cluster).unwrap_or_else(|e| panic!("{e}"));
    assert!(config_err(&kc).contains("no cluster \"gone\""));

    for (server, what) in [("ftp://x", "not an http(s) URL"), ("", "not a URL")] {
        let text = format!(
            "current-context: a\nclusters:\n- name: k\n  cluster: {{server: \"{server}\"}}\ncontexts:\n- name: a\n  context: {{cluster: k}}\n"
        );
        let kc = Kubeconfig::parse(&text).unwrap_or_else(|e| panic!("{e}"));
        let e = config_err(&kc);
        assert!(e.contains(what), "{e}");
    }

    let bad_data = "current-context: a\nclusters:\n- name: k\n  cluster: {server: \"https://k\", certificate-authority-data: \"!!!\"}\ncontexts:\n- name: a\n  context: {cluster: k}\n";
    let kc = Kubeconfig::parse(bad_data).unwrap_or_else(|e| panic!("{e}"));
    assert!(config_err(&kc).contains("not valid base64"));

    let half = "current-context: a\nclusters:\n- name: k\n  cluster: {server: \"https://k\"}\ncontexts:\n- name: a\n  context: {cluster: k, user: u}\nusers:\n- name: u\n  user: {client-certificate-data: QQ==}\n";
    let kc = Kubeconfig::parse(half).unwrap_or_else(|e| panic!("{e}"));
    assert!(config_err(&kc).contains("without a key"));
}

#[test]
fn kubeconfig_files_merge_first_one_wins() {
    let mut first = Kubeconfig::parse(
        "current-context: a\ncontexts:\n- name: a\n  context: {cluster: one}\nclusters:\n- name: one\n  cluster: {server: \"https://first\"}\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let second = Kubeconfig::parse(
        "current-context: b\ncontexts:\n- name: b\n  context: {cluster: one}\nclusters:\n- name: one\n  cluster: {server: \"https://second\"}\n- name: two\n  cluster: {server: \"https://two\"}\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    first.merge(second);
    assert_eq!(first.current_context.as_deref(), Some("a"));
    assert_eq!(first.contexts.len(), 2);
    assert_eq!(first.clusters.len(), 2);
    let config = Config::from_kubeconfig(&first).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.url.host(), Some("first"));
}

#[test]
fn in_cluster_needs_the_service_host_and_the_mounted_account() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let none = Config::incluster_from(None, Some("443"), dir.path());
    assert!(none.is_err_and(|e| e.to_string().contains("not in a cluster")));
    let no_token = Config::incluster_from(Some("10.43.0.1"), Some("443"), dir.path());
    assert!(no_token.is_err_and(|e| e.to_string().contains("token")));
    write(dir.path(), "token", "sa-token\n");
    write(dir.path(), "ca.crt", "CA");
    let config = Config::incluster_from(Some("fd00::1"), Some("6443"), dir.path())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.url.to_string(), "https://[fd00::1]:6443/");
    assert_eq!(config.ca_pem.as_deref(), Some(&b"CA"[..]));
    assert!(matches!(&config.auth, Auth::TokenFile(p) if p.ends_with("token")));
}

#[test]
fn a_kubeconfig_over_the_size_limit_is_refused() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let big = " ".repeat(usize::try_from(kubeconfig::MAX_FILE_BYTES).unwrap_or(0) + 1);
    let path = write(dir.path(), "config", &big);
    let e = Kubeconfig::read_from(&path).err().map(|e| e.to_string());
    assert!(e.is_some_and(|e| e.contains("more than")));
}
