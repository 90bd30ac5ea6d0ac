//! Compiles `proto/agent.proto`, `proto/chat.proto` and `proto/cluster.proto` into Rust with protox (a protobuf compiler written in
//! Rust, so no system `protoc` is needed) and tonic-prost-build (message and service code).

use std::error::Error;
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn Error>> {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?);
    let include_dir = manifest_dir.join("proto");
    let protos = [
        include_dir.join("agent.proto"),
        include_dir.join("chat.proto"),
        include_dir.join("cluster.proto"),
    ];

    for proto in &protos {
        println!("cargo:rerun-if-changed={}", proto.display());
    }

    let descriptors = protox::compile(&protos, [&include_dir])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // The transport helper would add `AgentLinkClient::connect(endpoint)`, which clashes
        // with the generated method for `rpc Connect`. Callers build their own mTLS
        // `Channel` anyway and use `AgentLinkClient::new(channel)`.
        .build_transport(false)
        // Small per-stream buffers: see `src/codec.rs`.
        .codec_path("crate::codec::LinkCodec")
        .compile_fds(descriptors)?;
    Ok(())
}
