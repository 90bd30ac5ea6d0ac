//! The MCP server's cost, with the release binaries (build them first: `make bench` does):
//! one controller and one real agent on this machine, and the official Rust SDK's client
//! over streamable HTTP in one MCP session (the `initialize` handshake). Sequential calls of `read exec echo N` (a new N each time) on the agent's host through `tools/call`,
//! against the same read through `POST /api/exec` (JSON), and `tools/list`.
//!
//! Environment: `VIGIL_BENCH_CALLS` (default 300, calls of each kind).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value, json};
use vigil_tests::chat::ChatHost;
use vigil_tests::stats::summary;

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let calls: usize = std::env::var("VIGIL_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let host = ChatHost::start(vec!["--rate-exec-per-s".into(), "0".into()]).await;
    let api = &host.ctrl.api;
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", api.base()))
            .auth_header(api.token().to_owned()),
    );
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("vigil-bench", "1"),
    )
    .serve(transport)
    .await
    .expect("connect to /mcp");
    let peer = client.peer().clone();
    // A different command each time: the session's knowledge gate would answer a repeated
    // read from what it already observed, without running it.
    let args = |n: usize| -> Map<String, Value> {
        serde_json::from_value(
            json!({ "action": "exec", "resource_id": host.host, "command": format!("echo {n}") }),
        )
        .unwrap()
    };
    let (mut mcp, mut rest, mut list) = (Vec::new(), Vec::new(), Vec::new());
    // Warm both paths.
    for n in 0..10 {
        let call = CallToolRequestParams::new("read").with_arguments(args(n));
        peer.call_tool(call).await.unwrap();
        api.exec_resource_json(&host.host, &format!("echo {n}"))
            .await
            .unwrap();
    }
    for n in 10..10 + calls {
        let started = Instant::now();
        let call = CallToolRequestParams::new("read").with_arguments(args(n));
        let result = peer.call_tool(call).await.unwrap();
        mcp.push(started.elapsed());
        let stdout = result
            .structured_content
            .as_ref()
            .and_then(|envelope| envelope["data"]["stdout"].as_str());
        assert_eq!(
            stdout,
            Some(format!("{n}\n").as_str()),
            "the read did not run"
        );

        let started = Instant::now();
        api.exec_resource_json(&host.host, &format!("echo {n}"))
            .await
            .unwrap();
        rest.push(started.elapsed());

        let started = Instant::now();
        let tools = peer.list_tools(None).await.unwrap();
        list.push(started.elapsed());
        assert!(tools.tools.len() > 5);
    }
    println!("mcp: {calls} sequential calls of each kind, one agent on this machine");
    println!("  tools/call read exec echo N : {}", summary(&mut mcp));
    println!("  POST /api/exec echo N       : {}", summary(&mut rest));

    println!("  tools/list                  : {}", summary(&mut list));
    let _ = client.cancel().await;
}
