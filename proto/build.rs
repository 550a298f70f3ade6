//! Compiles cuzk/v1/proving.proto with protox (pure Rust, no `protoc`) and generates the server
//! and client code with tonic-build from the resulting descriptor set.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = "cuzk/v1/proving.proto";
    println!("cargo:rerun-if-changed={file}");
    let fds = protox::compile([file], ["."])?;
    tonic_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
