//! Pod requests: `GET` of one pod, and its log as a stream.

use super::Result;
use super::client::{Client, segment, with_query};
use super::types::Pod;
use hyper::body::Incoming;

/// Query parameters of a log read (as `kubectl logs` has them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogParams {
    pub container: Option<String>,
    pub tail_lines: Option<i64>,
    pub since_seconds: Option<i64>,
    pub previous: bool,
    pub timestamps: bool,
    pub limit_bytes: Option<i64>,
}

fn pod_path(namespace: &str, name: &str) -> String {
    format!(
        "/api/v1/namespaces/{}/pods/{}",
        segment(namespace),
        segment(name)
    )
}

impl Client {
    /// The pod, or `None` when the API says it does not exist.
    pub async fn get_pod(&self, namespace: &str, name: &str) -> Result<Option<Pod>> {
        self.get_opt(&pod_path(namespace, name)).await
    }

    /// The pod's log as a body to read (not followed: it ends with the log's end).
    pub async fn pod_logs(&self, namespace: &str, name: &str, p: &LogParams) -> Result<Incoming> {
        let (tail, since, limit) = (
            p.tail_lines.map(|n| n.to_string()),
            p.since_seconds.map(|n| n.to_string()),
            p.limit_bytes.map(|n| n.to_string()),
        );
        let mut query: Vec<(&str, &str)> = Vec::new();
        if let Some(c) = &p.container {
            query.push(("container", c));
        }
        if let Some(limit) = &limit {
            query.push(("limitBytes", limit));
        }
        if p.previous {
            query.push(("previous", "true"));
        }
        if let Some(since) = &since {
            query.push(("sinceSeconds", since));
        }
        if let Some(tail) = &tail {
            query.push(("tailLines", tail));
        }
        if p.timestamps {
            query.push(("timestamps", "true"));
        }
        let path = format!("{}/log", pod_path(namespace, name));
        let response = self.get(&with_query(&path, &query), "*/*").await?;
        Ok(response.into_body())
    }
}
