//! The API objects the agent reads, with only the fields it reads (`inventory::kubernetes::
//! convert`, `events`, the pod backend); everything else in the JSON is skipped. Every
//! field is optional or defaulted, so an object missing one still decodes.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// `metadata` of an object.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectMeta {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub labels: Option<BTreeMap<String, String>>,
    pub owner_references: Option<Vec<OwnerReference>>,
    pub creation_timestamp: Option<String>,
    pub deletion_timestamp: Option<String>,
    pub resource_version: Option<String>,
}

/// One `ownerReferences` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct OwnerReference {
    pub kind: String,
    pub name: String,
    pub controller: Option<bool>,
}

/// `metadata` of a list.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ListMeta {
    #[serde(rename = "continue")]
    pub continue_: Option<String>,
    pub remaining_item_count: Option<i64>,
    pub resource_version: Option<String>,
}

/// A list response.
#[derive(Debug, Clone, Deserialize)]
#[serde(bound = "K: Deserialize<'de>")]
pub struct ObjectList<K> {
    #[serde(default)]
    pub metadata: ListMeta,
    #[serde(default = "Vec::new", deserialize_with = "null_default")]
    pub items: Vec<K>,
}

/// A resource quantity (`4`, `8029848Ki`), as the API wrote it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Quantity(pub String);

/// A node.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Node {
    pub metadata: ObjectMeta,
    pub spec: Option<NodeSpec>,
    pub status: Option<NodeStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NodeSpec {
    pub unschedulable: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeStatus {
    pub conditions: Option<Vec<Condition>>,
    pub node_info: Option<NodeSystemInfo>,
    pub capacity: Option<BTreeMap<String, Quantity>>,
    pub addresses: Option<Vec<NodeAddress>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSystemInfo {
    pub kubelet_version: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NodeAddress {
    #[serde(rename = "type")]
    pub type_: String,
    pub address: String,
}

/// A namespace.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Namespace {
    pub metadata: ObjectMeta,
    pub status: Option<NamespaceStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct NamespaceStatus {
    pub phase: Option<String>,
}

/// A deployment.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Deployment {
    pub metadata: ObjectMeta,
    pub spec: Option<DeploymentSpec>,
    pub status: Option<DeploymentStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DeploymentSpec {
    pub replicas: Option<i32>,
    pub template: PodTemplateSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PodTemplateSpec {
    pub spec: Option<PodSpec>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DeploymentStatus {
    pub ready_replicas: Option<i32>,
}

/// A pod.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Pod {
    pub metadata: ObjectMeta,
    pub spec: Option<PodSpec>,
    pub status: Option<PodStatus>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodSpec {
    #[serde(deserialize_with = "null_default")]
    pub containers: Vec<Container>,
    pub node_name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Container {
    pub name: String,
    pub image: Option<String>,
    pub ports: Option<Vec<ContainerPort>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContainerPort {
    pub container_port: i32,
    pub protocol: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodStatus {
    pub phase: Option<String>,
    pub container_statuses: Option<Vec<ContainerStatus>>,
    #[serde(rename = "podIP")]
    pub pod_ip: Option<String>,
    #[serde(rename = "podIPs")]
    pub pod_ips: Option<Vec<PodIp>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContainerStatus {
    pub name: String,
    pub ready: bool,
    pub restart_count: i32,
    pub state: Option<ContainerState>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ContainerState {
    pub waiting: Option<ContainerStateWaiting>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ContainerStateWaiting {
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PodIp {
    pub ip: String,
}

/// A core/v1 event.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Event {
    pub metadata: ObjectMeta,
    pub involved_object: ObjectReference,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub series: Option<EventSeries>,
    pub last_timestamp: Option<String>,
    pub event_time: Option<String>,
    pub first_timestamp: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ObjectReference {
    pub kind: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EventSeries {
    pub last_observed_time: Option<String>,
}

/// A `Status` answer: an API error, or how an exec ended.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Status {
    pub status: Option<String>,
    pub message: Option<String>,
    pub reason: Option<String>,
    pub code: Option<u16>,
    pub details: Option<StatusDetails>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StatusDetails {
    pub causes: Option<Vec<StatusCause>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StatusCause {
    pub reason: Option<String>,
    pub message: Option<String>,
}

/// `GET /version`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Version {
    pub git_version: String,
}

/// One line of a watch stream: its type, and the object's resource version (or, for an
/// `ERROR`, the status code).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct WatchEvent {
    #[serde(rename = "type")]
    pub type_: String,
    pub object: WatchObject,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct WatchObject {
    pub metadata: ObjectMeta,
    pub code: Option<u16>,
}
