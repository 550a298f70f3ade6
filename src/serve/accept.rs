//! The accept loop in front of tonic's server. tonic ends its server on the first accept error
//! it does not know (EMFILE when descriptors run out), so this loop takes every error itself:
//! logged once a burst, retried with a growing pause, never passed on. Connections are bounded
//! below the descriptor limit (a client past the bound waits in the listen backlog), and one
//! that sends nothing for `idle` is closed, so clients that connect and stay silent cannot hold
//! the slots for ever.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tonic::transport::server::Connected;

/// Descriptors kept for everything but client connections: files, the engine, the runtime.
const RESERVED_FDS: u64 = 128;
/// Connections at most, whatever the descriptor limit allows.
const MAX_CONNECTIONS: usize = 16 << 10;
/// Connections at least, even under a tiny descriptor limit.
const MIN_CONNECTIONS: usize = 8;

/// The accept loop's bounds.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections open at once.
    pub connections: usize,
    /// A connection that sends nothing this long is closed. The server pings every client
    /// more often than this (HTTP/2 keepalive), so a live client always has something to send.
    pub idle: Duration,
    /// The first and the longest pause after an accept error.
    pub backoff: (Duration, Duration),
}

impl Limits {
    /// The bounds for this process: connections under its soft `RLIMIT_NOFILE`.
    pub fn for_process() -> Limits {
        Limits {
            connections: connections_for(nofile_limit()),
            idle: Duration::from_secs(120),
            backoff: (Duration::from_millis(5), Duration::from_secs(1)),
        }
    }
}

/// The soft descriptor limit (`ulimit -n`, systemd's `LimitNOFILE`).
fn nofile_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    match unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } {
        0 => r.rlim_cur,
        _ => 1024,
    }
}

/// Connections a descriptor limit leaves room for.
fn connections_for(nofile: u64) -> usize {
    let room = usize::try_from(nofile.saturating_sub(RESERVED_FDS)).unwrap_or(usize::MAX);
    room.clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
}

/// A listener the loop accepts from.
pub trait Accept: Send + Sync + 'static {
    /// A connection.
    type Io: AsyncRead + AsyncWrite + Connected + Unpin + Send + 'static;
    /// The next connection.
    fn accept(&self) -> impl Future<Output = io::Result<Self::Io>> + Send;
}

impl Accept for tokio::net::TcpListener {
    type Io = tokio::net::TcpStream;
    async fn accept(&self) -> io::Result<Self::Io> {
        let (s, _) = tokio::net::TcpListener::accept(self).await?;
        // As tonic's own incoming does: small gRPC messages are not held back.
        let _ = s.set_nodelay(true);
        Ok(s)
    }
}

impl Accept for tokio::net::UnixListener {
    type Io = tokio::net::UnixStream;
    async fn accept(&self) -> io::Result<Self::Io> {
        Ok(tokio::net::UnixListener::accept(self).await?.0)
    }
}

/// The connections of `listener` for tonic's `serve_with_incoming`; the loop ends when the
/// server drops the stream.
pub fn incoming<L: Accept>(
    listener: L,
    limits: Limits,
) -> tokio_stream::wrappers::ReceiverStream<io::Result<Conn<L::Io>>> {
    let (tx, rx) = mpsc::channel(1);
    tokio::spawn(accept_loop(listener, limits, tx));
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

/// Errors that are one client's (it left before it was accepted): no pause, no log.
fn one_clients(e: &io::Error) -> bool {
    use io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    )
}

async fn accept_loop<L: Accept>(
    listener: L,
    limits: Limits,
    tx: mpsc::Sender<io::Result<Conn<L::Io>>>,
) {
    let slots = Arc::new(Semaphore::new(limits.connections));
    let (mut pause, mut failed, mut full) = (limits.backoff.0, 0u64, false);
    loop {
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(_) => {
                if !full {
                    full = true;
                    tracing::warn!(
                        "serve: {} connections open, the most this server takes (its \
                         descriptor limit); new clients wait until one closes",
                        limits.connections
                    );
                }
                tokio::select! {
                    p = slots.clone().acquire_owned() => match p {
                        Ok(p) => p,
                        Err(_) => return,
                    },
                    _ = tx.closed() => return,
                }
            }
        };
        let accepted = tokio::select! {
            r = listener.accept() => r,
            _ = tx.closed() => return,
        };
        match accepted {
            Ok(io) => {
                if failed > 0 {
                    tracing::warn!("serve: accepting again after {failed} failed accept(s)");
                }
                (pause, failed) = (limits.backoff.0, 0);
                full = slots.available_permits() == 0;
                if tx
                    .send(Ok(Conn::new(io, permit, limits.idle)))
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Err(e) if one_clients(&e) => {}
            Err(e) => {
                // Once a burst: the first error, then the count when accepting works again.
                if failed == 0 {
                    tracing::warn!(
                        "serve: accepting a connection failed: {e}; retrying (with pauses up \
                         to {:?}) until it works",
                        limits.backoff.1
                    );
                }
                failed += 1;
                drop(permit);
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = tx.closed() => return,
                }
                pause = (pause * 2).min(limits.backoff.1);
            }
        }
    }
}

