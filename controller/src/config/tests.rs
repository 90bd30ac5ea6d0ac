use super::*;

fn args() -> ServeArgs {
    ServeArgs {
        data_dir: Some(PathBuf::from("/nonexistent/vigil")),
        gateway_sans: vec!["vigil.example".into(), "10.0.0.2".into()],
        ..ServeArgs::default()
    }
}

fn error_of(args: ServeArgs, file: FileConfig) -> String {
    Config::from_layers(args, file).unwrap_err().to_string()
}

#[test]
fn defaults_validate() {
    let config = Config::from_layers(args(), FileConfig::default()).unwrap();
    assert_eq!(config.http_listen.port(), 8640);
    assert_eq!(config.grpc_listen.port(), 8641);
    assert_eq!(config.gateway_sans.len(), 2);
    assert_eq!(config.http_tls, None);
    assert!(!config.local_agent && config.agent_dir.is_dir());
}

#[test]
fn bad_values_are_refused_before_binding() {
    let mut bad = args();
    bad.http_listen = Some("localhost:80".into());
    assert!(error_of(bad, FileConfig::default()).contains("--http-listen"));
    let mut bad = args();
    bad.http_listen = Some("0.0.0.0:8641".into());
    assert!(error_of(bad, FileConfig::default()).contains("same port"));
    let mut bad = args();
    bad.heartbeat_interval_s = Some(0);
    assert!(error_of(bad, FileConfig::default()).contains("heartbeat"));
    let mut bad = args();
    bad.gateway_sans = vec!["bad name!".into()];
    assert!(Config::from_layers(bad, FileConfig::default()).is_err());
    let mut bad = args();
    bad.public_url = Some("https://ctrl.lan:8640/sub".into());
    assert!(error_of(bad, FileConfig::default()).contains("path"));
    let mut bad = args();
    bad.agent_dir = Some("/nonexistent/agents".into());
    assert!(error_of(bad, FileConfig::default()).contains("--agent-dir"));
    let mut bad = args();
    bad.database_url = Some("mysql://x".into());
    assert!(error_of(bad, FileConfig::default()).contains("postgres"));
}

#[test]
fn tls_flags_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let cert = tmp.path().join("c.pem");
    std::fs::write(&cert, "x").unwrap();
    let mut bad = args();
    bad.http_cert = Some(cert.clone());
    assert!(error_of(bad, FileConfig::default()).contains("needs --http-key"));
    let mut bad = args();
    bad.http_cert = Some(cert.clone());
    bad.http_key = Some(tmp.path().join("missing.key"));
    assert!(error_of(bad, FileConfig::default()).contains("does not exist"));
    let mut tls = args();
    tls.http_tls = Some(true);
    tls.public_url = Some("http://ctrl.lan:8640".into());
    assert!(error_of(tls.clone(), FileConfig::default()).contains("https://"));
    tls.public_url = Some("https://ctrl.lan:8640".into());
    let config = Config::from_layers(tls, FileConfig::default()).unwrap();
    assert_eq!(config.http_tls, Some(HttpTls::IssuedByCa));
}

#[test]
fn flags_beat_the_file_and_the_file_beats_defaults() {
    let file = FileConfig::parse(
        r#"
        http_listen = "127.0.0.1:9000"
        grpc_listen = "127.0.0.1:9001"
        gateway_sans = ["from-file.lan"]
        local_agent = true
        heartbeat_interval_s = 5
        database_url = "postgres://vigil@db/vigil"
        "#,
    )
    .unwrap();
    assert_eq!(file.local_agent, Some(true));
    // The flag turns the file's local_agent off (on, it needs a built vigil-agent).
    let flags = ServeArgs {
        http_listen: Some("127.0.0.1:9100".into()),
        local_agent: Some(false),
        ..ServeArgs::default()
    };
    let config = Config::from_layers(flags.clone(), file.clone()).unwrap();
    assert_eq!(config.http_listen.port(), 9100, "flag wins");
    assert_eq!(config.grpc_listen.port(), 9001, "file beats the default");
    assert_eq!(
        config.gateway_sans,
        [GatewaySan::Dns("from-file.lan".into())]
    );
    assert!(!config.local_agent);
    assert_eq!(config.heartbeat, Duration::from_secs(5));
    assert_eq!(config.data_dir, PathBuf::from(DEFAULT_DATA_DIR));
    assert!(config.database_url.is_some());
}

