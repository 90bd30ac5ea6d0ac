//! The link's gRPC codec: prost encoding with small per-stream buffers.
//!
//! tonic's own `ProstCodec` gives every stream an 8 KiB encode buffer and an 8 KiB decode
//! buffer. A controller holding 10,000 agent streams keeps 20,000 of them, and their pages
//! become resident bit by bit as messages cycle through them: the last slow growth of the
//! fleet soak (docs/benchmarks-history.md, "Fleet soak"). The link's messages are mostly
//! far smaller (heartbeats, exec requests, short output), so [`LinkCodec`] starts each
//! buffer at [`BUFFER_SIZE`]. A larger message grows its buffer in steps of that size, as
//! tonic does, and the batching threshold for streamed output stays tonic's 32 KiB.

use std::marker::PhantomData;

use tonic::codec::{BufferSettings, Codec};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

/// Initial size, and growth step, of each stream's encode and decode buffer.
pub const BUFFER_SIZE: usize = 1024;

/// How many ready messages' bytes one write may batch (tonic's default).
pub const YIELD_THRESHOLD: usize = 32 * 1024;

fn settings() -> BufferSettings {
    BufferSettings::new(BUFFER_SIZE, YIELD_THRESHOLD)
}

/// A prost codec with [`BUFFER_SIZE`] buffers; `build.rs` makes every generated client and
/// server use it.
#[derive(Debug, Clone)]
pub struct LinkCodec<T, U> {
    _pd: PhantomData<(T, U)>,
}

impl<T, U> Default for LinkCodec<T, U> {
    fn default() -> Self {
        Self { _pd: PhantomData }
    }
}

impl<T, U> Codec for LinkCodec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstCodec::<T, U>::raw_encoder(settings())
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstCodec::<T, U>::raw_decoder(settings())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::v1::{AgentMessage, ControllerMessage};
    use tonic::codec::{Decoder, Encoder};

    #[test]
    fn both_directions_use_the_small_buffers() {
        let mut codec = LinkCodec::<ControllerMessage, AgentMessage>::default();
        let enc = codec.encoder().buffer_settings();
        let dec = codec.decoder().buffer_settings();
        for s in [enc, dec] {
            let text = format!("{s:?}");
            assert!(text.contains("buffer_size: 1024"), "{text}");
            assert!(text.contains("yield_threshold: 32768"), "{text}");
        }
    }
}
