//! One connection to one broker: TCP, optionally TLS, optionally SASL, then any number of
//! requests in flight at once (pipelined, answers matched by correlation id).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, RequestHeader, ResponseHeader, SaslAuthenticateRequest,
    SaslHandshakeRequest,
};
use kafka_protocol::protocol::{Decodable, Encodable, Request, StrBytes};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

use super::config::{Sasl, WireConfig};
use super::sasl::{self, Mechanism, Scram};
use crate::error::{Error, Result};

/// The largest answer we accept (the broker's default socket.request.max.bytes is 100 MiB).
const MAX_FRAME: usize = 256 * 1024 * 1024;

trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}
type BoxStream = Box<dyn Stream>;

type Waiter = oneshot::Sender<std::result::Result<Bytes, String>>;

#[derive(Default)]
struct Pending {
    waiters: HashMap<i32, Waiter>,
    /// Set once the connection is gone: why.
    closed: Option<String>,
}

/// A connected, authenticated broker connection.
pub struct Connection {
    addr: String,
    writer: tokio::sync::Mutex<WriteHalf<BoxStream>>,
    pending: Arc<Mutex<Pending>>,
    next_id: AtomicI32,
    versions: HashMap<i16, (i16, i16)>,
    timeout: Duration,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

fn unreachable(addr: &str, detail: impl std::fmt::Display) -> Error {
    Error::KafkaUnreachable {
        bootstrap: addr.to_string(),
        detail: detail.to_string(),
    }
}

fn protocol_error(op: &'static str, addr: &str, e: impl std::fmt::Display) -> Error {
    Error::kafka(op, format!("broker {addr}: {e}"))
}

/// Encodes a request with its header and length prefix.
fn frame<R: Request>(req: &R, version: i16, correlation_id: i32, key: i16) -> Result<Bytes> {
    let api =
        ApiKey::try_from(key).map_err(|_| Error::Internal(format!("unknown API key {key}")))?;
    let header = RequestHeader::default()
        .with_request_api_key(key)
        .with_request_api_version(version)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_static_str("offset-vault")));
    let mut buf = BytesMut::with_capacity(64);
    buf.put_i32(0);
    header
        .encode(&mut buf, api.request_header_version(version))
        .map_err(|e| Error::Internal(format!("encode {api:?} header: {e}")))?;
    // A request body may be encoded at an older version than the header says when the two
    // versions have the same request layout (see `call_raw`).
    let body_version = version.min(R::VERSIONS.max);
    req.encode(&mut buf, body_version)
        .map_err(|e| Error::Internal(format!("encode {api:?} v{version}: {e}")))?;
    let len = (buf.len() - 4) as i32;
    buf[..4].copy_from_slice(&len.to_be_bytes());
    Ok(buf.freeze())
}

async fn read_frame<S: AsyncRead + Unpin + ?Sized>(stream: &mut S) -> std::io::Result<Bytes> {
    let len = stream.read_i32().await?;
    if len < 0 || len as usize > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("answer of {len} bytes (not a Kafka broker, or a TLS/plaintext mismatch?)"),
        ));
    }
    let mut buf = vec![0u8; len as usize];
    stream.read_exact(&mut buf).await?;
    Ok(Bytes::from(buf))
}

/// Strips the response header (checking the correlation id) and returns the body.
fn body(mut frame: Bytes, key: i16, version: i16, correlation_id: i32) -> Result<Bytes> {
    let api =
        ApiKey::try_from(key).map_err(|_| Error::Internal(format!("unknown API key {key}")))?;
    let header = ResponseHeader::decode(&mut frame, api.response_header_version(version))
        .map_err(|e| Error::kafka("decode", format!("{api:?} header: {e}")))?;
    if header.correlation_id != correlation_id {
        return Err(Error::kafka(
            "decode",
            format!(
                "{api:?}: answer to request {} where {correlation_id} was expected",
                header.correlation_id
            ),
        ));
    }
    Ok(frame)
}

/// One request and its answer on a stream that nothing else reads (the handshake).
async fn exchange<R: Request>(
    stream: &mut BoxStream,
    addr: &str,
    req: &R,
    version: i16,
    correlation_id: i32,
) -> Result<R::Response> {
    let bytes = frame(req, version, correlation_id, R::KEY)?;
    stream
        .write_all(&bytes)
        .await
        .map_err(|e| unreachable(addr, format!("write: {e}")))?;
    let answer = read_frame(stream)
        .await
        .map_err(|e| unreachable(addr, format!("read: {e}")))?;
    let mut b = body(answer, R::KEY, version, correlation_id)?;
    R::Response::decode(&mut b, version).map_err(|e| protocol_error("decode", addr, e))
}

