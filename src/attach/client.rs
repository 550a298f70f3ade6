//! The network side of `provetop attach`: one channel to the server (TCP, TLS or a unix socket)
//! on a runtime of its own, the Watch stream read into `Incoming` messages for whoever shows
//! them, a new Watch with backoff whenever the stream is lost (resuming after the last frame
//! when the server still holds what followed), and Control calls with their replies.

use anyhow::{anyhow, bail, Context, Result};
use provetop_proto::provetop::v1::control_request::Action;
use provetop_proto::provetop::v1::telemetry_client::TelemetryClient;
use provetop_proto::provetop::v1::watch_message::Body;
use provetop_proto::provetop::v1::{ControlRequest, WatchRequest};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;
use tonic::codegen::Bytes;
use tonic::transport::{Channel, Endpoint};

/// The first wait after losing the server, doubled at each failed attempt up to `MAX_BACKOFF`.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// The largest message taken: a frame (4 MiB of records) or a header, with room.
const MAX_MESSAGE: usize = 8 << 20;
/// Messages read ahead of the one showing them.
const AHEAD: usize = 256;

/// What the stream brought, in order.
pub enum Incoming {
    /// A stream began: the session's header (a recording's file header) and the viewer's access.
    Hello {
        header: Bytes,
        session_id: String,
        control: bool,
        note: String,
        resumed: bool,
        /// The server's session clock when it was sent.
        now: u64,
    },
    /// A frame of records, as a recording holds it.
    Frame(Bytes),
    /// The history has been sent; live from here.
    CaughtUp,
    /// The stream was lost; another attempt follows in `retry_in`.
    Lost { why: String, retry_in: Duration },
    /// The first attempt failed: the server cannot be watched at this address. `answered`: the
    /// server said why (otherwise nothing answered there, or not in gRPC).
    Refused { why: String, answered: bool },
    /// The answer to a change (`job`: the job a Submit made).
    Reply { text: String, error: bool, job: u64 },
}

/// Where the server is.
#[derive(Clone)]
pub struct Target {
    endpoint: Endpoint,
    unix: Option<PathBuf>,
}

/// Reads ADDR: `HOST:PORT`, a bare `PORT` (loopback), `http://` or `https://HOST:PORT`, or
/// `unix:///PATH`; `ca` (a PEM file) makes it TLS, checked against that certificate authority.
pub fn target(addr: &str, ca: Option<&Path>) -> Result<Target> {
    let (uri, unix) = if let Some(path) = addr.strip_prefix("unix://") {
        if !path.starts_with('/') {
            bail!("`{addr}`: a unix socket needs an absolute path, e.g. unix:///run/provetop/serve.sock");
        }
        // The authority a unix socket's requests carry: serve refuses a path there.
        ("http://localhost".to_string(), Some(PathBuf::from(path)))
    } else {
        let scheme = if ca.is_some() { "https" } else { "http" };
        let rest = addr
            .strip_prefix("http://")
            .or_else(|| addr.strip_prefix("https://"))
            .unwrap_or(addr);
        if addr.starts_with("https://") && ca.is_none() {
            bail!("`{addr}`: TLS needs the server's certificate authority: give --tls-ca PEM");
        }
        let hostport = match rest.parse::<u16>() {
            Ok(port) => format!("127.0.0.1:{port}"),
            Err(_) if rest.contains(':') => rest.to_string(),
            Err(_) => bail!("`{addr}`: expected HOST:PORT, PORT or unix:///PATH"),
        };
        (format!("{scheme}://{hostport}"), None)
    };
    let mut endpoint = Endpoint::from_shared(uri.clone())
        .map_err(|e| anyhow!("`{addr}`: not an address ({e})"))?
        .connect_timeout(Duration::from_secs(5))
        // A server that vanished without closing the connection is noticed within 30 s.
        .http2_keep_alive_interval(Duration::from_secs(10))
        .keep_alive_timeout(Duration::from_secs(20))
        .keep_alive_while_idle(true);
    if let Some(ca) = ca {
        let pem =
            provetop_telemetry::input::read_regular(ca, provetop_telemetry::input::SMALL_FILE)
                .with_context(|| format!("--tls-ca {}", ca.display()))?;
        if !pem.windows(11).any(|w| w == b"-----BEGIN ") {
            bail!("--tls-ca {}: not a PEM file", ca.display());
        }
        let tls = tonic::transport::ClientTlsConfig::new()
            .ca_certificate(tonic::transport::Certificate::from_pem(pem));
        endpoint = endpoint
            .tls_config(tls)
            .map_err(|e| anyhow!("--tls-ca {}: {e}", ca.display()))?;
    }
    Ok(Target { endpoint, unix })
}

impl Target {
    /// A channel that connects on first use and again after a loss.
    pub(crate) fn channel(&self) -> Channel {
        match &self.unix {
            None => self.endpoint.connect_lazy(),
            Some(path) => {
                let path = path.clone();
                self.endpoint
                    .connect_with_connector_lazy(tower::service_fn(move |_| {
                        let path = path.clone();
                        async move {
                            let s = tokio::net::UnixStream::connect(path).await?;
                            Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(s))
                        }
                    }))
            }
        }
    }
}

/// A status in words, with what lies under it (a refused connection, a certificate).
pub fn describe(s: &tonic::Status) -> String {
    let text = chain(s.message().to_string(), std::error::Error::source(s));
    if text.is_empty() {
        return format!("{:?}", s.code());
    }
    text
}