/// A connection holding its slot, closed when it has sent nothing for `idle`.
pub struct Conn<S> {
    inner: S,
    _slot: OwnedSemaphorePermit,
    idle: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl<S> Conn<S> {
    fn new(inner: S, slot: OwnedSemaphorePermit, idle: Duration) -> Conn<S> {
        Conn {
            inner,
            _slot: slot,
            idle,
            deadline: Box::pin(tokio::time::sleep(idle)),
        }
    }
}

impl<S: Connected> Connected for Conn<S> {
    type ConnectInfo = S::ConnectInfo;
    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Conn<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() > before {
                    let next = tokio::time::Instant::now() + self.idle;
                    self.deadline.as_mut().reset(next);
                }
                Poll::Ready(r)
            }
            // Polled with the same waker: the task wakes when the deadline passes.
            Poll::Pending => match self.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client sent nothing for too long",
                ))),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Conn<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;
    use std::collections::VecDeque;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_stream::StreamExt;

    /// A listener that fails as scripted, then hands out loopback connections.
    struct Scripted {
        errors: Mutex<VecDeque<io::Error>>,
        real: tokio::net::TcpListener,
    }

    impl Accept for Scripted {
        type Io = tokio::net::TcpStream;
        async fn accept(&self) -> io::Result<Self::Io> {
            let next = self.errors.lock().pop_front();
            match next {
                Some(e) => Err(e),
                None => Accept::accept(&self.real).await,
            }
        }
    }

    fn limits(connections: usize, idle_ms: u64) -> Limits {
        Limits {
            connections,
            idle: Duration::from_millis(idle_ms),
            backoff: (Duration::from_millis(1), Duration::from_millis(20)),
        }
    }

    #[tokio::test]
    async fn descriptors_running_out_pause_the_loop_and_never_end_it() {
        let real = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = real.local_addr().unwrap();
        let emfile = || io::Error::from_raw_os_error(libc::EMFILE);
        let errors = (0..50).map(|_| emfile()).collect();
        let l = Scripted {
            errors: Mutex::new(errors),
            real,
        };
        let mut conns = incoming(l, limits(4, 10_000));
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let first = tokio::time::timeout(Duration::from_secs(10), conns.next())
            .await
            .expect("accepted after the errors")
            .expect("the stream goes on");
        assert!(first.is_ok());
    }

    #[tokio::test]
    async fn connections_are_bounded_and_a_silent_one_is_closed() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let mut conns = incoming(l, limits(2, 300));
        let mut clients = vec![];
        for _ in 0..3 {
            clients.push(tokio::net::TcpStream::connect(addr).await.unwrap());
        }
        let mut held = vec![];
        for _ in 0..2 {
            held.push(conns.next().await.unwrap().unwrap());
        }
        let accepted = std::time::Instant::now();
        // The third waits while two are open.
        let third = tokio::time::timeout(Duration::from_millis(200), conns.next()).await;
        assert!(third.is_err(), "a third connection past the bound of 2");
        // A silent client's connection fails its read after `idle`; one that writes does not.
        clients[0].write_all(b"x").await.unwrap();
        let mut buf = [0u8; 8];
        let n = held[0].read(&mut buf).await.unwrap();
        assert_eq!(n, 1);
        let e = held[1].read(&mut buf).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::TimedOut);
        // Not before `idle` (300 ms) from its accepting.
        assert!(accepted.elapsed() >= Duration::from_millis(250));
        // Its slot freed, the third is accepted.
        drop(held.remove(1));
        let third = tokio::time::timeout(Duration::from_secs(5), conns.next()).await;
        assert!(matches!(third, Ok(Some(Ok(_)))));
    }

    #[test]
    fn the_bound_follows_the_descriptor_limit() {
        assert_eq!(connections_for(1024), 1024 - RESERVED_FDS as usize);
        assert_eq!(connections_for(64), MIN_CONNECTIONS);
        assert_eq!(connections_for(u64::MAX), MAX_CONNECTIONS);
        assert!(Limits::for_process().connections >= MIN_CONNECTIONS);
    }
}
