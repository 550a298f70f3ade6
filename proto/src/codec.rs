//! tonic's protobuf codec, but a message that does not decode is the sender's error:
//! INVALID_ARGUMENT with prost's reason, where tonic says INTERNAL (a server fault, which a
//! client may retry as is).

use prost::Message;
use std::marker::PhantomData;
use tonic::codec::{BufferSettings, Codec as TonicCodec, DecodeBuf, Decoder, ProstCodec};
use tonic::{Code, Status};

/// The codec every generated client and server of this crate uses.
pub struct Codec<T, U>(ProstCodec<T, U>);

impl<T, U> Default for Codec<T, U> {
    fn default() -> Self {
        Codec(ProstCodec::default())
    }
}

impl<T, U> TonicCodec for Codec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = <ProstCodec<T, U> as TonicCodec>::Encoder;
    type Decoder = Decode<T, U>;

    fn encoder(&mut self) -> Self::Encoder {
        self.0.encoder()
    }

    fn decoder(&mut self) -> Self::Decoder {
        Decode(self.0.decoder(), PhantomData)
    }
}

/// prost's decoder, its errors re-coded.
pub struct Decode<T, U>(<ProstCodec<T, U> as TonicCodec>::Decoder, PhantomData<T>)
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static;

impl<T, U> Decoder for Decode<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Item = U;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        self.0.decode(src).map_err(recode::<U>)
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.0.buffer_settings()
    }
}

/// prost's decoder fails only on the bytes it was given (tonic calls it INTERNAL): the
/// sender's error, named with the message type.
fn recode<U>(s: Status) -> Status {
    match s.code() {
        Code::Internal => Status::invalid_argument(format!(
            "the message is not a valid {}: {}",
            std::any::type_name::<U>()
                .rsplit("::")
                .next()
                .unwrap_or("message"),
            s.message()
        )),
        _ => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuzk::v1::SubmitProofRequest;

    #[test]
    fn a_message_that_does_not_decode_is_invalid_argument() {
        // Field 1 (request_id) as a string of 10 bytes, with only 2 sent.
        let bad = [0x0a, 10, b'a', b'b'];
        let err = SubmitProofRequest::decode(&bad[..]).unwrap_err();
        let internal = Status::internal(err.to_string());
        let recoded = recode::<SubmitProofRequest>(internal);
        assert_eq!(recoded.code(), Code::InvalidArgument);
        assert!(
            recoded.message().contains("SubmitProofRequest"),
            "{recoded:?}"
        );
        assert_eq!(
            recode::<SubmitProofRequest>(Status::cancelled("x")).code(),
            Code::Cancelled
        );
    }
}