async fn tls_wrap(stream: TcpStream, addr: &str, tls: &super::config::Tls) -> Result<BoxStream> {
    let connector = super::tls::connector(tls)?;
    let host = addr.rsplit_once(':').map(|(h, _)| h).unwrap_or(addr);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let name = rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|e| Error::usage(format!("TLS: {host} is not a valid server name: {e}")))?;
    let s = connector
        .connect(name, stream)
        .await
        .map_err(|e| unreachable(addr, format!("TLS handshake failed: {e}")))?;
    Ok(Box::new(s))
}

async fn authenticate(
    stream: &mut BoxStream,
    addr: &str,
    sasl: &Sasl,
    next: &mut i32,
) -> Result<()> {
    let denied = |detail: String| {
        Error::AccessDenied {
        service: "Kafka",
        resource: addr.to_string(),
        detail: format!("SASL {}: {detail}", sasl.mechanism.name()),
        advice: "Check sasl.username/sasl.password (or sasl.jaas.config) and sasl.mechanism against the broker's listener",
    }
    };
    let hs = SaslHandshakeRequest::default()
        .with_mechanism(StrBytes::from_string(sasl.mechanism.name().into()));
    *next += 1;
    let answer = exchange(stream, addr, &hs, 1, *next).await?;
    if answer.error_code != 0 {
        let offered: Vec<&str> = answer.mechanisms.iter().map(|m| m.as_str()).collect();
        return Err(denied(format!(
            "the listener does not offer it (it offers {})",
            offered.join(", ")
        )));
    }
    match sasl.mechanism {
        Mechanism::Plain => {
            sasl_step(
                stream,
                addr,
                next,
                sasl::plain_message(&sasl.username, &sasl.password),
                &denied,
            )
            .await?;
        }
        Mechanism::ScramSha256 | Mechanism::ScramSha512 => {
            let nonce = sasl::new_nonce();
            let (mut scram, first) =
                Scram::start(sasl.mechanism, &sasl.username, &sasl.password, &nonce);
            let server_first = sasl_step(stream, addr, next, first, &denied).await?;
            let fin = scram.client_final(&server_first).map_err(denied)?;
            let server_final = sasl_step(stream, addr, next, fin, &denied).await?;
            scram.verify_server(&server_final).map_err(denied)?;
        }
    }
    Ok(())
}

/// One SaslAuthenticate round trip; returns the server's bytes.
async fn sasl_step(
    stream: &mut BoxStream,
    addr: &str,
    next: &mut i32,
    bytes: Vec<u8>,
    denied: &(dyn Fn(String) -> Error + Sync),
) -> Result<Bytes> {
    *next += 1;
    let req = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(bytes));
    let a = exchange(stream, addr, &req, 1, *next).await?;
    if a.error_code != 0 {
        let msg = a.error_message.map(|m| m.to_string()).unwrap_or_default();
        return Err(denied(format!("authentication failed: {msg}")));
    }
    Ok(a.auth_bytes)
}

async fn read_loop(mut reader: ReadHalf<BoxStream>, pending: Arc<Mutex<Pending>>) {
    let why = loop {
        match read_frame(&mut reader).await {
            Ok(frame) => {
                if frame.len() < 4 {
                    break "an answer shorter than its header".to_string();
                }
                let id = (&frame[..4]).get_i32();
                let waiter = pending.lock().ok().and_then(|mut p| p.waiters.remove(&id));
                if let Some(w) = waiter {
                    let _ = w.send(Ok(frame));
                }
            }
            Err(e) => break format!("connection closed: {e}"),
        }
    };
    if let Ok(mut p) = pending.lock() {
        p.closed = Some(why.clone());
        for (_, w) in p.waiters.drain() {
            let _ = w.send(Err(why.clone()));
        }
    }
}

