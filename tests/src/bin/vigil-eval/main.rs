//! `vigil-eval` (`make eval`): runs the scenario catalog against a real controller and a
//! real agent on this machine, with the scripted model (or, with `VIGIL_EVAL_LLM_PROVIDER`,
//! `…_BASE_URL`, `…_MODEL` and `…_API_KEY`, a real model, scored only on what code decides:
//! no unapproved write, gates held), prints a score table and writes it as JSON
//! (`--out`, default `target/eval.json`). Exits 1 when a scripted scenario fails.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod catalog;
mod judge;
mod scenario;

use serde_json::json;
use vigil_tests::chat::ChatHost;
use vigil_tests::mcp_tools::ToolServer;
use vigil_tests::model_server::{Protocol, ScriptedModel};

/// A real model to evaluate instead of the scripted one.
fn real_model() -> Option<Vec<String>> {
    let var = |name: &str| {
        std::env::var(format!("VIGIL_EVAL_LLM_{name}"))
            .ok()
            .filter(|v| !v.is_empty())
    };
    let provider = var("PROVIDER")?;
    let mut args = vec![
        "--llm-provider".into(),
        provider,
        "--llm-model".into(),
        var("MODEL").unwrap_or_default(),
    ];
    if let Some(url) = var("BASE_URL") {
        args.extend(["--llm-base-url".into(), url]);
    }
    if let Some(key) = var("API_KEY") {
        args.extend(["--llm-api-key".into(), key]);
    }
    Some(args)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let out = std::env::args()
        .skip_while(|a| a != "--out")
        .nth(1)
        .unwrap_or_else(|| "target/eval.json".into());
    let model = ScriptedModel::start(Protocol::OpenAi).await;
    let real = real_model();
    let llm = real.clone().unwrap_or_else(|| {
        [
            "--llm-provider",
            "openai",
            "--llm-base-url",
            &model.base_url(),
            "--llm-model",
            "scripted",
        ]
        .map(String::from)
        .to_vec()
    });
    let mut extra_args = llm;
    extra_args.extend([
        "--control-level".into(),
        "autonomous".into(),
        "--approval-timeout-s".into(),
        "30".into(),
        // The catalog runs its turns back to back, as a script does: no per-token budget.
        "--rate-chat-per-s".into(),
        "0".into(),
        "--rate-exec-per-s".into(),
        "0".into(),
    ]);
    // An external MCP server (trusted) whose tool results carry planted instructions.
    let mcp = tokio::task::spawn_blocking(vigil_tests::python::mcp_sdk)
        .await
        .unwrap()
        .map(|python| ToolServer::start(&python));
    if let Some(server) = &mcp {
        extra_args.extend([
            "--mcp-server".into(),
            format!("tools={}", server.url()),
            "--mcp-server-trusted".into(),
            "tools".into(),
        ]);
    }
    eprintln!("vigil-eval: starting a controller and an agent");
    let chat_host = ChatHost::start(extra_args).await;
    if mcp.is_some() {
        let listed = vigil_tests::wait_until(std::time::Duration::from_secs(60), || async {
            ToolServer::listed(&chat_host.ctrl, "tools")
        })
        .await;
        assert!(listed, "the MCP server's tools were never listed");
    }
    let (ctrl, host) = (&chat_host.ctrl, chat_host.host.as_str());
    let hostname = chat_host.hostname().await;
    let scenarios = catalog::all();
    let mut results = Vec::new();
    for (n, scenario) in scenarios.iter().enumerate() {
        eprintln!(
            "vigil-eval: [{}/{}] {}",
            n + 1,
            scenarios.len(),
            scenario.name
        );
        let context = judge::Context {
            ctrl,
            model: &model,
            host,
            hostname: &hostname,
            real: real.is_some(),
            mcp: mcp.as_ref(),
        };
        results.push(judge::run(&context, scenario).await);
    }
    let injections = scenarios.iter().filter(|s| s.injection).count();
    let passed = results.iter().filter(|r| r.passed).count();
    println!("{:<44} {:<10} {:<6} failures", "scenario", "kind", "result");
    for (scenario, result) in scenarios.iter().zip(&results) {
        let kind = if scenario.injection {
            "injection"
        } else {
            "gates"
        };
        let verdict = if result.passed { "pass" } else { "FAIL" };
        println!(
            "{:<44} {kind:<10} {verdict:<6} {}",
            scenario.name,
            result.failures.join("; ")
        );
    }
    let mode = if real.is_some() {
        "real model (code-decided outcomes only)"
    } else {
        "scripted model"
    };
    println!(
        "\n{passed}/{} scenarios passed ({injections} prompt injections), {mode}",
        scenarios.len()
    );
    let report = json!({
        "mode": mode,
        "scenarios": scenarios.len(),
        "injections": injections,
        "passed": passed,
        "results": scenarios.iter().zip(&results).map(|(s, r)| json!({
            "name": s.name, "injection": s.injection, "passed": r.passed, "failures": r.failures,
        })).collect::<Vec<_>>(),
    });
    if let Some(parent) = std::path::Path::new(&out).parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    std::fs::write(&out, serde_json::to_string_pretty(&report).unwrap()).unwrap();
    eprintln!("vigil-eval: wrote {out}");
    drop(chat_host);
    if passed != scenarios.len() {
        std::process::exit(1);
    }
}
