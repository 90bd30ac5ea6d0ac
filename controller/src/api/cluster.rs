//! `GET /api/cluster` (admin): the replicas of this controller, as their leases in the
//! database say (docs/replicas.md). [`ClusterView`] is the answer's one definition; the
//! `vigil-controller cluster` command reads it back.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};

use super::ApiState;
use crate::Result;
use crate::clock::rfc3339;
use crate::store::replicas::ReplicaRow;

/// The answer of `GET /api/cluster`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterView {
    /// The id of the replica that answered.
    pub replica: String,
    /// True when that replica has fenced itself (it answers this, and nothing that needs
    /// its lease).
    pub fenced: bool,
    /// Every replica the database lists, live ones first.
    pub replicas: Vec<ReplicaView>,
}

/// One replica.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaView {
    /// Its id (a UUID chosen when it started).
    pub id: String,
    /// Where the others forward commands to it, its `--cluster-advertise` (`HOST:PORT`;
    /// empty without `--cluster-listen`).
    pub advertise_address: String,
    /// Its agent gateway (`HOST:PORT`).
    pub gateway_address: String,
    /// Its version.
    pub version: String,
    /// `serving`, `draining`, or `lapsed` once its lease ran out.
    pub state: String,
    /// True while its lease holds.
    pub live: bool,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it last renewed its lease.
    pub renewed_at: String,
    /// When its lease runs out unless renewed.
    pub lease_expires_at: String,
    /// How many agent streams it held at its last renewal.
    pub agents_held: i64,
}

impl From<&ReplicaRow> for ReplicaView {
    fn from(row: &ReplicaRow) -> Self {
        let millis = |ms: i64| rfc3339(ms.div_euclid(1000));
        ReplicaView {
            id: row.record.id.clone(),
            advertise_address: row.record.cluster_address.clone(),
            gateway_address: row.record.gateway_address.clone(),
            version: row.record.version.clone(),
            state: if row.live {
                row.state.clone()
            } else {
                "lapsed".to_owned()
            },
            live: row.live,
            started_at: millis(row.started_at),
            renewed_at: millis(row.renewed_at),
            lease_expires_at: millis(row.lease_expires_at),
            agents_held: row.agents_held,
        }
    }
}

/// `GET /api/cluster`.
pub async fn list(State(state): State<ApiState>) -> Result<Json<ClusterView>> {
    let rows = state.cluster.replicas().await?;
    Ok(Json(ClusterView {
        replica: state.cluster.id().to_owned(),
        fenced: state.cluster.is_fenced(),
        replicas: rows.iter().map(ReplicaView::from).collect(),
    }))
}
