//! Requests per second of `GET /api/agents` with 1,000 registered agents (`BENCH_AGENTS`
//! to change it; rows inserted directly, then the controller restarted so its registry
//! loads them), on a controller started in-process on 127.0.0.1:0 with SQLite, or with
//! PostgreSQL when `VIGIL_BENCH_DATABASE_URL` is set. Run: `cargo bench -p vigil-controller
//! --bench agents_list`. Prints the rate and the p50/p99 latency.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use vigil_controller::config::Config;
use vigil_controller::server;

/// Agents registered unless `BENCH_AGENTS` says otherwise.
const AGENTS: usize = 1000;
const CLIENTS: usize = 16;
const RUN: Duration = Duration::from_secs(5);

#[tokio::main]
async fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let config = Config {
        database_url: std::env::var("VIGIL_BENCH_DATABASE_URL").ok(),
        ..Config::local(tmp.path().join("data"))
    };
    let agents: usize = std::env::var("BENCH_AGENTS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(AGENTS);
    let running = server::start(&config).await.unwrap();
    let store = running.agents.store().clone();
    for i in 0..agents {
        sqlx::query(
            "INSERT INTO agents (id, hostname, labels, cert_serial, cert_expires_at, version, created_at)
             VALUES ($1, $2, '{\"site\":\"bench\"}', 'ab', 4000000000, '0.1.0', $3)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(format!("host-{i:04}"))
        .bind(i64::try_from(i).unwrap())
        .execute(store.pool())
        .await
        .unwrap();
    }
    // The registry is loaded at start: restart so it holds the rows inserted above.
    running.shutdown().await.unwrap();
    let running = server::start(&config).await.unwrap();
    let token = std::fs::read_to_string(tmp.path().join("data/admin.token")).unwrap();
    let url = format!("http://{}/api/agents", running.http_addr);
    let client = reqwest::Client::new();
    let first: Vec<serde_json::Value> = client
        .get(&url)
        .bearer_auth(token.trim())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(first.len(), agents);

    let start = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..CLIENTS {
        let (client, url, token) = (client.clone(), url.clone(), token.trim().to_owned());
        workers.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while start.elapsed() < RUN {
                let t = Instant::now();
                let response = client.get(&url).bearer_auth(&token).send().await.unwrap();
                assert!(response.status().is_success());
                response.bytes().await.unwrap();
                latencies.push(t.elapsed());
            }
            latencies
        }));
    }
    let mut all = Vec::new();
    for worker in workers {
        all.extend(worker.await.unwrap());
    }
    let elapsed = start.elapsed().as_secs_f64();
    all.sort();
    let pct = |p: f64| all[((all.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1000.0;
    println!(
        "GET /api/agents, {agents} agents, {CLIENTS} clients, {}: {:.0} requests/s, p50 {:.2} ms, p99 {:.2} ms ({} requests)",
        if config.database_url.is_some() {
            "PostgreSQL"
        } else {
            "SQLite"
        },
        all.len() as f64 / elapsed,
        pct(0.50),
        pct(0.99),
        all.len()
    );
    running.shutdown().await.unwrap();
}