impl Connection {
    /// Connects, negotiates API versions and authenticates.
    pub async fn open(addr: &str, config: &WireConfig) -> Result<Connection> {
        let timeout = config.timeout;
        let connect = async {
            let tcp = TcpStream::connect(addr)
                .await
                .map_err(|e| unreachable(addr, format!("connect: {e}")))?;
            let _ = tcp.set_nodelay(true);
            let mut stream: BoxStream = match &config.tls {
                Some(tls) => tls_wrap(tcp, addr, tls).await?,
                None => Box::new(tcp),
            };
            let mut next = 0;
            let versions =
                exchange(&mut stream, addr, &ApiVersionsRequest::default(), 0, next).await?;
            if versions.error_code != 0 {
                return Err(protocol_error(
                    "ApiVersions",
                    addr,
                    format!("error code {}", versions.error_code),
                ));
            }
            let versions: HashMap<i16, (i16, i16)> = versions
                .api_keys
                .iter()
                .map(|k| (k.api_key, (k.min_version, k.max_version)))
                .collect();
            if let Some(sasl) = &config.sasl {
                authenticate(&mut stream, addr, sasl, &mut next).await?;
            }
            Ok::<_, Error>((stream, versions, next + 1))
        };
        let (stream, versions, next) = tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| Error::Timeout {
                service: "Kafka",
                op: format!("connect to {addr}"),
                after: timeout,
                detail: "no answer to the connection handshake (is this a TLS listener, or a plaintext one?)".into(),
            })??;
        let (reader, writer) = tokio::io::split(stream);
        let pending = Arc::new(Mutex::new(Pending::default()));
        let reader = tokio::spawn(read_loop(reader, pending.clone()));
        Ok(Connection {
            addr: addr.to_string(),
            writer: tokio::sync::Mutex::new(writer),
            pending,
            next_id: AtomicI32::new(next),
            versions,
            timeout,
            reader,
        })
    }

    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// Whether the connection is gone (the broker closed it, or it failed).
    pub fn is_closed(&self) -> bool {
        self.pending.lock().map_or(true, |p| p.closed.is_some())
    }

    /// The highest version both sides speak, within `[min, max]`; `None` if there is none.
    pub fn version(&self, key: i16, min: i16, max: i16) -> Option<i16> {
        let (lo, hi) = *self.versions.get(&key)?;
        let v = hi.min(max);
        (v >= lo.max(min)).then_some(v)
    }

    /// Like [`Self::version`], with an error that names the API when there is no common version.
    pub fn require_version(&self, key: i16, min: i16, max: i16, what: &str) -> Result<i16> {
        self.version(key, min, max).ok_or_else(|| {
            let api = ApiKey::try_from(key)
                .map(|a| format!("{a:?}"))
                .unwrap_or(key.to_string());
            let has = self
                .versions
                .get(&key)
                .map(|(lo, hi)| format!("versions {lo}..={hi}"))
                .unwrap_or_else(|| "no version".into());
            Error::kafka(
                "ApiVersions",
                format!(
                    "broker {} supports {has} of {api}, {what} needs {min}..={max}",
                    self.addr
                ),
            )
        })
    }

    /// Sends a request and waits for its answer's body (header removed).
    pub async fn call_raw<R: Request>(&self, req: &R, version: i16) -> Result<Bytes> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let bytes = frame(req, version, id, R::KEY)?;
        let (tx, rx) = oneshot::channel();
        {
            let mut p = self
                .pending
                .lock()
                .map_err(|_| Error::Internal("connection state poisoned".into()))?;
            if let Some(why) = &p.closed {
                return Err(unreachable(&self.addr, why));
            }
            p.waiters.insert(id, tx);
        }
        let send = async {
            let mut w = self.writer.lock().await;
            w.write_all(&bytes).await?;
            w.flush().await
        };
        let api = ApiKey::try_from(R::KEY)
            .map(|a| format!("{a:?}"))
            .unwrap_or_default();
        let answer = async {
            send.await
                .map_err(|e| unreachable(&self.addr, format!("write {api}: {e}")))?;
            match rx.await {
                Ok(Ok(frame)) => Ok(frame),
                Ok(Err(why)) => Err(unreachable(&self.addr, why)),
                Err(_) => Err(unreachable(&self.addr, "connection dropped")),
            }
        };
        let frame = match tokio::time::timeout(self.timeout, answer).await {
            Ok(r) => r,
            Err(_) => {
                if let Ok(mut p) = self.pending.lock() {
                    p.waiters.remove(&id);
                }
                Err(Error::Timeout {
                    service: "Kafka",
                    op: format!("{api} to {}", self.addr),
                    after: self.timeout,
                    detail: "no answer".into(),
                })
            }
        }?;
        body(frame, R::KEY, version, id)
    }

    /// Sends a request and decodes its answer.
    pub async fn call<R: Request>(&self, req: &R, version: i16) -> Result<R::Response> {
        let mut b = self.call_raw(req, version).await?;
        R::Response::decode(&mut b, version).map_err(|e| protocol_error("decode", &self.addr, e))
    }
}