/// `text`, then each cause it does not already say.
pub fn chain(mut text: String, mut source: Option<&(dyn std::error::Error + 'static)>) -> String {
    while let Some(e) = source {
        let t = e.to_string();
        if !text.contains(&t) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&t);
        }
        source = e.source();
    }
    text
}

/// A watch on one server, its runtime and its channels.
pub struct Client {
    rx: mpsc::Receiver<Incoming>,
    actions: mpsc::UnboundedSender<Action>,
    runtime: tokio::runtime::Runtime,
}

/// Who watches and with what token.
#[derive(Clone)]
pub struct Viewer {
    pub name: String,
    pub token: Vec<u8>,
}

impl Client {
    /// Starts watching `target` as `viewer`.
    pub fn start(target: Target, viewer: Viewer) -> Result<Client> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("attach-net")
            .enable_all()
            .build()
            .context("starting the network runtime")?;
        let (tx, rx) = mpsc::channel(AHEAD);
        let (actions, actions_rx) = mpsc::unbounded_channel();
        let channel = {
            let _guard = runtime.enter();
            target.channel()
        };
        runtime.spawn(watch(channel.clone(), viewer.clone(), tx.clone()));
        runtime.spawn(control(channel, viewer, actions_rx, tx));
        Ok(Client {
            rx,
            actions,
            runtime,
        })
    }

    /// The next message, if one is waiting.
    pub fn try_recv(&mut self) -> Option<Incoming> {
        self.rx.try_recv().ok()
    }

    /// The next message, waiting up to `wait`; `None` when none came.
    pub fn recv_timeout(&mut self, wait: Duration) -> Option<Incoming> {
        let rx = &mut self.rx;
        self.runtime
            .block_on(async { tokio::time::timeout(wait, rx.recv()).await.ok().flatten() })
    }

    /// Asks the server for a change; the answer arrives as `Incoming::Reply`.
    pub fn control(&self, action: Action) {
        let _ = self.actions.send(action);
    }
}

/// Watches until whoever reads the messages goes: a new Watch after each loss, with backoff.
async fn watch(channel: Channel, viewer: Viewer, tx: mpsc::Sender<Incoming>) {
    let mut client = TelemetryClient::new(channel).max_decoding_message_size(MAX_MESSAGE);
    let mut session = String::new();
    let mut after_seq = 0;
    let mut backoff = FIRST_BACKOFF;
    let mut connected_once = false;
    loop {
        let req = WatchRequest {
            name: viewer.name.clone(),
            token: viewer.token.clone(),
            session_id: session.clone(),
            after_seq,
        };
        // A status the server sent has no cause under it; a failed connection's has.
        let said = |s: &tonic::Status| (describe(s), std::error::Error::source(s).is_none());
        let (why, answered) = match client.watch(req).await {
            Err(s) => said(&s),
            Ok(resp) => {
                let mut stream = resp.into_inner();
                loop {
                    let m = match stream.message().await {
                        Ok(Some(m)) => m,
                        Ok(None) => break ("the server ended the stream".to_string(), true),
                        Err(s) => break said(&s),
                    };
                    let out = match m.body {
                        Some(Body::Hello(h)) => {
                            connected_once = true;
                            backoff = FIRST_BACKOFF;
                            if h.session_id != session || !h.resumed {
                                after_seq = 0;
                            }
                            session.clone_from(&h.session_id);
                            Incoming::Hello {
                                header: h.header.into(),
                                session_id: h.session_id,
                                control: h.control,
                                note: h.control_note,
                                resumed: h.resumed,
                                now: h.now,
                            }
                        }
                        Some(Body::Frame(f)) => {
                            if f.seq > 0 {
                                after_seq = f.seq;
                            }
                            Incoming::Frame(f.data)
                        }
                        Some(Body::CaughtUp(_)) => Incoming::CaughtUp,
                        None => continue,
                    };
                    if tx.send(out).await.is_err() {
                        return;
                    }
                }
            }
        };
        if !connected_once {
            let _ = tx.send(Incoming::Refused { why, answered }).await;
            return;
        }
        let lost = Incoming::Lost {
            why,
            retry_in: backoff,
        };
        if tx.send(lost).await.is_err() {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(backoff) => {}
            _ = tx.closed() => return,
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Carries out the changes asked for, one at a time, and sends each answer back.
async fn control(
    channel: Channel,
    viewer: Viewer,
    mut actions: mpsc::UnboundedReceiver<Action>,
    tx: mpsc::Sender<Incoming>,
) {
    let mut client = TelemetryClient::new(channel);
    while let Some(action) = actions.recv().await {
        let req = ControlRequest {
            token: viewer.token.clone(),
            name: viewer.name.clone(),
            action: Some(action),
        };
        let reply = match client.control(req).await {
            Ok(r) => {
                let r = r.into_inner();
                Incoming::Reply {
                    text: r.message,
                    error: false,
                    job: r.job,
                }
            }
            Err(s) => Incoming::Reply {
                text: match s.code() {
                    tonic::Code::PermissionDenied => s.message().to_string(),
                    tonic::Code::Unavailable => format!("not sent: {}", describe(&s)),
                    _ => describe(&s),
                },
                error: true,
                job: 0,
            },
        };
        if tx.send(reply).await.is_err() {
            return;
        }
    }
}
