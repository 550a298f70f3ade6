//! Compiles the .proto files with protox (pure Rust, no `protoc`) and generates the server and
//! client code with tonic-build from the resulting descriptor set.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "cuzk/v1/proving.proto",
        "provetop/v1/telemetry.proto",
        "provetop/v1/fleet.proto",
    ];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["."])?;
    tonic_build::configure()
        .build_client(true)
        .build_server(true)
        // A frame goes to every viewer: shared bytes, not a copy each.
        .bytes([".provetop.v1.Frame"])
        // A message that does not decode is INVALID_ARGUMENT, not tonic's INTERNAL.
        .codec_path("crate::codec::Codec")
        .compile_fds(fds)?;
    Ok(())
}
