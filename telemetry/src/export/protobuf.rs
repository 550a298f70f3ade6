//! Just enough of the protobuf wire format to write Perfetto's trace messages by hand:
//! varints, fixed64 and length-delimited fields, nested messages built inside out.

/// One message being built.
#[derive(Default)]
pub struct Msg(pub Vec<u8>);

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Msg {
    fn key(&mut self, field: u32, wire: u8) {
        varint(&mut self.0, (u64::from(field) << 3) | u64::from(wire));
    }

    pub fn uint(&mut self, field: u32, v: u64) -> &mut Self {
        self.key(field, 0);
        varint(&mut self.0, v);
        self
    }

    pub fn fixed64(&mut self, field: u32, v: u64) -> &mut Self {
        self.key(field, 1);
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn double(&mut self, field: u32, v: f64) -> &mut Self {
        self.fixed64(field, v.to_bits())
    }

    pub fn bytes(&mut self, field: u32, b: &[u8]) -> &mut Self {
        self.key(field, 2);
        varint(&mut self.0, b.len() as u64);
        self.0.extend_from_slice(b);
        self
    }

    pub fn str(&mut self, field: u32, s: &str) -> &mut Self {
        self.bytes(field, s.as_bytes())
    }

    pub fn msg(&mut self, field: u32, m: &Msg) -> &mut Self {
        self.bytes(field, &m.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_as_the_wire_format_says() {
        let mut m = Msg::default();
        m.uint(1, 150);
        assert_eq!(m.0, [0x08, 0x96, 0x01]);
        let mut m = Msg::default();
        m.str(2, "testing");
        assert_eq!(&m.0[..2], &[0x12, 0x07]);
        let mut m = Msg::default();
        m.double(44, 1.0);
        assert_eq!(m.0[..2], [0xe1, 0x02]);
        assert_eq!(m.0.len(), 10);
    }
}