#[test]
fn unknown_keys_and_bad_types_in_the_file_are_refused() {
    let err = FileConfig::parse("http_lisen = \"x\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("http_lisen"), "{err}");
    assert!(FileConfig::parse("local_agent = \"yes\"").is_err());
    let tmp = tempfile::tempdir().unwrap();
    let err = FileConfig::load(&tmp.path().join("none.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot read --config"), "{err}");
}

#[test]
fn no_model_configured_is_none_and_a_provider_needs_a_model() {
    let config = Config::from_layers(args(), FileConfig::default()).unwrap();
    assert_eq!(config.llm, None);
    let mut bad = args();
    bad.llm_provider = Some("anthropic".into());
    let err = error_of(bad, FileConfig::default());
    assert!(
        err.contains("--llm-model") && err.contains("VIGIL_LLM_MODEL"),
        "{err}"
    );
    let mut bad = args();
    bad.llm_provider = Some("gemini".into());
    bad.llm_model = Some("m".into());
    let err = error_of(bad, FileConfig::default());
    assert!(err.contains("gemini") && err.contains("openai"), "{err}");
    let mut bad = args();
    bad.llm_model = Some("gpt-4.1".into());
    assert!(error_of(bad, FileConfig::default()).contains("need --llm-provider"));
    let mut bad = args();
    bad.llm_provider = Some("openai".into());
    bad.llm_model = Some("m".into());
    bad.llm_base_url = Some("ftp://models.lan".into());
    assert!(error_of(bad, FileConfig::default()).contains("--llm-base-url"));
}

#[test]
fn llm_flags_beat_the_llm_table_and_base_urls_default_per_provider() {
    let file = FileConfig::parse(
        r#"
        [llm]
        provider = "openai"
        base_url = "http://ollama.lan:11434/v1"
        model = "qwen3:8b"
        api_key = "from-file"
        "#,
    )
    .unwrap();
    let llm = Config::from_layers(args(), file.clone())
        .unwrap()
        .llm
        .unwrap();
    assert_eq!(llm.provider, Provider::OpenAi);
    assert_eq!(llm.base_url, "http://ollama.lan:11434/v1");
    assert_eq!(llm.model, "qwen3:8b");
    assert_eq!(llm.api_key.as_deref(), Some("from-file"));
    assert!(
        !format!("{llm:?}").contains("from-file"),
        "the key is redacted"
    );
    let flags = ServeArgs {
        llm_provider: Some("Anthropic".into()),
        llm_base_url: Some(String::new()),
        llm_model: Some("claude-sonnet-4-5".into()),
        llm_api_key: Some("from-flag".into()),
        ..args()
    };
    let file = FileConfig {
        llm: Some(LlmFileConfig {
            base_url: None,
            ..file.llm.unwrap()
        }),
        ..file
    };
    let llm = Config::from_layers(flags, file).unwrap().llm.unwrap();
    assert_eq!(llm.provider, Provider::Anthropic);
    assert_eq!(llm.base_url, crate::llm::DEFAULT_ANTHROPIC_BASE_URL);
    assert_eq!(llm.model, "claude-sonnet-4-5");
    assert_eq!(llm.api_key.as_deref(), Some("from-flag"));
    assert!(FileConfig::parse("[llm]\nmodle = \"x\"").is_err());
}

#[test]
fn fanout_concurrency_defaults_layers_and_is_bounded() {
    let config = Config::from_layers(args(), FileConfig::default()).unwrap();
    assert_eq!(config.fanout_concurrency, DEFAULT_FANOUT_CONCURRENCY);
    let file = FileConfig::parse("fanout_concurrency = 64").unwrap();
    let config = Config::from_layers(args(), file.clone()).unwrap();
    assert_eq!(config.fanout_concurrency, 64);
    let mut flag = args();
    flag.fanout_concurrency = Some(2048);
    assert_eq!(
        Config::from_layers(flag, file).unwrap().fanout_concurrency,
        2048,
        "the flag beats the file"
    );
    let mut bad = args();
    bad.fanout_concurrency = Some(0);
    assert!(error_of(bad, FileConfig::default()).contains("--fanout-concurrency"));
}

/// The configuration the Debian package installs as `/etc/vigil/controller.toml`.
const PACKAGED: &str = include_str!("../../../deploy/debian/controller/controller.toml");

#[test]
fn the_packaged_configuration_parses_and_documents_every_setting() {
    // As shipped: the state in /var/lib/vigil, everything else the defaults.
    let shipped = FileConfig::parse(PACKAGED).unwrap();
    assert_eq!(shipped.data_dir, Some(PathBuf::from("/var/lib/vigil")));
    Config::from_layers(ServeArgs::default(), shipped).unwrap();
    // Every `#key = value` example is a key the controller knows, with a value of its type.
    let examples: String = PACKAGED
        .lines()
        .map(|line| match line.strip_prefix('#') {
            Some(rest) if !rest.starts_with([' ', '#']) && !rest.is_empty() => rest,
            _ => line,
        })
        .map(|line| format!("{line}\n"))
        .collect();
    let all = FileConfig::parse(&examples).unwrap();
    assert!(all.llm.is_some() && all.database_url.is_some());
    // Every flag of `serve` (but --config and the tests' own) has its key in the file.
    let serve = <ServeArgs as clap::Args>::augment_args(clap::Command::new("serve"));
    for arg in serve.get_arguments() {
        let id = arg.get_id().as_str();
        if matches!(id, "config" | "test_raw_exec" | "help") {
            continue;
        }
        let key = id.strip_prefix("llm_").unwrap_or(id);
        assert!(
            examples
                .lines()
                .any(|l| l.starts_with(&format!("{key} = "))),
            "deploy/debian/controller/controller.toml does not document {key}"
        );
    }
}

/// Compose passes unset optional settings as empty strings (`VIGIL_X: ${X:-}`): they fall
/// through to the file and the defaults instead of failing.
#[test]
fn empty_values_count_as_not_given() {
    let file = FileConfig::parse(
        r#"
        http_listen = "127.0.0.1:9000"
        public_url = "http://vigil.lan:9000"
        "#,
    )
    .unwrap();
    let empty = ServeArgs {
        http_listen: Some(String::new()),
        public_url: Some(" ".into()),
        database_url: Some(String::new()),
        llm_provider: Some(String::new()),
        llm_api_key: Some(String::new()),
        data_dir: Some(PathBuf::new()),
        gateway_sans: vec![String::new()],
        ..ServeArgs::default()
    }
    .without_empty();
    let config = Config::from_layers(empty, file).unwrap();
    assert_eq!(config.http_listen.port(), 9000, "the file's value");
    assert_eq!(
        config.public_url.as_ref().map(reqwest::Url::as_str),
        Some("http://vigil.lan:9000/")
    );
    assert!(config.database_url.is_none() && config.llm.is_none());
    assert_eq!(config.data_dir, PathBuf::from(DEFAULT_DATA_DIR));
    assert!(config.gateway_sans.is_empty());
    // A value that is not empty is still checked.
    let bad = ServeArgs {
        public_url: Some("not a url".into()),
        ..ServeArgs::default()
    }
    .without_empty();
    assert!(error_of(bad, FileConfig::default()).contains("public-url"));
}
